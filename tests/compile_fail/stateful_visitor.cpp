// A table stores function pointers, so a visitor's state would be lost.
// expect: dispatch_table: the visitor must be stateless
#include <switchyard/core.h>
using namespace switchyard;
using space = axes<axis<dtype::f32>>;
int scale = 2;
dispatch_table<space, int(int)> const table("t", coverage<space>{}, [s = scale](auto, int x) { return s * x; });
