// A coordinate whose type is not an axis of the table is a mistake, not ignored.
// expect: dispatch_table::select: the dispatch_set has a value whose type is not an axis
#include <switchyard/core.h>
using namespace switchyard;
using space = axes<axis<device_kind::cpu>, axis<dtype::f32>>;
void f(dispatch_table<space, void()> const& table) {
    table.select(dispatch_set{dtype::f32, device_kind::cpu, contiguity::strided});
}
