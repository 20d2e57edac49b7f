// Block conversion between storage and compute types for the CPU's
// elementwise runner (device/cpu/transform.h): load n elements at a stride
// into a compute-type buffer, store a buffer back.
//
// f16 and bf16 are converted from their bits with switchyard's own integer
// conversions (core/half.h, core/bfloat16.h), whatever the storage type
// (switchyard::half, c10::Half, ...), so the loops vectorize. Contiguous f16
// blocks use the CPU's F16C instructions where it has them (vcvtph2ps and
// vcvtps2ph, 8 values an instruction), chosen once at run time: g++ does not
// vectorize the integer conversion inside target_clones, and even vectorized
// it costs several times F16C. The rows built for x86-64-v3 and v4 convert
// bf16 with intrinsics of the same rounding (bf16_store16_v3/_v4).
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "switchyard/core/bfloat16.h"
#include "switchyard/core/config.h"
#include "switchyard/core/dtype.h"
#include "switchyard/core/half.h"
#include "switchyard/device/cpu/isa.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__)) && !defined(__CUDACC__)
#include <cpuid.h>
#include <immintrin.h>
#define SWITCHYARD_HAS_F16C_PATH 1
#endif

namespace switchyard::detail {

using f16_load_fn = void (*)(std::uint16_t const*, float*, std::int64_t);
using f16_store_fn = void (*)(float const*, std::uint16_t*, std::int64_t);

inline void f16_load_portable(std::uint16_t const* src, float* dst, std::int64_t n) {
    for (std::int64_t j = 0; j < n; ++j) dst[j] = half_bits_to_float(src[j]);
}
inline void f16_store_portable(float const* src, std::uint16_t* dst, std::int64_t n) {
    for (std::int64_t j = 0; j < n; ++j) dst[j] = float_to_half_bits(src[j]);
}

#if defined(SWITCHYARD_HAS_F16C_PATH)
// Both round to nearest even and give the integer conversions' results for
// every input but NaN payloads (F16C keeps more payload bits; NaN stays NaN).
__attribute__((target("avx,f16c"))) inline void f16_load_f16c(std::uint16_t const* src, float* dst, std::int64_t n) {
    std::int64_t j = 0;
    for (; j + 8 <= n; j += 8)
        _mm256_storeu_ps(dst + j, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<__m128i const*>(src + j))));
    for (; j < n; ++j) dst[j] = _cvtsh_ss(src[j]);
}
__attribute__((target("avx,f16c"))) inline void f16_store_f16c(float const* src, std::uint16_t* dst, std::int64_t n) {
    std::int64_t j = 0;
    for (; j + 8 <= n; j += 8)
        _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + j),
                         _mm256_cvtps_ph(_mm256_loadu_ps(src + j), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
    for (; j < n; ++j) dst[j] = _cvtss_sh(src[j], _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
}
// Sixteen values at once (one 64-byte vector of floats), for the fused
// rows of device/cpu/transform.h. always_inline with F16C's target: callable
// only from functions built for F16C, which the per-level wrappers below
// are.
[[gnu::always_inline, gnu::target("avx,f16c")]] inline void f16c_load16(std::uint16_t const* src, float* dst) {
    for (int j = 0; j < 16; j += 8)
        _mm256_storeu_ps(dst + j, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<__m128i const*>(src + j))));
}
[[gnu::always_inline, gnu::target("avx,f16c")]] inline void f16c_store16(float const* src, std::uint16_t* dst) {
    for (int j = 0; j < 16; j += 8)
        _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + j),
                         _mm256_cvtps_ph(_mm256_loadu_ps(src + j), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
}
#endif

// Whether every function may call F16C directly: a build for a CPU that has
// it (-mf16c, -march=native).
#if defined(SWITCHYARD_HAS_F16C_PATH) && defined(__F16C__) && !defined(SWITCHYARD_NO_F16C)
inline constexpr bool f16c_everywhere = true;
#else
inline constexpr bool f16c_everywhere = false;
#endif

