// switchyard math for kernels: exp, expm1, log, log1p, tanh, sigmoid,
// softplus (and exp_to<Storage>, softplus_to<Storage>, sigmoid_to<Storage>), sqrt, abs, min, max and select, for
// float and double, usable on the host and in CUDA device code. Half and
// bfloat16 kernels convert to float (their compute type) themselves; there
// are no 16-bit overloads.
//
// THE RULE for kernel authors: write kernels with these functions, and with
// select(cond, a, b) instead of if / ?: on data. Then
//   (1) the kernel stays branch-free, so g++ and clang vectorize its loops at
//       -O3 without -ffast-math (they cannot vectorize libm calls or
//       data-dependent branches; g++ even turns `c ? f(x) : g(x)` into a
//       branch and, under the default -ftrapping-math, will not execute the
//       floating-point work of both sides unconditionally again), and
//   (2) the same kernel can later be traced to WGSL for WebGPU, and shader
//       devices need straight-line code.
// Call them qualified, switchyard::exp(x) or `namespace sy = switchyard;
// sy::exp(x)`: an unqualified exp(x) may pick libm's (or CUDA's) function.
// After `using namespace switchyard;` unqualified calls stay unambiguous: a
// global function of the same signature (libm's, CUDA's) is taken instead.
//
// Accuracy: every function is within 2 ulp of the correctly rounded result
// over the whole input range, subnormal results included (at most 1.16 ulp
// measured against long double (float exp without FMA), softplus 1.71 float
// and 1.65 double, cheaper in exchange; a denser sampling of double
// softplus near x = -1.3 finds 1.75), with or without FMA
// contraction (g++ contracts a*b+c even at -std=c++20 once FMA is enabled,
// clang by default). Float paths use only float arithmetic. Results do not
// depend on errno or the optimization level, and no function calls libm.
// The exceptions by design are exp_to, softplus_to and sigmoid_to<Storage>
// in CUDA device code with 2-byte floating storage, and sigmoid_to of such
// storage on the host: within 2^-16 relative, enough for a result rounded
// to f16/bf16 (0.53 ulp of those), not for a float (see below).
//
// CUDA device code: exp, expm1, log, log1p and tanh call CUDA's own
// functions (expf, log1pf, ...: within 2 ulp by NVIDIA's documentation, and
// cheaper on the GPU, whose special-function units they use); sigmoid,
// softplus, min, max, abs and select are the same code as on the host
// (softplus built on CUDA's expf and log1pf measured 2.18 ulp and cost more
// instructions than its own float path: 45 PTX instructions against 70),
// except that double softplus divides by the special-function unit's
// reciprocal, refined (1.58 ulp measured on the GPU).
// tests/cuda/test_cuda.cu measures every function on the device against
// long double and requires 2 ulp, and the _to functions for 2-byte storage 0.53
// ulp of the storage type. Constant evaluation always uses the portable code.
//
// Vectorization: a loop y[i] = f(x[i]) vectorizes for every function and type
// with g++ 12 and clang 14 at -O3, default target and -march=x86-64-v3, with
// two exceptions: sqrt needs -fno-math-errno (both compilers keep a scalar
// libm call to set errno for negative inputs otherwise), and g++ at the
// default x86-64 (SSE2) target keeps the double versions of the functions
// that select scalar (it lacks a 64-bit integer mask from a double comparison
// before SSE4.2); from -march=x86-64-v2 up they vectorize.
//
// Special values:
//   exp:     exp(-inf) = +0, exp(+inf) = +inf, overflow to +inf above
//            88.7228 (f) / 709.7827 (d), gradual underflow to subnormals and 0.
//   expm1:   expm1(-inf) = -1, expm1(+-0) = +-0, expm1 of tiny x is x.
//   log:     log(+-0) = -inf, log(x < 0) = NaN, log(+inf) = +inf, subnormal
//            inputs are exact in the reduction.
//   log1p:   log1p(-1) = -inf, log1p(x < -1) = NaN, log1p(+inf) = +inf,
//            log1p(+-0) = +-0, log1p of tiny x is x.
//   tanh:    tanh(+-inf) = +-1, tanh(+-0) = +-0.
//   sigmoid: 1 / (1 + exp(-x)); sigmoid(-inf) = 0, sigmoid(+inf) = 1.
//   softplus: log(1 + exp(x)) without overflow; softplus(-inf) = +0,
//            softplus(+inf) = +inf, softplus(x) = x once exp(-x) no longer
//            shows, gradual underflow to subnormals for x < -87.3 (f) /
//            -708.4 (d). Cheaper than log1p(exp(x)): no overflow or domain
//            handling, since exp's argument is never positive.
//   sqrt:    the IEEE square root (sqrtss/sqrtsd, sqrtf/sqrt in CUDA device
//            code).
//   min/max: IEEE 754-2019 minimum/maximum, like torch.minimum/maximum: NaN
//            if either argument is NaN, and -0 < +0 (min(-0, +0) = -0,
//            max(-0, +0) = +0).
//   select:  select(cond, a, b) is cond ? a : b with both a and b evaluated,
//            as a bitwise blend (compilers emit blendv or and/andnot/or).
// All NaN inputs give NaN. Every function but sqrt and the _to functions is
// constexpr; clang does not constant-evaluate calls that create a NaN on the
// way (NaN inputs, log1p(inf)).
//
// Design. exp/expm1: x = k ln2 + r, |r| <= ln2/2, with k from the
// round-to-nearest "shifter" trick (no float->int conversion), Cody-Waite
// reduction with a two-part ln2 whose high part has trailing zero bits
// (k * ln2_hi is exact), and the rounding error of r carried along.
// expm1(r) = r + r^2 P(r); exp scales 1 + expm1(r) by 2^k in two steps, so
// results in the subnormal range are rounded once.
// expm1 = 2^k expm1(r) + (2^k - 1), with Fast2Sum for the large parts.
// softplus (float): max(x, 0) + log1p(e), e = exp(-|x|) by a lean exp for
// arguments <= 0 and log1p on [0, 1] split at e = 1/2, where (e - 1)/2 is
// exact: 1.69 ulp over all 2^32 floats (with FMA), 1.71 without.
// softplus (double): the same split, exp(-|x|) by an FMA reduction and one
// Horner polynomial, and log1p(f) on [-1/4, 1/2) by the double log's
// s = f/(2+f) arrangement (below) with a wider R, so 1 + e is never rounded
// and no exponent is split off: about 50 FP64 operations, where
// log1p(exp(-|x|)) with the general functions took about 65 and a division.
// An H100 issues a quarter as many FP64 as FP32 operations, and that count
// decided f64 softplus's speed there (77% of copy bandwidth before, 97%
// after; docs/benchmarks.md).
// log/log1p: u = 2^e m with m in [sqrt(1/2), sqrt(2)), f = m - 1 exact;
// float: log1p(f) = f + f^2 Q(f); double: log1p(f) via s = f/(2+f),
// log1p(f) = f - f^2/2 + s (f^2/2 + R(s^2)) (the fdlibm arrangement); then
// e ln2 + log1p(f) with Fast2Sum. log1p keeps the rounding error of 1 + x as a
// first-order correction. sigmoid: (x >= 0 ? 1 : e) / (1 + e) with
// e = exp(-|x|), numerator and denominator carried as (rounded, error) pairs
// so that only the division rounds. tanh: x + x^3 P(x^2) for |x| < 0.625,
// else 1 - 2 sigmoid(-2|x|), sign copied from x. Every path is computed and
// the result selected, so no function branches on data.
//
// Coefficients: weighted minimax polynomials fitted with a Remez exchange in
// mpmath (60 digits), then rounded to float/double; where it did better, the
// rounding was done one coefficient at a time, refitting the higher ones to
// the residual. Weights make the error relative to the final result; the
// errors below are those of the rounded coefficients:
//   P (expm1): (expm1(r) - r)/r^2 on |r| <= ln2/2 + 1e-5, weight |r|;
//              float deg 5, error 2^-29.3; double deg 10, error 2^-60.6.
//   Q (log, float): (log1p(f) - f)/f^2 on [sqrt(1/2)-1-1e-4, sqrt(2)-1+1e-4],
//              weight f^2/log1p(f); deg 8, error 2^-27.4.
//   Q (softplus's log1p_unit, float): the same function on [-1/4, 1/2],
//              relative to log1p(f), fitted by Lawson's reweighted least
//              squares in mpmath; deg 8, error 2^-27.6 before rounding.
//   R (log, double): (2 atanh(s) - 2s)/s^3 in z = s^2 on [0, 0.02947],
//              weight z/2; deg 6, error 2^-59.5.
//   R (softplus's log1p_unit, double): the same function on [0, 0.04]
//              (|s| <= 1/5), Chebyshev interpolation in mpmath; deg 7,
//              error times z/2 2^-60.2 after rounding.
//   P (tanh): (tanh(x) - x)/x^3 in z = x^2 on [0, 0.625^2], weight
//              z x/tanh(x); float deg 5, error 2^-32.4; double deg 11,
//              error 2^-61.2.
#pragma once

