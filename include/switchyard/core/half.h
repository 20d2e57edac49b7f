// switchyard::half: a minimal IEEE-754 binary16 storage type. It only stores
// the 16 bits and converts to and from float (round-to-nearest-even); any
// arithmetic or comparison is meant to happen in float. On the host the
// conversions are integer code (independent of the floating-point
// environment, vectorizable); in CUDA device code they are the hardware's
// cvt instructions.
#pragma once

#include <cstdint>

#include "switchyard/core/bits.h"
#include "switchyard/core/config.h"

namespace switchyard {

namespace detail {

// float -> binary16 bits, round-to-nearest-even. Integer-only, so the result
// does not depend on the floating-point environment (rounding mode, FTZ/DAZ).
// All three paths are computed and then selected, so the function has no
// data-dependent branches and can be if-converted in vectorized loops.
SWITCHYARD_HOST_DEVICE constexpr std::uint16_t float_to_half_bits(float f) noexcept {
    const std::uint32_t x = bit_cast<std::uint32_t>(f);
    const std::uint32_t sign = (x >> 16) & 0x8000u;
    const std::uint32_t a = x & 0x7FFFFFFFu;  // |f| as bits; ordered like |f|

    // Normal result (|f| >= 2^-14): rebias the exponent (127 -> 15), then round
    // away the low 13 mantissa bits with RNE. A mantissa carry propagates into
    // the exponent, which is exactly the right next value. Wraps harmlessly
    // when |f| is small; that result is not selected then.
    const std::uint32_t rebased = a - (std::uint32_t{127 - 15} << 23);
    const std::uint32_t normal = (rebased + 0x0FFFu + ((rebased >> 13) & 1u)) >> 13;

    // Subnormal result (|f| < 2^-14): the half mantissa is |f| / 2^-24, i.e.
    // the 24-bit float significand shifted right by (126 - exponent), rounded
    // to nearest even. Rounding up from the largest subnormal yields 0x0400,
    // the smallest normal, which is the correct encoding. Shifts past 31 all
    // give 0, so the shift is clamped to keep it defined.
    const int exponent = static_cast<int>(a >> 23);
    int shift = 126 - exponent;
    shift = shift < 1 ? 1 : (shift > 31 ? 31 : shift);
    const std::uint32_t significand = (a & 0x007FFFFFu) | 0x00800000u;
    const std::uint32_t half_ulp = std::uint32_t{1} << (shift - 1);
    const std::uint32_t subnormal = (significand + (half_ulp - 1u) + ((significand >> shift) & 1u)) >> shift;

    // NaN keeps its sign and the top payload bits, and gets the quiet bit so a
    // payload living only in the low float bits cannot turn into infinity.
    const std::uint32_t nan = 0x7E00u | ((a >> 13) & 0x03FFu);

    std::uint32_t result = a < 0x38800000u ? subnormal : normal;  // 2^-14
    result = a >= 0x477FF000u ? 0x7C00u : result;                 // >= 65520 (or inf) -> inf
    result = a > 0x7F800000u ? nan : result;
    return static_cast<std::uint16_t>(sign | result);
}

// binary16 bits -> float. Exact for every non-NaN value; NaNs are returned
// quiet (as hardware conversions do) with sign and payload kept. Integer-only
// like the other direction: a float operation here (even an exact one) would
// keep GCC from if-converting and vectorizing loops under -ftrapping-math.
SWITCHYARD_HOST_DEVICE constexpr float half_bits_to_float(std::uint16_t h) noexcept {
    const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
    const std::uint32_t exponent = (h >> 10) & 0x1Fu;
    const std::uint32_t mantissa = h & 0x03FFu;

    const std::uint32_t normal = ((exponent + (127 - 15)) << 23) | (mantissa << 13);
    const std::uint32_t special = 0x7F800000u | (mantissa << 13) | (mantissa != 0 ? 0x00400000u : 0u);

    // Subnormal mantissa * 2^-24 is a normal float: shift the leading one up to
    // bit 10 (the implicit bit) by bisection, lowering the exponent by the same
    // amount. Written with selects rather than a count-leading-zeros builtin so
    // it stays portable to device code and vectorizes. Zero is selected apart.
    std::uint32_t m = mantissa;
    std::uint32_t shift = 0;
    const std::uint32_t step8 = m < (1u << 3) ? 8u : 0u;
    m <<= step8;
    shift += step8;
    const std::uint32_t step4 = m < (1u << 7) ? 4u : 0u;
    m <<= step4;
    shift += step4;
    const std::uint32_t step2 = m < (1u << 9) ? 2u : 0u;
    m <<= step2;
    shift += step2;
    const std::uint32_t step1 = m < (1u << 10) ? 1u : 0u;
    m <<= step1;
    shift += step1;
    const std::uint32_t subnormal = mantissa == 0 ? 0u : (((127 - 14) - shift) << 23) | ((m & 0x03FFu) << 13);

    std::uint32_t result = exponent == 0 ? subnormal : normal;
    result = exponent == 0x1Fu ? special : result;
    return bit_cast<float>(sign | result);
}

}  // namespace detail

struct half {
    std::uint16_t bits;

    half() = default;  // trivial: a storage type, like the built-in scalars

    SWITCHYARD_HOST_DEVICE constexpr explicit half(float f) noexcept : bits(from_float(f)) {}

    // Deleted rather than omitted: double -> float -> half rounds twice and can
    // differ from rounding the double directly, and without this overload a
    // double argument would silently take that path. Convert to float
    // explicitly if that is acceptable. (Integer arguments are then ambiguous
    // too, which is intended: spell the float.)
    explicit half(double) = delete;

    SWITCHYARD_HOST_DEVICE constexpr operator float() const noexcept {
#if defined(__CUDA_ARCH__)
        // The GPU's conversion instructions: the integer code costs a 2-byte
        // kernel most of its bandwidth. Same results but for NaN payloads.
        if (!__builtin_is_constant_evaluated()) {
            float f;
            asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(bits));
            return f;
        }
#endif
        return detail::half_bits_to_float(bits);
    }

    SWITCHYARD_HOST_DEVICE static constexpr std::uint16_t from_float(float f) noexcept {
#if defined(__CUDA_ARCH__)
        if (!__builtin_is_constant_evaluated()) {
            unsigned short h;
            asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f));
            return h;
        }
#endif
        return detail::float_to_half_bits(f);
    }

    SWITCHYARD_HOST_DEVICE static constexpr half from_bits(std::uint16_t b) noexcept {
        half h;
        h.bits = b;
        return h;
    }
};

}  // namespace switchyard