// The same, once per CPU level of device/cpu/isa.h. g++ inlines a function
// into one built for another -march only if it is always_inline, and an
// always_inline F16C function cannot be called from level-neutral code; these
// wrappers are built for their level, so the row built for that level
// inlines them.
#if defined(SWITCHYARD_CPU_ISA_VARIANTS) && !defined(SWITCHYARD_NO_F16C)
[[gnu::target("arch=x86-64-v3")]] inline void f16_load16_v3(std::uint16_t const* src, float* dst) {
    f16c_load16(src, dst);
}
[[gnu::target("arch=x86-64-v3")]] inline void f16_store16_v3(float const* src, std::uint16_t* dst) {
    f16c_store16(src, dst);
}
// AVX-512 converts the sixteen at once: two 32-byte stores read back as one
// 64-byte vector would miss store forwarding. (The maskz forms with every
// lane set: g++ 12 warns that the plain forms' undefined source vector may
// be used uninitialized.)
[[gnu::target("arch=x86-64-v4")]] inline void f16_load16_v4(std::uint16_t const* src, float* dst) {
    _mm512_storeu_ps(dst, _mm512_maskz_cvtph_ps(0xffff, _mm256_loadu_si256(reinterpret_cast<__m256i const*>(src))));
}
[[gnu::target("arch=x86-64-v4")]] inline void f16_store16_v4(float const* src, std::uint16_t* dst) {
    _mm256_storeu_si256(
        reinterpret_cast<__m256i*>(dst),
        _mm512_maskz_cvtps_ph(0xffff, _mm512_loadu_ps(src), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
}
#endif

#if defined(SWITCHYARD_CPU_ISA_VARIANTS)
// bfloat16 <-> float sixteen at a time, for the fused rows. Loads widen
// straight from memory (g++ loads 32 bytes and extracts halves). Stores round
// as float_to_bfloat16_bits does (NaN by the float compare, one
// instruction): g++ vectorizes the scalar rounding into twice as many
// instructions, which bound cheap bf16 kernels (docs/benchmarks.md).
[[gnu::target("arch=x86-64-v3")]] inline void bf16_load16_v3(std::uint16_t const* src, float* dst) {
    for (int j = 0; j < 16; j += 8) {
        __m256i const wide = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<__m128i const*>(src + j)));
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + j), _mm256_slli_epi32(wide, 16));
    }
}
[[gnu::target("arch=x86-64-v4")]] inline void bf16_load16_v4(std::uint16_t const* src, float* dst) {
    constexpr __mmask16 all = 0xffff;
    __m512i const wide = _mm512_maskz_cvtepu16_epi32(all, _mm256_loadu_si256(reinterpret_cast<__m256i const*>(src)));
    _mm512_storeu_si512(dst, _mm512_maskz_slli_epi32(all, wide, 16));
}
[[gnu::target("arch=x86-64-v3")]] inline __m256i bf16_round8_v3(__m256 v) {
    __m256i const bits = _mm256_castps_si256(v);
    __m256i const high = _mm256_srli_epi32(bits, 16);
    __m256i const lsb = _mm256_and_si256(high, _mm256_set1_epi32(1));
    __m256i const rounded =
        _mm256_srli_epi32(_mm256_add_epi32(_mm256_add_epi32(bits, _mm256_set1_epi32(0x7FFF)), lsb), 16);
    __m256i const nan = _mm256_or_si256(high, _mm256_set1_epi32(0x0040));
    return _mm256_blendv_epi8(rounded, nan, _mm256_castps_si256(_mm256_cmp_ps(v, v, _CMP_UNORD_Q)));
}
[[gnu::target("arch=x86-64-v3")]] inline void bf16_store16_v3(float const* src, std::uint16_t* dst) {
    // packus interleaves the 128-bit halves of its operands; the permute
    // puts the sixteen back in order.
    __m256i const packed =
        _mm256_packus_epi32(bf16_round8_v3(_mm256_loadu_ps(src)), bf16_round8_v3(_mm256_loadu_ps(src + 8)));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst), _mm256_permute4x64_epi64(packed, 0xD8));
}
// (maskz forms with every lane set, as for f16 above.)
[[gnu::target("arch=x86-64-v4")]] inline void bf16_store16_v4(float const* src, std::uint16_t* dst) {
    constexpr __mmask16 all = 0xffff;
    __m512 const v = _mm512_loadu_ps(src);
    __m512i const bits = _mm512_castps_si512(v);
    __m512i const high = _mm512_maskz_srli_epi32(all, bits, 16);
    __m512i const lsb = _mm512_and_si512(high, _mm512_set1_epi32(1));
    __m512i const rounded =
        _mm512_maskz_srli_epi32(all, _mm512_add_epi32(_mm512_add_epi32(bits, _mm512_set1_epi32(0x7FFF)), lsb), 16);
    __mmask16 const is_nan = _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
    __m512i const result = _mm512_mask_or_epi32(rounded, is_nan, high, _mm512_set1_epi32(0x0040));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst), _mm512_maskz_cvtepi32_epi16(all, result));
}
#endif

struct f16_converters {
    f16_load_fn load;
    f16_store_fn store;
};

