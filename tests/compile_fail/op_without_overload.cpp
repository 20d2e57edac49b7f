// Every covered point needs an overload of the op.
// expect: dispatch_table: the op has no overload for a covered point
#include <switchyard/core.h>
using namespace switchyard;
struct f32_only {
    template <typename Tag>
    requires with_value<Tag, dtype::f32>
    static void op(Tag) {}
    using space = axes<axis<dtype::f16, dtype::f32>>;
    using subspaces = coverage<space>;
    using dispatcher = dispatch_table<space, void()>;
};
auto const table = dispatch_table_from_op<f32_only>("f32_only");
