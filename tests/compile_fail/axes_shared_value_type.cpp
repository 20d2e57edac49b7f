// Two axes of one value type need a named axis for the second.
// expect: axes<...>: two axes have the same value type
#include <switchyard/core.h>
using namespace switchyard;
using s = axes<axis<dtype::f32>, axis<dtype::f16>>;
constexpr auto n = s::size;