// Picked once per process. SWITCHYARD_NO_F16C forces the portable loops
// (tests compare both).
inline f16_converters const& f16_block_converters() {
    static f16_converters const converters = [] {
#if defined(SWITCHYARD_HAS_F16C_PATH) && !defined(SWITCHYARD_NO_F16C)
        // AVX (the OS saves the YMM registers) and CPUID.1:ECX.F16C[bit 29];
        // clang 14's __builtin_cpu_supports does not know "f16c".
        __builtin_cpu_init();
        unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
        if (__builtin_cpu_supports("avx") && __get_cpuid(1, &eax, &ebx, &ecx, &edx) && (ecx & (1u << 29)) != 0)
            return f16_converters{&f16_load_f16c, &f16_store_f16c};
#endif
        return f16_converters{&f16_load_portable, &f16_store_portable};
    }();
    return converters;
}

// f16 storage computed as float: the pairs F16C converts.
template <dtype D, typename S, typename C>
inline constexpr bool is_f16_as_float = D == dtype::f16 && sizeof(S) == 2 && std::is_same_v<C, float>;

template <dtype D, typename S>
inline constexpr bool is_16bit_float_storage = (D == dtype::f16 || D == dtype::bf16) && sizeof(S) == 2;

// A storage value's bits as uint16 (f16, bf16 of any storage type).
template <typename S>
SWITCHYARD_INLINE std::uint16_t bits16(S const& s) noexcept {
    std::uint16_t b;
    std::memcpy(&b, &s, 2);
    return b;
}
template <typename S>
SWITCHYARD_INLINE S from_bits16(std::uint16_t b) noexcept {
    S s;
    std::memcpy(&s, &b, 2);
    return s;
}

// One storage value to compute type C, and back.
template <dtype D, typename C, typename S>
SWITCHYARD_INLINE C load_value(S const& s) noexcept {
    if constexpr (is_16bit_float_storage<D, S> && std::is_same_v<C, float>)
        return D == dtype::f16 ? half_bits_to_float(bits16(s)) : bfloat16_bits_to_float(bits16(s));
    else
        return static_cast<C>(s);
}
template <dtype D, typename S, typename C>
SWITCHYARD_INLINE S store_value(C const& c) noexcept {
    if constexpr (is_16bit_float_storage<D, S> && std::is_same_v<C, float>)
        return from_bits16<S>(D == dtype::f16 ? float_to_half_bits(c) : float_to_bfloat16_bits(c));
    else
        return static_cast<S>(c);
}

// bf16 storage computed as float, converted by bf16_load16/store16_v3/_v4
// in a row built for level I.
#if defined(SWITCHYARD_CPU_ISA_VARIANTS)
template <cpu_isa I, dtype D, typename S, typename C>
inline constexpr bool is_bf16_as_float_vectorized = (I != cpu_isa::baseline) && D == dtype::bf16 &&
                                                    sizeof(S) == 2 && std::is_same_v<C, float>;
#else
template <cpu_isa I, dtype D, typename S, typename C>
inline constexpr bool is_bf16_as_float_vectorized = false;
#endif

// Whether a row built for level I converts W lanes in registers
// (load_lanes/store_lanes): always, but for f16 only where F16C is known at
// compile time.
template <cpu_isa I, dtype D, typename S, typename C>
constexpr bool converts_lanes() {
    if constexpr (is_f16_as_float<D, S, C>) {
#if defined(SWITCHYARD_NO_F16C)
        return false;
#elif defined(SWITCHYARD_CPU_ISA_VARIANTS)
        return I != cpu_isa::baseline || f16c_everywhere;
#else
        // Without the per-level builds only the baseline row exists.
        return I == cpu_isa::baseline && f16c_everywhere;
#endif
    } else {
        return true;
    }
}

