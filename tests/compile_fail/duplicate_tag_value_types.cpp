// A tag holds one value per type: two dtypes need a named axis.
// expect: tag<...>: two values have the same type
#include <switchyard/core.h>
using namespace switchyard;
tag<dtype::f32, device_kind::cpu, dtype::f16> t;
