// expect: axis<...>: a value appears twice
#include <switchyard/core.h>
using namespace switchyard;
using a = axis<dtype::f32, dtype::f16, dtype::f32>;
constexpr auto n = a::size;
