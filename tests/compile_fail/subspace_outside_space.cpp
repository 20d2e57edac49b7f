// A coverage entry may only name values of the table's space.
// expect: coverage<...>: a subspace or point names a value outside the table's space
#include <switchyard/core.h>
using namespace switchyard;
using space = axes<axis<device_kind::cpu, device_kind::cuda>, axis<dtype::f32>>;
dispatch_table<space, void()> const table("t", coverage<axes<axis<device_kind::webgpu>, axis<dtype::f32>>>{},
                                          [](auto) {});