#include <concepts>
#include <cstdint>
#include <type_traits>

#include "switchyard/core/bits.h"
#include "switchyard/core/config.h"

namespace switchyard {

namespace detail {

SWITCHYARD_HOST_DEVICE SWITCHYARD_INLINE constexpr std::uint32_t to_bits(float x) noexcept {
    return bit_cast<std::uint32_t>(x);
}
SWITCHYARD_HOST_DEVICE SWITCHYARD_INLINE constexpr std::uint64_t to_bits(double x) noexcept {
    return bit_cast<std::uint64_t>(x);
}
SWITCHYARD_HOST_DEVICE SWITCHYARD_INLINE constexpr float f32_from_bits(std::uint32_t b) noexcept {
    return bit_cast<float>(b);
}
SWITCHYARD_HOST_DEVICE SWITCHYARD_INLINE constexpr double f64_from_bits(std::uint64_t b) noexcept {
    return bit_cast<double>(b);
}

// Horner's scheme: c0 + x (c1 + x (c2 + ...)).
template <class T>
SWITCHYARD_HOST_DEVICE SWITCHYARD_INLINE constexpr T horner(T, T c) noexcept {
    return c;
}
template <class T, class... C>
SWITCHYARD_HOST_DEVICE SWITCHYARD_INLINE constexpr T horner(T x, T c0, C... c) noexcept {
    return c0 + x * horner(x, c...);
}

// x with the sign bit of s.
SWITCHYARD_HOST_DEVICE SWITCHYARD_INLINE constexpr float with_sign_of(float x, float s) noexcept {
    return f32_from_bits((to_bits(x) & 0x7FFFFFFFu) | (to_bits(s) & 0x80000000u));
}
SWITCHYARD_HOST_DEVICE SWITCHYARD_INLINE constexpr double with_sign_of(double x, double s) noexcept {
    return f64_from_bits((to_bits(x) & 0x7FFFFFFFFFFFFFFFull) | (to_bits(s) & 0x8000000000000000ull));
}

// cond ? a : b as a bitwise blend of two values that are both computed.
// Every select in this header is written this way, not with ?: or if: g++
// lowers ?: to a branch, sinks the computation of each arm into it, and then
// (under the default -ftrapping-math) will not speculate those floating-point
// operations back out, so the loop no longer vectorizes. Masks keep the code
// straight-line for every compiler; they become blends or and/andnot/or.
SWITCHYARD_HOST_DEVICE SWITCHYARD_INLINE constexpr float blend(bool cond, float a, float b) noexcept {
    const std::uint32_t m = std::uint32_t{0} - static_cast<std::uint32_t>(cond);
    return f32_from_bits((to_bits(a) & m) | (to_bits(b) & ~m));
}
SWITCHYARD_HOST_DEVICE SWITCHYARD_INLINE constexpr double blend(bool cond, double a, double b) noexcept {
    const std::uint64_t m = std::uint64_t{0} - static_cast<std::uint64_t>(cond);
    return f64_from_bits((to_bits(a) & m) | (to_bits(b) & ~m));
}

inline constexpr float f32_inf = bit_cast<float>(std::uint32_t{0x7F800000u});
inline constexpr float f32_nan = bit_cast<float>(std::uint32_t{0x7FC00000u});
inline constexpr double f64_inf = bit_cast<double>(std::uint64_t{0x7FF0000000000000ull});
inline constexpr double f64_nan = bit_cast<double>(std::uint64_t{0x7FF8000000000000ull});

// ln2 = ln2_hi + ln2_lo. ln2_hi has 15 (float) / 32 (double) significant
// bits, so k * ln2_hi is exact for |k| < 2^9 (float) / 2^21 (double).
inline constexpr float f32_ln2_hi = 0x1.62e4p-1f;
inline constexpr float f32_ln2_lo = 0x1.7f7d1cp-20f;
inline constexpr double f64_ln2_hi = 0x1.62e42feep-1;
inline constexpr double f64_ln2_lo = 0x1.a39ef35793c76p-33;

// ---------------------------------------------------------------- exp core --

// x = k ln2 + r + rc: r rounded, k = round(x / ln2) as a two's complement
// integer, and rc r's rounding error (WithError) or 0 (2 operations fewer;
// exp can afford the error). Valid while |k| < 2^9 (float) / 2^21 (double),
// which the callers' clamping guarantees.
struct f32_reduced {
    float r, rc;
    std::uint32_t k;
};
struct f64_reduced {
    double r, rc;
    std::uint64_t k;
};

template <bool WithError = true>
SWITCHYARD_HOST_DEVICE SWITCHYARD_INLINE constexpr f32_reduced reduce_ln2(float x) noexcept {
    // Adding 1.5 * 2^23 rounds x / ln2 to an integer k, held in the low
    // mantissa bits of t; subtracting it again gives k as a float.
    constexpr float shifter = 0x1.8p23f;
    const float t = x * 0x1.715476p+0f + shifter;
    const float kf = t - shifter;
    const float hi = x - kf * f32_ln2_hi;  // exact
    const float lo = kf * f32_ln2_lo;
    const float r = hi - lo;
    if constexpr (!WithError) return {r, 0.0f, to_bits(t) - to_bits(shifter)};
    const float rc = (hi - r) - lo;
    return {r, rc, to_bits(t) - to_bits(shifter)};
}
template <bool WithError = true>
SWITCHYARD_HOST_DEVICE SWITCHYARD_INLINE constexpr f64_reduced reduce_ln2(double x) noexcept {
    constexpr double shifter = 0x1.8p52;
    const double t = x * 0x1.71547652b82fep+0 + shifter;
    const double kf = t - shifter;
    const double hi = x - kf * f64_ln2_hi;  // exact
    const double lo = kf * f64_ln2_lo;
    const double r = hi - lo;
    if constexpr (!WithError) return {r, 0.0, to_bits(t) - to_bits(shifter)};
    const double rc = (hi - r) - lo;
    return {r, rc, to_bits(t) - to_bits(shifter)};
}

// P(r) = (expm1(r) - r)/r^2, for |r| <= ln2/2.
SWITCHYARD_HOST_DEVICE SWITCHYARD_INLINE constexpr float expm1_poly(float r) noexcept {
    return horner(r, 0x1p-1f, 0x1.555556p-3f, 0x1.55555ep-5f, 0x1.110ff8p-7f, 0x1.6cc6ecp-10f, 0x1.a25c12p-13f);
}
SWITCHYARD_HOST_DEVICE SWITCHYARD_INLINE constexpr double expm1_poly(double r) noexcept {
    return horner(r, 0x1p-1, 0x1.5555555555559p-3, 0x1.555555555555ap-5, 0x1.111111110f6b2p-7, 0x1.6c16c16c14463p-10,
                  0x1.a01a01afe3845p-13, 0x1.a01a01b0b15c1p-16, 0x1.71ddf858367d1p-19, 0x1.27e4c5ad07859p-22,
                  0x1.af5eb6417c55bp-26, 0x1.1f955075a435ap-29);
}
// expm1(r + rc) - r = rc + r^2 P(r).
SWITCHYARD_HOST_DEVICE SWITCHYARD_INLINE constexpr float expm1_tail(float r, float rc) noexcept {
    return rc + (r * r) * expm1_poly(r);
}
SWITCHYARD_HOST_DEVICE SWITCHYARD_INLINE constexpr double expm1_tail(double r, double rc) noexcept {
    return rc + (r * r) * expm1_poly(r);
}

// exp(x) = hi + lo: hi is exp(x) (subnormals and overflow included) and lo
// the rounding error of hi's significand, scaled like hi (meaningful while hi
// is normal). With Pair, 1 + expm1(r) is summed with Fast2Sum, so that hi is
// within about half an ulp and lo is its error; without it, r is rounded
// without its error term and 1 + r (1 + r P(r)) is evaluated in Horner's
// order (3 operations fewer per value, 4 with FMA contraction; float
// measured within 0.88 ulp with FMA, 1.16 without) and lo is 0.
struct f32_pair {
    float hi, lo;
};
struct f64_pair {
    double hi, lo;
};
template <bool Pair>
SWITCHYARD_HOST_DEVICE SWITCHYARD_INLINE constexpr f32_pair exp_parts(float x) noexcept {
    // Clamping keeps k in [-150, 128]; the clamped ends still round to 0 and
    // overflow to inf. NaN passes through the comparisons and stays NaN.
    float xc = detail::blend(x < -104.0f, -104.0f, x);
    xc = detail::blend(xc > 89.0f, 89.0f, xc);
    const f32_reduced red = reduce_ln2<Pair>(xc);
    float p = 1.0f + red.r * (1.0f + red.r * expm1_poly(red.r));
    float p_lo = 0.0f;
    if constexpr (Pair) {  // p = 1 + r + tail, rounded once
        const float one_r = 1.0f + red.r;
        const float t = ((1.0f - one_r) + red.r) + expm1_tail(red.r, red.rc);
        p = one_r + t;
        p_lo = (one_r - p) + t;
    }
    // 2^k = 2^k1 * 2^k2, both factors normal for every k in [-150, 128]; the
    // first product is exact, so a subnormal result is rounded only once.
    const std::uint32_t kk = red.k + 256u;                        // k + 256 >= 0, so >> is a floor
    const float s1 = f32_from_bits(((kk >> 1) - 1u) << 23);       // 2^floor(k/2)
    const float s2 = f32_from_bits((kk - (kk >> 1) - 1u) << 23);  // 2^ceil(k/2)
    return {(p * s1) * s2, (p_lo * s1) * s2};
}
template <bool Pair>
SWITCHYARD_HOST_DEVICE SWITCHYARD_INLINE constexpr f64_pair exp_parts(double x) noexcept {
    double xc = detail::blend(x < -746.0, -746.0, x);  // k in [-1076, 1024]
    xc = detail::blend(xc > 710.0, 710.0, xc);
    const f64_reduced red = reduce_ln2<Pair>(xc);
    double p = 1.0 + red.r * (1.0 + red.r * expm1_poly(red.r));
    double p_lo = 0.0;
    if constexpr (Pair) {
        const double one_r = 1.0 + red.r;
        const double t = ((1.0 - one_r) + red.r) + expm1_tail(red.r, red.rc);
        p = one_r + t;
        p_lo = (one_r - p) + t;
    }
    const std::uint64_t kk = red.k + 2048u;
    const double s1 = f64_from_bits(((kk >> 1) - 1u) << 52);
    const double s2 = f64_from_bits((kk - (kk >> 1) - 1u) << 52);
    return {(p * s1) * s2, (p_lo * s1) * s2};
}

// num / (1 + e), e = exp(-a) for a >= 0 (or NaN), num = 1 when one is set and
// e otherwise: 1 + e and num are kept as exact-ish pairs, so only the
// division rounds (first-order correction: n/(d + dl) = q + (nl - q dl)/d).
SWITCHYARD_HOST_DEVICE SWITCHYARD_INLINE constexpr float logistic(float a, bool one) noexcept {
    const f32_pair e = exp_parts<true>(-a);
    const float d = 1.0f + e.hi;
    const float d_lo = ((1.0f - d) + e.hi) + e.lo;
    const float n = detail::blend(one, 1.0f, e.hi);
    const float n_lo = detail::blend(one, 0.0f, e.lo);
    const float q = n / d;
    const float inv_d = detail::blend(one, q, 1.0f - q);  // 1/d, to first order
    return q + (n_lo - q * d_lo) * inv_d;
}
SWITCHYARD_HOST_DEVICE SWITCHYARD_INLINE constexpr double logistic(double a, bool one) noexcept {
    const f64_pair e = exp_parts<true>(-a);
    const double d = 1.0 + e.hi;
    const double d_lo = ((1.0 - d) + e.hi) + e.lo;
    const double n = detail::blend(one, 1.0, e.hi);
    const double n_lo = detail::blend(one, 0.0, e.lo);
    const double q = n / d;
    const double inv_d = detail::blend(one, q, 1.0 - q);
    return q + (n_lo - q * d_lo) * inv_d;
}

// ---------------------------------------------------------------- log core --

// e ln2 + log1p(f) + corr, for f in [sqrt(1/2) - 1, sqrt(2) - 1] and e an
// integer, where corr is a small correction (a fraction of an ulp).
SWITCHYARD_HOST_DEVICE SWITCHYARD_INLINE constexpr float log_finish(float e, float f, float corr) noexcept {
    // log1p(f) - f = f^2 Q(f)
    const float tail =
        (f * f) * horner(f, -0x1.fffff8p-2f, 0x1.55555p-2f, -0x1.000428p-2f, 0x1.99a4p-3f, -0x1.5426fep-3f,
                         0x1.227054p-3f, -0x1.0f39fp-3f, 0x1.08524ep-3f, -0x1.383c3ep-4f);
    // e ln2_hi + f with its rounding error (Fast2Sum: |e ln2_hi| >= |f| or e = 0).
    const float ehi = e * f32_ln2_hi;  // exact
    const float hi = ehi + f;
    const float err = (ehi - hi) + f;
    return hi + (err + (tail + (corr + e * f32_ln2_lo)));
}
SWITCHYARD_HOST_DEVICE SWITCHYARD_INLINE constexpr double log_finish(double e, double f, double corr) noexcept {
    // log1p(f) = 2 atanh(s), s = f / (2 + f), = f - hfsq + s (hfsq + R(s^2)).
    const double s = f / (2.0 + f);
    const double z = s * s;
    const double r = z * horner(z, 0x1.5555555555593p-1, 0x1.999999997f9f8p-2, 0x1.249249422a434p-2,
                                0x1.c71c51d7d641cp-3, 0x1.746649ac71b7dp-3, 0x1.39a096141785ep-3, 0x1.2f117738c85abp-3);
    const double hfsq = 0.5 * f * f;
    const double tail = (s * (hfsq + r) + (corr + e * f64_ln2_lo)) - hfsq;
    const double ehi = e * f64_ln2_hi;  // exact
    const double hi = ehi + f;
    const double err = (ehi - hi) + f;
    return hi + (err + tail);
}

// u = 2^e m, m in [sqrt(1/2), sqrt(2)), for positive normal u: returns m and
// e (as an integer-valued float / double).
struct f32_split {
    float m, e;
    std::int32_t ei;  // e as an integer
};
struct f64_split {
    double m, e;
};
SWITCHYARD_HOST_DEVICE SWITCHYARD_INLINE constexpr f32_split split_exponent(float u) noexcept {
    constexpr std::uint32_t sqrt_half = 0x3F3504F3u;  // float(sqrt(1/2)), rounded down
    const std::uint32_t iu = to_bits(u) - sqrt_half;
    const std::int32_t e = static_cast<std::int32_t>(iu) >> 23;
    return {f32_from_bits((iu & 0x007FFFFFu) + sqrt_half), static_cast<float>(e), e};
}
SWITCHYARD_HOST_DEVICE SWITCHYARD_INLINE constexpr f64_split split_exponent(double u) noexcept {
    // Only unsigned 64-bit shifts and adds, which SSE2 has: iu is biased so that
    // its top 12 bits are e + 1023 for every positive u.
    constexpr std::uint64_t one = 0x3FF0000000000000ull;
    constexpr std::uint64_t sqrt_half = 0x3FE6A09E667F3BCDull;  // double(sqrt(1/2))
    const std::uint64_t iu = to_bits(u) + (one - sqrt_half);
    const std::uint64_t biased = iu >> 52;
    const double m = f64_from_bits(to_bits(u) - (iu & 0xFFF0000000000000ull) + one);
    // biased (< 2^12) -> double without a 64-bit integer conversion.
    const double e = f64_from_bits(0x4330000000000000ull | biased) - (0x1p52 + 1023.0);
    return {m, e};
}

// softplus's two halves for float, leaner than exp and log1p because their
// arguments are confined: exp(-a) for a in [0, 104] (the caller clamps), and
// log1p(e) for e in [0, 1].
//
// exp_nonpositive: Cody-Waite reduction, 1 + expm1(r) rounded twice (0.85
// ulp), scaled by 2^(k + 64) exactly and then by 2^-64, so that subnormal
// results round once. k >= -150, so 2^(k + 64) is normal.
SWITCHYARD_HOST_DEVICE SWITCHYARD_INLINE constexpr float exp_nonpositive(float a) noexcept {
    constexpr float shifter = 0x1.8p23f;
    const float t = -a * 0x1.715476p+0f + shifter;
    const float kf = t - shifter;
    const float r = (kf * -f32_ln2_lo) + (kf * -f32_ln2_hi - a);  // kf * ln2_hi exact
    const float p = 1.0f + (r + expm1_tail(r, 0.0f));
    const std::uint32_t k = to_bits(t) - to_bits(shifter);  // two's complement, <= 0
    return (p * f32_from_bits((k + 191u) << 23)) * 0x1p-64f;
}
// log1p_unit: e < 1/2 is f itself; above, 1 + e = 2 (1 + f) with
// f = (e - 1)/2 in [-1/4, 0], exact; log1p(f) = f + f^2 Q(f) on [-1/4, 1/2]
// (no rounding of 1 + e to correct for). NaN gives an unspecified number.
SWITCHYARD_HOST_DEVICE SWITCHYARD_INLINE constexpr float log1p_unit(float e) noexcept {
    const bool halved = e >= 0.5f;
    const float f = blend(halved, e * 0.5f - 0.5f, e);
    const float q = horner(f, -0x1p-1f, 0x1.5555a6p-2f, -0x1.000024p-2f, 0x1.99685ap-3f, -0x1.54f24p-3f, 0x1.2897bep-3f,
                           -0x1.0d8ff6p-3f, 0x1.abf622p-4f, -0x1.6fe53p-5f);
    const float l = f + (f * f) * q;
    return blend(halved, l + 0x1.62e43p-1f, l);  // float(ln2) is within 0.011 ulp of ln2
}
// softplus's halves for double, written to spend few FP64 operations: the
// GPU kernel is bound by them (an H100 issues a quarter as many FP64 as FP32
// operations), and the CPU gains too.
//
// exp_nonpositive: exp(-a) for a in [0, 746] (the caller clamps) or NaN. r =
// -a - k ln2 with k ln2_hi exact and k ln2_lo rounded in (about 0.2 ulp of
// the result at most), 1 + r + r^2 P(r) by Horner's scheme, scaled by
// 2^(k + 64) exactly and then by 2^-64, so that subnormal results round once:
// within 0.9 ulp with FMA contraction, 1.15 without (measured).
SWITCHYARD_HOST_DEVICE SWITCHYARD_INLINE constexpr double exp_nonpositive(double a) noexcept {
    constexpr double shifter = 0x1.8p52;
    const double t = a * -0x1.71547652b82fep+0 + shifter;
    const double kf = t - shifter;
    const double r = kf * -f64_ln2_lo + (kf * -f64_ln2_hi - a);  // kf * ln2_hi exact
    const double p = 1.0 + r * (1.0 + r * expm1_poly(r));
    const std::uint64_t k = to_bits(t) - to_bits(shifter);  // two's complement, <= 0
    return (p * f64_from_bits((k + 1087u) << 52)) * 0x1p-64;
}

#if defined(__CUDA_ARCH__)
// 1/d within about an ulp for normal d: the special-function unit's
// reciprocal (about 2^-23) and one cubic refinement, r (1 + e + e^2) with
// e = 1 - d r (truncation about 2^-69), as for CUDA's own division but without
// its special-case path.
__device__ __forceinline__ double reciprocal_of_normal(double d) {
    double r;
    asm("rcp.approx.ftz.f64 %0, %1;" : "=d"(r) : "d"(d));
    const double e = ::fma(-d, r, 1.0);
    return ::fma(r, ::fma(e, e, e), r);
}
#endif

// log1p_unit: log1p(e) for e in [0, 1] or NaN, by the double log's method
// (s = f/(2 + f), log1p(f) = f - hfsq + s (hfsq + R(s^2))) after the float
// version's reduction: f = e below 1/2, and above, 1 + e = 2 (1 + f) with
// f = (e - 1)/2 in [-1/4, 0], exact. So 1 + e is never rounded, and no
// exponent is split off. In CUDA device code s = f * (1/(2 + f)) from the
// refined reciprocal (|2 + f| is in [1.75, 2.5]): s is then within about 1.5
// ulp instead of 0.5, and a relative error of s reaches the result scaled by
// about f^2/4 <= 1/16, so it costs about 0.1 ulp. s needs close to full
// double accuracy: a 2^-48 error would cost several ulp.
// In constant evaluation the polynomial runs on f with tiny values (below
// 2^-300) replaced by 0, where log1p(f) rounds to f anyway, so that no product
// underflows: nvcc refuses to constant-evaluate an underflow. At run time the
// products may underflow harmlessly, and the guard would cost FP64
// comparisons (2.4 points of copy bandwidth on the H100).
SWITCHYARD_HOST_DEVICE SWITCHYARD_INLINE constexpr double log1p_unit(double e) noexcept {
    const bool halved = e >= 0.5;
    double f = 0.0, fp = 0.0;
    if (__builtin_is_constant_evaluated()) {  // no cost at run time
        f = blend(halved, blend(halved, e, 1.0) * 0.5 - 0.5, e);
        fp = blend((f < 0x1p-300) & (f > -0x1p-300), 0.0, f);
    } else {
        f = fp = blend(halved, e * 0.5 - 0.5, e);
    }
    const double d = 2.0 + fp;
    double s = 0.0;
#if defined(__CUDA_ARCH__)
    if (!__builtin_is_constant_evaluated())
        s = fp * reciprocal_of_normal(d);
    else
        s = fp / d;
#else
    s = fp / d;
#endif
    const double z = s * s;
    const double r =
        z * horner(z, 0x1.5555555555555p-1, 0x1.9999999999f17p-2, 0x1.24924923de6edp-2, 0x1.c71c72df580fcp-3,
                   0x1.745cac43cc003p-3, 0x1.3b29d0452d426p-3, 0x1.0e8c55b42945fp-3, 0x1.169c38cc826bep-3);
    const double hfsq = 0.5 * fp * fp;
    const double tail = s * (hfsq + r) - hfsq;
    // + ln2 when halved: ln2_hi + f with Fast2Sum (|ln2_hi| > 1/4 >= |f|),
    // exact, so only the final sum rounds noticeably.
    const double ehi = blend(halved, f64_ln2_hi, 0.0);
    const double hi = ehi + f;
    const double err = (ehi - hi) + f;
    return hi + (err + (tail + blend(halved, f64_ln2_lo, 0.0)));
}

}  // namespace detail

// ------------------------------------------------------------------ select --

// Every public function below is a template whose one parameter is never
// deduced or given (template <int = 0>): among these overloads, resolution is
// as for plain functions (sy::min(x, 0) still converts the 0, half converts
// to float), but a non-template function with the same conversions wins the
// tie. So after `using namespace switchyard;`, sqrt(2.0) or min(a, b) picks
// ::sqrt(double) or CUDA's ::min(float, float) instead of being ambiguous.

// cond ? a : b. Both arguments are evaluated; compilers emit a blend.
template <int = 0>
SWITCHYARD_HOST_DEVICE SWITCHYARD_INLINE constexpr float select(bool cond, float a, float b) noexcept {
    return detail::blend(cond, a, b);
}
template <int = 0>
SWITCHYARD_HOST_DEVICE SWITCHYARD_INLINE constexpr double select(bool cond, double a, double b) noexcept {
    return detail::blend(cond, a, b);
}

// ----------------------------------------------------------------- abs/min/max

template <int = 0>
SWITCHYARD_HOST_DEVICE SWITCHYARD_INLINE constexpr float abs(float x) noexcept {
    return detail::f32_from_bits(detail::to_bits(x) & 0x7FFFFFFFu);
}
template <int = 0>
SWITCHYARD_HOST_DEVICE SWITCHYARD_INLINE constexpr double abs(double x) noexcept {
    return detail::f64_from_bits(detail::to_bits(x) & 0x7FFFFFFFFFFFFFFFull);
}

// IEEE 754-2019 minimum: NaN if either is NaN, min(-0, +0) = -0. When neither
// a < b nor b < a, the two are equal or one is NaN; OR-ing their bits gives
// the right answer in both cases (-0 | +0 = -0, NaN | y = NaN).
template <int = 0>
SWITCHYARD_HOST_DEVICE SWITCHYARD_INLINE constexpr float min(float a, float b) noexcept {
    const float same = detail::f32_from_bits(detail::to_bits(a) | detail::to_bits(b));
    return detail::blend(a < b, a, detail::blend(b < a, b, same));
}
template <int = 0>
SWITCHYARD_HOST_DEVICE SWITCHYARD_INLINE constexpr double min(double a, double b) noexcept {
    const double same = detail::f64_from_bits(detail::to_bits(a) | detail::to_bits(b));
    return detail::blend(a < b, a, detail::blend(b < a, b, same));
}
// IEEE 754-2019 maximum: NaN if either is NaN, max(-0, +0) = +0.
// max(a, b) = -min(-a, -b).
template <int = 0>
SWITCHYARD_HOST_DEVICE SWITCHYARD_INLINE constexpr float max(float a, float b) noexcept {
    return -min(-a, -b);
}
template <int = 0>
SWITCHYARD_HOST_DEVICE SWITCHYARD_INLINE constexpr double max(double a, double b) noexcept {
    return -min(-a, -b);
}

// Integers (int32 and int64 index math, codes, masks): plain comparisons,
// both arguments of one integer type. A non-template ::min(int, int) (CUDA's)
// still wins the tie; with both `using namespace std` and `using namespace
// switchyard`, an unqualified min(i, j) on integers is ambiguous (qualify it).
template <std::integral T>
SWITCHYARD_HOST_DEVICE SWITCHYARD_INLINE constexpr T select(bool cond, T a, T b) noexcept {
    return cond ? a : b;
}
template <std::integral T>
SWITCHYARD_HOST_DEVICE SWITCHYARD_INLINE constexpr T min(T a, T b) noexcept {
    return b < a ? b : a;
}
template <std::integral T>
SWITCHYARD_HOST_DEVICE SWITCHYARD_INLINE constexpr T max(T a, T b) noexcept {
    return a < b ? b : a;
}

// -------------------------------------------------------------------- sqrt --

template <int = 0>
SWITCHYARD_HOST_DEVICE SWITCHYARD_INLINE float sqrt(float x) noexcept {
#if defined(__CUDA_ARCH__)
    return ::sqrtf(x);
#else
    return __builtin_sqrtf(x);
#endif
}
template <int = 0>
SWITCHYARD_HOST_DEVICE SWITCHYARD_INLINE double sqrt(double x) noexcept {
#if defined(__CUDA_ARCH__)
    return ::sqrt(x);
#else
    return __builtin_sqrt(x);
#endif
}

// --------------------------------------------------------------------- exp --

template <int = 0>
SWITCHYARD_HOST_DEVICE SWITCHYARD_INLINE constexpr float exp(float x) noexcept {
#if defined(__CUDA_ARCH__)
    if (!__builtin_is_constant_evaluated()) return ::expf(x);
#endif
    return detail::exp_parts<false>(x).hi;
}
template <int = 0>
SWITCHYARD_HOST_DEVICE SWITCHYARD_INLINE constexpr double exp(double x) noexcept {
#if defined(__CUDA_ARCH__)
    if (!__builtin_is_constant_evaluated()) return ::exp(x);
#endif
    return detail::exp_parts<false>(x).hi;
}

// ------------------------------------------------------------------- expm1 --

template <int = 0>
SWITCHYARD_HOST_DEVICE SWITCHYARD_INLINE constexpr float expm1(float x) noexcept {
#if defined(__CUDA_ARCH__)
    if (!__builtin_is_constant_evaluated()) return ::expm1f(x);
#endif
    // Below -18 the result rounds to -1; above 89 it overflows. k in [-26, 128].
    float xc = detail::blend(x < -18.0f, -18.0f, x);
    xc = detail::blend(xc > 89.0f, 89.0f, xc);
    const detail::f32_reduced red = detail::reduce_ln2(xc);
    const float q = detail::expm1_tail(red.r, red.rc);  // expm1(r) = r + q
    // expm1(x) = 2^k (r + q) + 2^k - 1 = 2 (h r + (h - 1/2) + h q), h = 2^(k-1)
    // (so that k = 128 does not overflow early). h - 1/2 and then (h - 1/2) +
    // h r are summed with Fast2Sum (|h - 1/2| >= |h r| or h - 1/2 = 0), so
    // only the last addition rounds noticeably.
    const float h = detail::f32_from_bits((red.k + 126u) << 23);
    const float hm = h - 0.5f;
    const float hm_err = detail::blend(h >= 0.5f, (h - hm) - 0.5f, h - (hm + 0.5f));
    const float hr = h * red.r;
    const float total = hm + hr;
    const float total_err = (hm - total) + hr;
    const float result = 2.0f * (total + (total_err + (hm_err + h * q)));
    // Tiny x (and +-0, subnormals): expm1(x) rounds to x.
    return detail::blend(abs(x) < 0x1p-25f, x, result);
}
template <int = 0>
SWITCHYARD_HOST_DEVICE SWITCHYARD_INLINE constexpr double expm1(double x) noexcept {
#if defined(__CUDA_ARCH__)
    if (!__builtin_is_constant_evaluated()) return ::expm1(x);
#endif
    double xc = detail::blend(x < -40.0, -40.0, x);  // k in [-58, 1024]
    xc = detail::blend(xc > 710.0, 710.0, xc);
    const detail::f64_reduced red = detail::reduce_ln2(xc);
    const double q = detail::expm1_tail(red.r, red.rc);
    const double h = detail::f64_from_bits((red.k + 1022u) << 52);
    const double hm = h - 0.5;
    const double hm_err = detail::blend(h >= 0.5, (h - hm) - 0.5, h - (hm + 0.5));
    const double hr = h * red.r;
    const double total = hm + hr;
    const double total_err = (hm - total) + hr;
    const double result = 2.0 * (total + (total_err + (hm_err + h * q)));
    return detail::blend(abs(x) < 0x1p-54, x, result);
}

// --------------------------------------------------------------------- log --

template <int = 0>
SWITCHYARD_HOST_DEVICE SWITCHYARD_INLINE constexpr float log(float x) noexcept {
#if defined(__CUDA_ARCH__)
    if (!__builtin_is_constant_evaluated()) return ::logf(x);
#endif
    // Subnormal inputs are scaled by 2^23 first, exactly.
    const bool subnormal = x < 0x1p-126f;
    const detail::f32_split sp = detail::split_exponent(detail::blend(subnormal, x * 0x1p23f, x));
    const float e = sp.e - detail::blend(subnormal, 23.0f, 0.0f);
    float result = detail::log_finish(e, sp.m - 1.0f, 0.0f);
    result = detail::blend(x < 0.0f, detail::f32_nan, result);
    result = detail::blend(x == 0.0f, -detail::f32_inf, result);
    return detail::blend(x < detail::f32_inf, result, x);  // +inf and NaN
}
template <int = 0>
SWITCHYARD_HOST_DEVICE SWITCHYARD_INLINE constexpr double log(double x) noexcept {
#if defined(__CUDA_ARCH__)
    if (!__builtin_is_constant_evaluated()) return ::log(x);
#endif
    const bool subnormal = x < 0x1p-1022;
    const detail::f64_split sp = detail::split_exponent(detail::blend(subnormal, x * 0x1p52, x));
    const double e = sp.e - detail::blend(subnormal, 52.0, 0.0);
    double result = detail::log_finish(e, sp.m - 1.0, 0.0);
    result = detail::blend(x < 0.0, detail::f64_nan, result);
    result = detail::blend(x == 0.0, -detail::f64_inf, result);
    return detail::blend(x < detail::f64_inf, result, x);
}

// ------------------------------------------------------------------- log1p --

template <int = 0>
SWITCHYARD_HOST_DEVICE SWITCHYARD_INLINE constexpr float log1p(float x) noexcept {
#if defined(__CUDA_ARCH__)
    if (!__builtin_is_constant_evaluated()) return ::log1pf(x);
#endif
    // u = fl(1 + x) = 2^e m; c = 1 + x - u exactly (u - 1 is exact wherever c
    // matters). log1p(x) = e ln2 + log1p(f + d), f = m - 1, d = c 2^-e, and
    // log1p(f + d) = log1p(f) + d / (1 + f) to well below an ulp (|d| is at
    // most an ulp of m, so the d^2 term and the truncated series for
    // 1 / (1 + f) are far below the result's ulp, also when f ~ x ~ 0).
    const float u = 1.0f + x;
    const float c = x - (u - 1.0f);
    const detail::f32_split sp = detail::split_exponent(u);
    const float f = sp.m - 1.0f;
    // 2^-e, with e capped so that the scale stays finite for huge or inf u
    // (c = 0 there).
    const std::int32_t ec = sp.ei < 100 ? sp.ei : 100;  // integer min, no branch
    const float scale = detail::f32_from_bits(static_cast<std::uint32_t>(127 - ec) << 23);
    const float corr = (c * scale) * detail::horner(f, 1.0f, -1.0f, 1.0f, -1.0f);  // d / (1 + f)
    float result = detail::log_finish(sp.e, f, corr);
    result = detail::blend(x == 0.0f, x, result);  // keeps -0
    result = detail::blend(x < -1.0f, detail::f32_nan, result);
    result = detail::blend(x == -1.0f, -detail::f32_inf, result);
    return detail::blend(x < detail::f32_inf, result, x);  // +inf and NaN
}
template <int = 0>
SWITCHYARD_HOST_DEVICE SWITCHYARD_INLINE constexpr double log1p(double x) noexcept {
#if defined(__CUDA_ARCH__)
    if (!__builtin_is_constant_evaluated()) return ::log1p(x);
#endif
    const double u = 1.0 + x;
    const double c = x - (u - 1.0);
    const detail::f64_split sp = detail::split_exponent(u);
    const double f = sp.m - 1.0;
    // 2^-e with e capped, built from the capped e as a double: 64-bit integer
    // min and int64 -> double conversions are not in SSE2/AVX2.
    const double ec = detail::blend(sp.e < 1000.0, sp.e, 1000.0);
    const double scale = detail::f64_from_bits(detail::to_bits((1023.0 - ec) + 0x1p52) << 52);
    const double corr = (c * scale) * detail::horner(f, 1.0, -1.0, 1.0, -1.0);
    double result = detail::log_finish(sp.e, f, corr);
    result = detail::blend(x == 0.0, x, result);
    result = detail::blend(x < -1.0, detail::f64_nan, result);
    result = detail::blend(x == -1.0, -detail::f64_inf, result);
    return detail::blend(x < detail::f64_inf, result, x);
}

// -------------------------------------------------------------------- tanh --

template <int = 0>
SWITCHYARD_HOST_DEVICE SWITCHYARD_INLINE constexpr float tanh(float x) noexcept {
#if defined(__CUDA_ARCH__)
    if (!__builtin_is_constant_evaluated()) return ::tanhf(x);
#endif
    // Computed for |x|; the sign is copied at the end (also for +-0 and NaN).
    const float a = abs(x);
    const float z = a * a;
    const float small = a + a * (z * detail::horner(z, -0x1.555554p-2f, 0x1.11107ap-3f, -0x1.b9f188p-5f, 0x1.63a55p-6f,
                                                    -0x1.0c5edp-7f, 0x1.1a281ep-9f));
    // 1 - 2/(1 + e^2a) = 1 - 2 e/(1 + e), e = e^-2a in [0, 0.29].
    const float large = 1.0f - 2.0f * detail::logistic(2.0f * a, false);
    return detail::with_sign_of(detail::blend(a < 0.625f, small, large), x);
}
template <int = 0>
SWITCHYARD_HOST_DEVICE SWITCHYARD_INLINE constexpr double tanh(double x) noexcept {
#if defined(__CUDA_ARCH__)
    if (!__builtin_is_constant_evaluated()) return ::tanh(x);
#endif
    const double a = abs(x);
    const double z = a * a;
    const double small =
        a + a * (z * detail::horner(z, -0x1.5555555555552p-2, 0x1.1111111110c52p-3, -0x1.ba1ba1b9d195ep-5,
                                    0x1.664f4870c2fdap-6, -0x1.226e32cf9418ep-7, 0x1.d6d35a378d3ap-9,
                                    -0x1.7d9c330549f96p-10, 0x1.350b87187d5ebp-11, -0x1.f11347c4afb17p-13,
                                    0x1.801b729608fdp-14, -0x1.fac5315ca2bf4p-16, 0x1.9604c27bd6787p-18));
    const double large = 1.0 - 2.0 * detail::logistic(2.0 * a, false);
    return detail::with_sign_of(detail::blend(a < 0.625, small, large), x);
}

// ----------------------------------------------------------------- sigmoid --

// 1 / (1 + exp(-x)), as (x >= 0 ? 1 : e) / (1 + e) with e = exp(-|x|) <= 1,
// so nothing overflows and results near 0 keep full relative accuracy.
template <int = 0>
SWITCHYARD_HOST_DEVICE SWITCHYARD_INLINE constexpr float sigmoid(float x) noexcept {
    return detail::logistic(abs(x), x >= 0.0f);
}
template <int = 0>
SWITCHYARD_HOST_DEVICE SWITCHYARD_INLINE constexpr double sigmoid(double x) noexcept {
    return detail::logistic(abs(x), x >= 0.0);
}

// ---------------------------------------------------------------- softplus --

// log(1 + exp(x)) = max(x, 0) + log1p(exp(-|x|)): exp's argument is never
// positive, so nothing overflows and log1p only sees [0, 1]. NaN: max(x, 0)
// is taken as x > 0 ? x : 0, so the NaN is put back at the end.
template <int = 0>
SWITCHYARD_HOST_DEVICE SWITCHYARD_INLINE constexpr float softplus(float x) noexcept {
    const float a = abs(x);
    const float tail = detail::log1p_unit(detail::exp_nonpositive(detail::blend(a < 104.0f, a, 104.0f)));
    const float result = detail::blend(x > 0.0f, x, 0.0f) + tail;
    return detail::blend(x == x, result, x);
}
template <int = 0>
SWITCHYARD_HOST_DEVICE SWITCHYARD_INLINE constexpr double softplus(double x) noexcept {
    // Clamped so that exp_nonpositive's k stays >= -1076 (exp(-746) rounds to
    // 0); a NaN fails the comparison, flows through exp_nonpositive and
    // log1p_unit, and makes the sum NaN, so it needs no check of its own.
    const double a = abs(x);
    const double tail = detail::log1p_unit(detail::exp_nonpositive(detail::blend(a > 746.0, 746.0, a)));
    return detail::blend(x > 0.0, x, 0.0) + tail;
}

// ------------------------------------------------------------------ exp_to --

namespace detail {
// Whether the _to functions may compute for Storage at reduced precision:
// 2-byte floating storage (half, bfloat16, c10::Half, ...; not 16-bit
// integers).
template <typename Storage>
inline constexpr bool two_byte_float_storage = sizeof(Storage) == 2 && !std::is_integral_v<Storage>;
}  // namespace detail

// exp_to<Storage>(x): exp(x) computed as accurately as a result that will be
// stored as Storage needs, like softplus_to: exp(x) itself, except in CUDA
// device code for 2-byte floating storage, where it is the special-function
// unit's ex2 of x log2(e) (subnormal results kept; ptxas scales them into
// the unit's range): within 2^-16 relative of exp(x) (x log2(e) and the
// rounded log2(e) have together about 2^-17.2 relative effect on a result
// that is neither 0 nor inf, the unit errs by about 2^-22), so after
// rounding to f16 or bf16 within 0.53 ulp
// (tests/cuda/test_cuda.cu checks every f16 and bf16 input), in 5
// instructions where CUDA's expf takes 8. softmax's exp(x - max) is the
// case it was made for.
template <typename Storage>
SWITCHYARD_HOST_DEVICE SWITCHYARD_INLINE float exp_to(float x) noexcept {
#if defined(__CUDA_ARCH__)
    if constexpr (detail::two_byte_float_storage<Storage>) {
        float r;
        asm("ex2.approx.f32 %0, %1;" : "=f"(r) : "f"(x * 0x1.715476p+0f));
        return r;
    } else {
        return exp(x);
    }
#else
    return exp(x);
#endif
}
template <typename Storage>
SWITCHYARD_HOST_DEVICE SWITCHYARD_INLINE double exp_to(double x) noexcept {
    return exp(x);
}

// ------------------------------------------------------------- softplus_to --

// softplus_to<Storage>(x): softplus(x) computed as accurately as a result
// that will be stored as Storage needs. softplus(x) itself, except in CUDA
// device code for 2-byte floating storage (f16, bf16: half, bfloat16,
// c10::Half, ...; not 16-bit integers), where the special-function unit's ex2
// and lg2 approximations replace the two polynomials: about half the instructions, and within 2^-16 relative of
// softplus(x), so after rounding to f16 or bf16 the result is within 0.53 ulp
// of the exact value (tests/cuda/test_cuda.cu checks every f16 and bf16
// input on the GPU). Half and bfloat16 kernels on the GPU are bound by
// instruction issue, not memory, so this is what lifts them (docs/cuda.md).
// The host keeps softplus(x), so CPU and GPU results for 2-byte types may
// differ by one unit in the last place.
namespace detail {
#if defined(__CUDA_ARCH__)
// 2^t for t <= 0, subnormal results kept (bf16 has float's exponent
// range), from the special-function unit's ex2 in its .ftz form: the plain
// form keeps them too, but ptxas wraps it in a range test and two
// multiplies, where 2^(t + 24) * 2^-24 costs one. The caller passes t + 24,
// which it gets for free in the multiply-add that makes t. Below t = -150
// the unit flushes to 0, where 2^t rounds to 0 in float anyway.
__device__ __forceinline__ float ex2_keeping_subnormals(float t_plus_24) {
    float r;
    asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(t_plus_24));
    return r * 0x1p-24f;
}
// exp(-a) for a >= 0 (or NaN) that way: -a log2(e) + 24 rounds once
// (about 2^-18 relative effect on the result while it is not 0: |t + 24| <
// 128 there), and log2(e) rounded to float adds about 2^-19.5 for a up to
// 104. Not for exp_to: for x > 72, 2^(t + 24) would overflow.
__device__ __forceinline__ float exp_of_negative(float a) {
    return ex2_keeping_subnormals(__fmaf_rn(a, -0x1.715476p+0f, 24.0f));
}
__device__ __forceinline__ float lg2_of_at_least_one(float x) {
    float r;
    asm("lg2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x));
    return r;
}
// max(x, 0) + log1p(e), e = exp(-|x|): log1p(e) is e (1 - e/2 + e^2/3) below
// 2^-5 (relative error < e^3/4 <= 2^-17), else lg2(1 + e) ln 2 (absolute
// error about 2^-22 against log1p(e) >= 0.03). A NaN x gives a NaN e, so
// the sum is NaN without a check (max(NaN, 0) is 0).
__device__ __forceinline__ float softplus_special_function_unit(float x) {
    const float e = exp_of_negative(abs(x));
    const float small = e * (1.0f - e * (0.5f - e * 0x1.555556p-2f));
    const float large = lg2_of_at_least_one(1.0f + e) * 0x1.62e43p-1f;
    return ::fmaxf(x, 0.0f) + blend(e < 0x1p-5f, small, large);
}
#endif
}  // namespace detail

template <typename Storage>
SWITCHYARD_HOST_DEVICE SWITCHYARD_INLINE float softplus_to(float x) noexcept {
#if defined(__CUDA_ARCH__)
    if constexpr (detail::two_byte_float_storage<Storage>)
        return detail::softplus_special_function_unit(x);
    else
        return softplus(x);
#else
    return softplus(x);
#endif
}
template <typename Storage>
SWITCHYARD_HOST_DEVICE SWITCHYARD_INLINE double softplus_to(double x) noexcept {
    return softplus(x);
}

// -------------------------------------------------------------- sigmoid_to --

// sigmoid_to<Storage>(x): sigmoid(x) computed as accurately as a result that
// will be stored as Storage needs, like softplus_to: sigmoid(x) itself,
// except for 2-byte floating storage. On the host that is 1 / (1 + e) with
// e = exp(-|x|), without sigmoid's error terms; in CUDA device code e =
// exp(-|x|) comes from the special-function unit's ex2 and 1 / (1 + e) from
// its reciprocal: within 2^-16 relative of sigmoid(x) (|x| log2(e) rounds
// with about 2^-17.9 relative effect on e where e is not 0), so after
// rounding to f16 or bf16 within 0.53 ulp (tests/cuda/test_cuda.cu checks
// every f16 and bf16 input). sigmoid's exact division and error terms make
// half and bfloat16 kernels instruction-bound on the GPU.
namespace detail {
#if defined(__CUDA_ARCH__)
__device__ __forceinline__ float sigmoid_special_function_unit(float x) {
    const float e = exp_of_negative(abs(x));
    // 1 + e is in [1, 2]: no subnormal in or out, so .ftz changes nothing
    // and spares ptxas' subnormal handling.
    float q;
    asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(q) : "f"(1.0f + e));
    // x >= 0: 1 / (1 + e); x < 0: e / (1 + e). A NaN x makes e and q NaN.
    return blend(x >= 0.0f, q, e * q);
}
#endif
}  // namespace detail

template <typename Storage>
SWITCHYARD_HOST_DEVICE SWITCHYARD_INLINE float sigmoid_to(float x) noexcept {
    if constexpr (detail::two_byte_float_storage<Storage>) {
#if defined(__CUDA_ARCH__)
        return detail::sigmoid_special_function_unit(x);
#else
        // e = exp(-|x|) <= 1, then 1 / (1 + e) or e / (1 + e): no overflow,
        // and results that are subnormal in bf16 keep their bits. Within a
        // few float ulp, a 2^-12 ulp of the 2-byte result.
        const float e = exp(-abs(x));
        const float q = 1.0f / (1.0f + e);
        return detail::blend(x >= 0.0f, q, e * q);
#endif
    } else {
        return sigmoid(x);
    }
}
template <typename Storage>
SWITCHYARD_HOST_DEVICE SWITCHYARD_INLINE double sigmoid_to(double x) noexcept {
    return sigmoid(x);
}

}  // namespace switchyard
