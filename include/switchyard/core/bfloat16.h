// switchyard::bfloat16: a minimal bfloat16 storage type (the upper 16 bits of
// an IEEE-754 float). It only stores the bits and converts to and from float
// (round-to-nearest-even); arithmetic and comparison happen in float.
#pragma once

#include <cstdint>

#include "switchyard/core/bits.h"
#include "switchyard/core/config.h"

namespace switchyard {

namespace detail {

// float -> bfloat16 bits, round-to-nearest-even, integer-only (independent of
// the floating-point environment). Adding 0x7FFF plus the kept lsb rounds
// the dropped 16 bits; a carry moves into the exponent, so the largest finite
// values correctly round up to infinity and infinity stays infinity.
SWITCHYARD_HOST_DEVICE constexpr std::uint16_t float_to_bfloat16_bits(float f) noexcept {
    const std::uint32_t x = bit_cast<std::uint32_t>(f);
    const std::uint32_t rounded = (x + 0x7FFFu + ((x >> 16) & 1u)) >> 16;
    // NaN must not be rounded: its payload could carry into the sign or clear
    // to infinity. Truncate it and set the quiet bit instead.
    const std::uint32_t nan = (x >> 16) | 0x0040u;
    const bool is_nan = (x & 0x7FFFFFFFu) > 0x7F800000u;
    return static_cast<std::uint16_t>(is_nan ? nan : rounded);
}

// bfloat16 bits -> float: exact, every pattern (NaN payloads included) maps to
// the float with the same upper 16 bits.
SWITCHYARD_HOST_DEVICE constexpr float bfloat16_bits_to_float(std::uint16_t b) noexcept {
    return bit_cast<float>(static_cast<std::uint32_t>(b) << 16);
}

}  // namespace detail

struct bfloat16 {
    std::uint16_t bits;

    bfloat16() = default;  // trivial: a storage type, like the built-in scalars

    SWITCHYARD_HOST_DEVICE constexpr explicit bfloat16(float f) noexcept : bits(from_float(f)) {}

    // Deleted rather than omitted: double -> float -> bfloat16 rounds twice and
    // can differ from rounding the double directly; without this overload a
    // double argument would silently take that path. Convert to float
    // explicitly if that is acceptable.
    explicit bfloat16(double) = delete;

    SWITCHYARD_HOST_DEVICE constexpr operator float() const noexcept { return detail::bfloat16_bits_to_float(bits); }

    SWITCHYARD_HOST_DEVICE static constexpr std::uint16_t from_float(float f) noexcept {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
        // The GPU's rounding instruction (sm_80 and newer): same results but
        // for NaN payloads, in one instruction instead of six.
        if (!__builtin_is_constant_evaluated()) {
            unsigned short b;
            asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(b) : "f"(f));
            return b;
        }
#endif
        return detail::float_to_bfloat16_bits(f);
    }

    SWITCHYARD_HOST_DEVICE static constexpr bfloat16 from_bits(std::uint16_t b) noexcept {
        bfloat16 v;
        v.bits = b;
        return v;
    }
};

}  // namespace switchyard