// W consecutive storage values to compute type, and back, for a row built
// for level I (converts_lanes<I, D, S, C>() holds). f16 is converted
// sixteen at a time, which is W for float.
template <cpu_isa I, dtype D, int W, typename S, typename C>
SWITCHYARD_INLINE void load_lanes(S const* src, C* dst) {
    if constexpr (is_f16_as_float<D, S, C>) {
        static_assert(W % 16 == 0);
        static_assert(converts_lanes<I, D, S, C>(), "no F16C conversion for this level: dst would be left unset");
        for (int j = 0; j < W; j += 16) {
            [[maybe_unused]] auto const* bits = reinterpret_cast<std::uint16_t const*>(src + j);
#if defined(SWITCHYARD_CPU_ISA_VARIANTS) && !defined(SWITCHYARD_NO_F16C)
            if constexpr (I == cpu_isa::x86_64_v4) f16_load16_v4(bits, dst + j);
            if constexpr (I == cpu_isa::x86_64_v3) f16_load16_v3(bits, dst + j);
#endif
#if defined(SWITCHYARD_HAS_F16C_PATH) && defined(__F16C__) && !defined(SWITCHYARD_NO_F16C)
            if constexpr (I == cpu_isa::baseline) f16c_load16(bits, dst + j);
#endif
        }
    } else if constexpr (is_bf16_as_float_vectorized<I, D, S, C>) {
        static_assert(W % 16 == 0);
        for (int j = 0; j < W; j += 16) {
            auto const* bits = reinterpret_cast<std::uint16_t const*>(src + j);
            if constexpr (I == cpu_isa::x86_64_v4)
                bf16_load16_v4(bits, dst + j);
            else
                bf16_load16_v3(bits, dst + j);
        }
    } else {
        for (int j = 0; j < W; ++j) dst[j] = load_value<D, C>(src[j]);
    }
}
template <cpu_isa I, dtype D, int W, typename S, typename C>
SWITCHYARD_INLINE void store_lanes(C const* src, S* dst) {
    if constexpr (is_f16_as_float<D, S, C>) {
        static_assert(W % 16 == 0);
        static_assert(converts_lanes<I, D, S, C>(), "no F16C conversion for this level: dst would be left unset");
        for (int j = 0; j < W; j += 16) {
            [[maybe_unused]] auto* bits = reinterpret_cast<std::uint16_t*>(dst + j);
#if defined(SWITCHYARD_CPU_ISA_VARIANTS) && !defined(SWITCHYARD_NO_F16C)
            if constexpr (I == cpu_isa::x86_64_v4) f16_store16_v4(src + j, bits);
            if constexpr (I == cpu_isa::x86_64_v3) f16_store16_v3(src + j, bits);
#endif
#if defined(SWITCHYARD_HAS_F16C_PATH) && defined(__F16C__) && !defined(SWITCHYARD_NO_F16C)
            if constexpr (I == cpu_isa::baseline) f16c_store16(src + j, bits);
#endif
        }
    } else if constexpr (is_bf16_as_float_vectorized<I, D, S, C>) {
        static_assert(W % 16 == 0);
        for (int j = 0; j < W; j += 16) {
            auto* bits = reinterpret_cast<std::uint16_t*>(dst + j);
            if constexpr (I == cpu_isa::x86_64_v4)
                bf16_store16_v4(src + j, bits);
            else
                bf16_store16_v3(src + j, bits);
        }
    } else {
        for (int j = 0; j < W; ++j) dst[j] = store_value<D, S>(src[j]);
    }
}

// dst[j] = src[j * stride] as C, j in [0, n).
template <dtype D, typename S, typename C>
SWITCHYARD_INLINE void load_block(S const* src, std::int64_t stride, C* dst, std::int64_t n) {
    if (stride == 0) {
        C const v = load_value<D, C>(*src);
        for (std::int64_t j = 0; j < n; ++j) dst[j] = v;
    } else if (stride == 1) {
        if constexpr (is_f16_as_float<D, S, C>) {
            f16_block_converters().load(reinterpret_cast<std::uint16_t const*>(src), dst, n);
        } else {
            // Groups of a fixed count: g++ -O2 vectorizes those, not a loop
            // of n (bf16 was converted one value at a time).
            constexpr std::int64_t G = 16;
            std::int64_t j = 0;
            for (; j + G <= n; j += G)
                for (std::int64_t l = 0; l < G; ++l) dst[j + l] = load_value<D, C>(src[j + l]);
            for (; j < n; ++j) dst[j] = load_value<D, C>(src[j]);
        }
    } else {
        for (std::int64_t j = 0; j < n; ++j) dst[j] = load_value<D, C>(src[j * stride]);
    }
}

// dst[j * stride] = src[j] as S, j in [0, n).
template <dtype D, typename S, typename C>
SWITCHYARD_INLINE void store_block(C const* src, S* dst, std::int64_t stride, std::int64_t n) {
    if (stride == 1) {
        if constexpr (is_f16_as_float<D, S, C>)
            f16_block_converters().store(src, reinterpret_cast<std::uint16_t*>(dst), n);
        else
            for (std::int64_t j = 0; j < n; ++j) dst[j] = store_value<D, S>(src[j]);
    } else {
        for (std::int64_t j = 0; j < n; ++j) dst[j * stride] = store_value<D, S>(src[j]);
    }
}

}  // namespace switchyard::detail
