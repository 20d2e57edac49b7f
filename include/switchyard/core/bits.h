// switchyard::detail::bit_cast: a constexpr, host/device bit reinterpretation
// shared by the scalar storage types. It wraps __builtin_bit_cast directly
// because <bit> is not usable in CUDA device code and memcpy is not constexpr.
#pragma once

#include "switchyard/core/config.h"

namespace switchyard::detail {

template <class To, class From>
SWITCHYARD_HOST_DEVICE constexpr To bit_cast(const From& from) noexcept {
    static_assert(sizeof(To) == sizeof(From), "bit_cast requires equal sizes");
    return __builtin_bit_cast(To, from);
}

}  // namespace switchyard::detail
