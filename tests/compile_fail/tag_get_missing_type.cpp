// expect: tag_get<T>(tag): the tag has no value of type T
#include <switchyard/core.h>
using namespace switchyard;
constexpr auto d = tag_get<dtype>(tag<device_kind::cpu>{});
