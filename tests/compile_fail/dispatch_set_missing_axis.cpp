// select needs one coordinate per axis of the table.
// expect: dispatch_table::select: the dispatch_set is missing a value for an axis
#include <switchyard/core.h>
using namespace switchyard;
using space = axes<axis<device_kind::cpu>, axis<dtype::f32>>;
void f(dispatch_table<space, void()> const& table) { table.select(dispatch_set{dtype::f32}); }
