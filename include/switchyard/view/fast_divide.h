// fast_divider: division of non-negative int64 values by a divisor fixed at
// construction, with one high multiply, an add and a shift instead of a
// hardware divide (tens of cycles). Strided views use it to turn a flat index
// into per-dimension indices.
//
// Method (Granlund and Montgomery): with l = ceil(log2 d) and
// m = floor(2^64 (2^l - d) / d) + 1, floor(n / d) = (mulhi(m, n) + n) >> l
// for 0 <= n < 2^63; the sum cannot overflow because mulhi(m, n) <= n.
#pragma once

#include <cstdint>

#include "switchyard/core/config.h"

namespace switchyard {

class fast_divider {
public:
    fast_divider() = default;
    // Host only (uses 128-bit arithmetic); divisor >= 1.
    explicit fast_divider(std::int64_t divisor) : divisor_(divisor) {
        auto const d = static_cast<std::uint64_t>(divisor);
        std::uint32_t l = 0;
        while (l < 63 && (std::uint64_t{1} << l) < d) ++l;
        shift_ = l;
        unsigned __int128 const numerator = static_cast<unsigned __int128>((std::uint64_t{1} << l) - d) << 64;
        magic_ = static_cast<std::uint64_t>(numerator / d) + 1;
    }

    SWITCHYARD_HOST_DEVICE std::int64_t divisor() const noexcept { return divisor_; }

    // n / divisor for 0 <= n < 2^63.
    SWITCHYARD_HOST_DEVICE SWITCHYARD_INLINE std::int64_t divide(std::int64_t n) const noexcept {
        auto const u = static_cast<std::uint64_t>(n);
#if defined(__CUDA_ARCH__)
        std::uint64_t const high = __umul64hi(magic_, u);
#else
        auto const high = static_cast<std::uint64_t>((static_cast<unsigned __int128>(magic_) * u) >> 64);
#endif
        return static_cast<std::int64_t>((high + u) >> shift_);
    }

private:
    std::uint64_t magic_ = 1;
    std::uint32_t shift_ = 0;
    std::int64_t divisor_ = 1;
};

}  // namespace switchyard
