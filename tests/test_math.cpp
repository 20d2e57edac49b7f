// Tests for switchyard/math.h.
//
// Accuracy is measured against long double references (std::expl, expm1l,
// logl, log1pl, tanhl, sqrtl; sigmoid as 1 / (1 + expl(-x)), softplus as
// max(x, 0) + log1pl(expl(-|x|))), in ulps of the
// target type:
//
//   err = |result - ref| / ulp(ref),   ulp(ref) = 2^(max(floor(log2|ref|), emin) - p + 1)
//
// with p = 24 / 53 and emin = -126 / -1022, so below the normal range the ulp
// is the subnormal spacing 2^-149 / 2^-1074 (gradual underflow is measured in
// subnormal ulps). An infinite result counts as +-2^(emax + 1) (2^128 /
// 2^1024, the next power of two) when the reference is finite, and a
// reference that rounds to infinity is met exactly only by that infinity; a
// NaN reference needs a NaN result and vice versa. A correctly rounded result
// has err <= 0.5; every function must stay within 2.
//
// float: every 251st bit pattern of all 2^32 (SWITCHYARD_MATH_SWEEP_STRIDE=n
// for every n-th, 1 for all of them), plus every pattern or a small stride in
// the critical regions of each function. double: 2.5 million random bit
// patterns (so every exponent is hit; SWITCHYARD_MATH_DOUBLE_PATTERNS=n for
// more) plus random inputs in the critical regions, from fixed seeds. The
// sweeps run on all hardware threads (about 8 s at -O2 on 2 cores) and print
// a table of the maximum errors; each function must stay within 2 ulp.
#include <catch2/catch.hpp>

#include <algorithm>
#include <bit>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <random>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "switchyard/core/bfloat16.h"
#include "switchyard/core/half.h"
#include "switchyard/math.h"
#include "switchyard/switchyard.h"  // for the using-directive test: every overload users see

namespace sy = switchyard;

namespace {

// ------------------------------------------------------------------ ulps ---

// 2^n as long double for every n an ulp can take (ldexpl is slow).
long double pow2(int n) {
    static const std::vector<long double> table = [] {
        std::vector<long double> t;
        for (int i = -1100; i <= 1100; ++i) t.push_back(std::ldexp(1.0L, i));
        return t;
    }();
    return table[static_cast<std::size_t>(n + 1100)];
}

template <class T>
long double ulp_of(long double ref) {
    constexpr int p = std::numeric_limits<T>::digits;               // 24 / 53
    constexpr int emin = std::numeric_limits<T>::min_exponent - 1;  // -126 / -1022
    constexpr int emax = std::numeric_limits<T>::max_exponent - 1;  // 127 / 1023
    const int e = ref == 0.0L ? emin : std::ilogb(ref);
    return pow2(std::clamp(e, emin, emax) - p + 1);
}

// Error of `got` in ulps of T at the long double reference `ref`.
template <class T>
double ulp_error(T got, long double ref) {
    using lim = std::numeric_limits<T>;
    constexpr double never = std::numeric_limits<double>::infinity();
    if (std::isnan(ref)) return std::isnan(got) ? 0.0 : never;
    if (std::isnan(got)) return never;
    if (std::isinf(ref)) return got == ref ? 0.0 : never;
    // 2^(emax + 1), where T's range ends; references from max + ulp(max)/2
    // on round to infinity.
    const long double top = pow2(lim::max_exponent);
    if (std::fabs(ref) >= top - pow2(lim::max_exponent - lim::digits - 1)) {
        if (std::isinf(got) && std::signbit(got) == std::signbit(ref)) return 0.0;
        ref = std::copysign(top, ref);
    }
    long double g = got;
    if (std::isinf(got)) g = std::copysign(top, g);
    const long double err = std::fabs(g - ref) / ulp_of<T>(ref);
    // (Tiny errors are reported as 0: converting a long double that
    // underflows double is slow on x87.)
    return err < 1e-9L ? 0.0 : static_cast<double>(err);
}

// --------------------------------------------------------- the functions ---

template <class T>
struct function {
    const char* name;
    T (*ours)(T);
    long double (*ref)(long double);
};

// The references. Inputs past the point where every float and double result
// saturates (exp(+-2000) is inf / 0 in double already) are clamped there, and
// NaN is returned for inputs outside the domain, because long double libm is
// slow on its overflow and domain-error paths; the expected results are the
// same.
long double clamp2000(long double x) { return std::clamp(x, -2000.0L, 2000.0L); }
constexpr long double nan_l = std::numeric_limits<long double>::quiet_NaN();
long double ref_exp(long double x) { return std::exp(clamp2000(x)); }
long double ref_expm1(long double x) { return std::expm1(clamp2000(x)); }
long double ref_log(long double x) { return x < 0 ? nan_l : std::log(x); }
long double ref_log1p(long double x) { return x < -1 ? nan_l : std::log1p(x); }
long double ref_tanh(long double x) { return std::tanh(x); }
long double ref_sigmoid(long double x) { return 1.0L / (1.0L + std::exp(-clamp2000(x))); }
long double ref_softplus(long double x) { return std::max(x, 0.0L) + std::log1p(std::exp(-std::fabs(clamp2000(x)))); }
long double ref_sqrt(long double x) { return x < 0 ? nan_l : std::sqrt(x); }

// Plain (non-inlined) wrappers, so the sweeps call what a kernel would.
template <class T>
T our_exp(T x) {
    return sy::exp(x);
}
template <class T>
T our_expm1(T x) {
    return sy::expm1(x);
}
template <class T>
T our_log(T x) {
    return sy::log(x);
}
template <class T>
T our_log1p(T x) {
    return sy::log1p(x);
}
template <class T>
T our_tanh(T x) {
    return sy::tanh(x);
}
template <class T>
T our_sigmoid(T x) {
    return sy::sigmoid(x);
}
template <class T>
T our_softplus(T x) {
    return sy::softplus(x);
}
template <class T>
T our_sqrt(T x) {
    return sy::sqrt(x);
}

enum fn { f_exp, f_expm1, f_log, f_log1p, f_tanh, f_sigmoid, f_softplus, f_sqrt, fn_count };

template <class T>
const function<T>& get(fn f) {
    static const function<T> table[fn_count] = {
        {"exp", our_exp<T>, ref_exp},
        {"expm1", our_expm1<T>, ref_expm1},
        {"log", our_log<T>, ref_log},
        {"log1p", our_log1p<T>, ref_log1p},
        {"tanh", our_tanh<T>, ref_tanh},
        {"sigmoid", our_sigmoid<T>, ref_sigmoid},
        {"softplus", our_softplus<T>, ref_softplus},
        {"sqrt", our_sqrt<T>, ref_sqrt},
    };
    return table[f];
}

// ------------------------------------------------------------ sweep stats ---

template <class T>
struct worst {
    double err = 0.0;
    T x = 0;
    std::uint64_t count = 0;
    void add(T input, double e) {
        ++count;
        if (e > err || (std::isnan(e) && !std::isnan(err))) {
            err = e;
            x = input;
        }
    }
    void merge(const worst& o) {
        count += o.count;
        if (o.err > err) {
            err = o.err;
            x = o.x;
        }
    }
};

// Runs body(lo, hi, stats) on [0, n) split over the hardware threads.
template <class T, class Body>
worst<T> parallel(std::uint64_t n, Body body) {
    const unsigned threads = std::max(1u, std::thread::hardware_concurrency());
    std::vector<worst<T>> parts(threads);
    std::vector<std::thread> pool;
    for (unsigned t = 0; t < threads; ++t) {
        pool.emplace_back([&, t] {
            // Interleaved chunks, so that slow regions spread over threads;
            // stats stay thread-local until the end (no false sharing).
            constexpr std::uint64_t chunk = 1u << 16;
            worst<T> local;
            for (std::uint64_t lo = t * chunk; lo < n; lo += threads * chunk) body(lo, std::min(n, lo + chunk), local);
            parts[t] = local;
        });
    }
    for (auto& th : pool) th.join();
    worst<T> all;
    for (auto const& p : parts) all.merge(p);
    return all;
}

std::uint32_t bits_of(float x) { return std::bit_cast<std::uint32_t>(x); }
float float_of(std::uint32_t b) { return std::bit_cast<float>(b); }

// Every `stride`-th float in [lo, hi] (both of one sign), by bit pattern.
struct float_range {
    float lo, hi;
    std::uint32_t stride;
};

worst<float> sweep_float(const function<float>& f, std::vector<float_range> const& ranges,
                         std::uint32_t global_stride) {
    worst<float> all;
    // All bit patterns, every global_stride-th.
    const std::uint64_t n = ((std::uint64_t{1} << 32) + global_stride - 1) / global_stride;
    all.merge(parallel<float>(n, [&](std::uint64_t lo, std::uint64_t hi, worst<float>& w) {
        for (std::uint64_t i = lo; i < hi; ++i) {
            const float x = float_of(static_cast<std::uint32_t>(i * global_stride));
            w.add(x, ulp_error<float>(f.ours(x), f.ref(x)));
        }
    }));
    for (auto const& r : ranges) {
        REQUIRE((r.hi <= 0.0f || r.lo >= 0.0f));  // one sign
        // Walk the magnitudes' bit patterns; the sign comes from lo/hi.
        const bool negative = r.hi <= 0.0f;
        const std::uint32_t a = bits_of(std::fabs(negative ? r.hi : r.lo));
        const std::uint32_t b = bits_of(std::fabs(negative ? r.lo : r.hi));
        const std::uint64_t m = (std::uint64_t{b} - a) / r.stride + 1;
        all.merge(parallel<float>(m, [&](std::uint64_t lo, std::uint64_t hi, worst<float>& w) {
            for (std::uint64_t i = lo; i < hi; ++i) {
                float x = float_of(static_cast<std::uint32_t>(a + i * r.stride));
                if (negative) x = -x;
                w.add(x, ulp_error<float>(f.ours(x), f.ref(x)));
            }
        }));
    }
    return all;
}

struct double_range {
    double lo, hi;
    std::uint32_t count;
};

// Deterministic per-chunk generators, so results do not depend on threading.
worst<double> sweep_double(const function<double>& f, std::vector<double_range> const& ranges,
                           std::uint32_t random_patterns) {
    worst<double> all;
    all.merge(parallel<double>(random_patterns, [&](std::uint64_t lo, std::uint64_t hi, worst<double>& w) {
        std::mt19937_64 rng(0x5eed0000u + lo);
        for (std::uint64_t i = lo; i < hi; ++i) {
            const double x = std::bit_cast<double>(rng());
            w.add(x, ulp_error<double>(f.ours(x), f.ref(x)));
        }
    }));
    std::uint64_t seed = 1;
    for (auto const& r : ranges) {
        ++seed;
        all.merge(parallel<double>(r.count, [&](std::uint64_t lo, std::uint64_t hi, worst<double>& w) {
            std::mt19937_64 rng(seed * 0x9E3779B97F4A7C15ull + lo);
            std::uniform_real_distribution<double> dist(r.lo, r.hi);
            for (std::uint64_t i = lo; i < hi; ++i) {
                const double x = dist(rng);
                w.add(x, ulp_error<double>(f.ours(x), f.ref(x)));
            }
        }));
    }
    return all;
}

constexpr double max_allowed_ulp = 2.0;

void print_row(const char* type, const char* name, double err, double x, std::uint64_t count, double seconds) {
    std::printf("  %-6s %-8s max %.3f ulp at x = %-24.17g (%llu inputs, %.2f s)\n", type, name, err, x,
                static_cast<unsigned long long>(count), seconds);
    std::fflush(stdout);
}

template <class T, class Sweep>
void check_accuracy(const char* type, fn which, Sweep sweep) {
    const function<T>& f = get<T>(which);
    const auto t0 = std::chrono::steady_clock::now();
    const worst<T> w = sweep(f);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    print_row(type, f.name, w.err, static_cast<double>(w.x), w.count, seconds);
    INFO(type << " " << f.name << ": max error " << w.err << " ulp at x = " << static_cast<double>(w.x) << " (hex "
              << std::hexfloat << static_cast<double>(w.x) << std::defaultfloat << "), " << w.count << " inputs");
    CHECK(w.err <= max_allowed_ulp);
}

// Critical regions: [lo, hi] (of one sign), every stride-th bit pattern.
std::vector<float_range> float_regions(fn which) {
    constexpr float tiny = 0x1p-30f;
    switch (which) {
        case f_exp:
            return {{-104.0f, -87.0f, 3},                     // subnormal results, underflow to 0
                    {-104.0f, -103.0f, 1},                    // last subnormal, rounding to 0
                    {-88.0f, -87.0f, 1},                      // normal -> subnormal
                    {87.0f, 89.0f, 1},                        // overflow threshold 88.72284
                    {tiny, 0.5f, 251},                        // near 0: 1 + x
                    {-0.5f, -tiny, 251},   {0.3f, 2.0f, 29},  // k changes at +-ln2/2
                    {-2.0f, -0.3f, 29}};
        case f_expm1:
            return {{tiny, 0.5f, 241},                          // k = 0
                    {-0.5f, -tiny, 241}, {0.34f, 0.36f, 1},     // k 0 -> 1 at ln2/2
                    {-0.36f, -0.34f, 1}, {0.3f, 2.0f, 59},      // k = +-1, +-2: cancellation
                    {-2.0f, -0.3f, 59},  {-20.0f, -14.0f, 17},  // towards -1
                    {16.0f, 18.0f, 7},                          // 2^k - 1 no longer exact
                    {36.0f, 40.0f, 7},   {87.0f, 89.0f, 1}};    // overflow
        case f_log:
            return {{0.5f, 2.0f, 11},                  // around 1, both sides of sqrt(2)
                    {0.99f, 1.01f, 1},                 // log near 1
                    {0x1p-149f, 0x1p-126f, 61},        // subnormal inputs
                    {0x1.69p-1f, 0x1.6bp-1f, 1},       // reduction boundary sqrt(1/2)
                    {0x1.69p+0f, 0x1.6bp+0f, 1},       // and sqrt(2)
                    {0x1p126f, 0x1.fffffep127f, 37}};  // top of the range
        case f_log1p:
            return {{-1.0f, -0.9f, 3},                             // log1p near -1
                    {tiny, 0.42f, 251},                            // e = 0: f = x
                    {-0.3f, -tiny, 251}, {0.41f, 0.42f, 1},        // e switches at sqrt(2) - 1
                    {-0.3f, -0.29f, 1},                            // and at sqrt(1/2) - 1
                    {0.42f, 4.0f, 37},   {0x1p23f, 0x1p26f, 29}};  // 1 + x rounds
        case f_tanh:
            return {{tiny, 0.7f, 251},                          // polynomial part
                    {-0.7f, -tiny, 251},  {0.62f, 0.63f, 1},    // switchover at 0.625
                    {-0.63f, -0.62f, 1},  {0.625f, 10.0f, 23},  // exp part, saturation near 9.01
                    {-10.0f, -0.625f, 47}};
        case f_sigmoid:
            return {{-104.0f, -87.0f, 3},  // subnormal results
                    {tiny, 20.0f, 251},
                    {-20.0f, -tiny, 251},
                    {14.0f, 18.0f, 3}};  // rounding to 1
        case f_softplus:
            return {{-104.0f, -87.0f, 3},                      // subnormal results
                    {-1.0f, -tiny, 29},                        // around 0: ln2 +- x/2
                    {tiny, 1.0f, 29},     {0.34f, 0.36f, 1},   // exp's k switches at ln2/2
                    {-0.36f, -0.34f, 1},  {-0.7f, -0.68f, 1},  // log1p's halving switches at e = 1/2
                    {0.68f, 0.7f, 1},     {1.0f, 20.0f, 29},   // x + a shrinking tail
                    {-20.0f, -1.0f, 29}};
        case f_sqrt: return {{0x1p-149f, 0x1p-120f, 97}, {1.0f, 4.0f, 11}};
        default: return {};
    }
}

std::vector<double_range> double_regions(fn which) {
    constexpr std::uint32_t n = 300000;
    switch (which) {
        case f_exp:
            return {{-745.2, -708.3, n}, {708.0, 709.79, n},   {709.78, 709.8, n / 4},
                    {-1.0, 1.0, n},      {-1e-8, 1e-8, n / 4}, {-50.0, 50.0, n}};
        case f_expm1:
            return {{-0.35, 0.35, n},      {-1e-6, 1e-6, n / 4}, {-3.0, -0.3, n},      {0.3, 3.0, n},
                    {-40.0, -30.0, n / 4}, {35.0, 40.0, n / 4},  {700.0, 709.8, n / 4}};
        case f_log:
            return {{0.5, 2.0, n},
                    {0.999, 1.001, n},
                    {1e-310, 2.2250738585072014e-308, n},
                    {0.70710, 0.70712, n / 4},
                    {1.41420, 1.41422, n / 4},
                    {1e300, 1.7e308, n / 4}};
        case f_log1p:
            return {{-1.0, -0.9, n},     {-1.0, -0.999999, n / 4}, {-0.3, 0.42, n}, {-1e-6, 1e-6, n / 4},
                    {0.41, 0.42, n / 4}, {-0.3, -0.29, n / 4},     {0.42, 10.0, n}, {1e15, 1e17, n / 4}};
        case f_tanh:
            return {{-0.7, 0.7, n},   {0.6, 0.65, n / 4}, {-0.65, -0.6, n / 4},
                    {0.625, 20.0, n}, {-20.0, -0.625, n}, {-1e-8, 1e-8, n / 4}};
        case f_sigmoid: return {{-745.2, -708.3, n}, {-40.0, 40.0, n}, {-1.0, 1.0, n / 2}, {30.0, 40.0, n / 4}};
        case f_softplus:
            return {{-745.2, -708.3, n}, {-40.0, 40.0, n}, {-1.0, 1.0, n / 2}, {-1e-8, 1e-8, n / 4},
                    {30.0, 40.0, n / 4}, {-1.4, -1.25, n}, {-2.1, -1.9, n / 2}};  // the largest errors
        case f_sqrt: return {{0.0, 1e-300, n / 4}, {1.0, 4.0, n / 4}};
        default: return {};
    }
}

// The float sweep visits every float_global_stride()-th bit pattern: 251 by
// default, or SWITCHYARD_MATH_SWEEP_STRIDE (1 = all 2^32 floats).
std::uint32_t float_global_stride() {
    if (const char* s = std::getenv("SWITCHYARD_MATH_SWEEP_STRIDE")) {
        const long v = std::strtol(s, nullptr, 10);
        if (v >= 1) return static_cast<std::uint32_t>(v);
    }
    return 251;
}
// The double sweep draws double_random_patterns() random bit patterns: 2.5
// million by default, or SWITCHYARD_MATH_DOUBLE_PATTERNS.
std::uint32_t double_random_patterns() {
    if (const char* s = std::getenv("SWITCHYARD_MATH_DOUBLE_PATTERNS")) {
        const long v = std::strtol(s, nullptr, 10);
        if (v >= 1) return static_cast<std::uint32_t>(v);
    }
    return 2500000;
}

}  // namespace

TEST_CASE("math: float accuracy against long double, all of float's range", "[math][accuracy]") {
    const std::uint32_t stride = float_global_stride();
    std::printf("float accuracy (1 in %u bit patterns + critical regions):\n", stride);
    for (int i = 0; i < fn_count; ++i) {
        const fn which = static_cast<fn>(i);
        check_accuracy<float>("float", which,
                              [&](const function<float>& f) { return sweep_float(f, float_regions(which), stride); });
    }
}

TEST_CASE("math: double accuracy against long double, random inputs", "[math][accuracy]") {
    const std::uint32_t patterns = double_random_patterns();
    std::printf("double accuracy (%u random bit patterns + critical regions):\n", patterns);
    for (int i = 0; i < fn_count; ++i) {
        const fn which = static_cast<fn>(i);
        check_accuracy<double>("double", which, [&](const function<double>& f) {
            return sweep_double(f, double_regions(which), patterns);
        });
    }
}

// ------------------------------------------------------ the ulp measure ---

TEST_CASE("math: the ulp measure itself", "[math]") {
    // A correctly rounded value is within half an ulp; one ulp off is 1.
    const float one_up = std::nextafter(1.0f, 2.0f);
    CHECK(ulp_error<float>(1.0f, 1.0L) == 0.0);
    CHECK(ulp_error<float>(one_up, 1.0L) == 1.0);
    CHECK(ulp_error<float>(1.0f, 1.0L + std::ldexp(1.0L, -24)) == 0.5);
    CHECK(ulp_error<float>(1.0f, 1.0L - std::ldexp(1.0L, -25)) == 0.5);  // ulp below 1 is 2^-24
    // Subnormal results are measured in subnormal ulps.
    const float tiny = std::ldexp(1.0f, -149);
    CHECK(ulp_error<float>(3 * tiny, std::ldexp(1.0L, -149)) == 2.0);
    CHECK(ulp_error<float>(0.0f, std::ldexp(1.0L, -151)) == 0.25);
    CHECK(ulp_error<double>(std::ldexp(1.0, -1074), 0.0L) == 1.0);
    // Overflow: inf counts as 2^128; a reference past the rounding threshold
    // wants inf.
    CHECK(ulp_error<float>(std::numeric_limits<float>::infinity(), 1e39L) == 0.0);
    CHECK(ulp_error<float>(std::numeric_limits<float>::max(), 1e39L) == 1.0);
    CHECK(ulp_error<float>(std::numeric_limits<float>::infinity(),
                           static_cast<long double>(std::numeric_limits<float>::max())) == 1.0);
    // NaN needs NaN.
    CHECK(ulp_error<float>(std::numeric_limits<float>::quiet_NaN(), 1.0L) > 1e300);
    CHECK(ulp_error<float>(1.0f, std::numeric_limits<long double>::quiet_NaN()) > 1e300);
    CHECK(ulp_error<float>(std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<long double>::quiet_NaN()) ==
          0.0);
    // A 3-ulp error is caught by the accuracy check's bound.
    const float three_up = std::nextafter(std::nextafter(one_up, 2.0f), 2.0f);
    CHECK(ulp_error<float>(std::nextafter(three_up, 2.0f), 1.0L) > max_allowed_ulp);
}

// --------------------------------------------------------- special values ---

namespace {

template <class T>
bool same(T a, T b) {  // bitwise, up to NaN payloads
    if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
    return a == b && std::signbit(a) == std::signbit(b);
}

// Keeps the optimizer from folding calls on constants.
template <class T>
T opaque(T x) {
    volatile T v = x;
    return v;
}

}  // namespace

TEMPLATE_TEST_CASE("math: special values", "[math]", float, double) {
    using T = TestType;
    using lim = std::numeric_limits<T>;
    const T inf = lim::infinity();
    const T nan = lim::quiet_NaN();
    const T zero = 0;
    const T neg_zero = -zero;
    const T tiny = lim::denorm_min();
    const T small_normal = lim::min();
    auto o = [](T x) { return opaque(x); };

    SECTION("exp") {
        CHECK(same(sy::exp(o(-inf)), zero));
        CHECK(same(sy::exp(o(inf)), inf));
        CHECK(std::isnan(sy::exp(o(nan))));
        CHECK(same(sy::exp(o(zero)), T(1)));
        CHECK(same(sy::exp(o(neg_zero)), T(1)));
        // Overflow exactly past log(max).
        const T big = std::is_same_v<T, float> ? T(88.72283f) : T(709.782712893384);
        const T over = std::is_same_v<T, float> ? T(88.72284f) : T(709.7827128933841);
        CHECK(std::isfinite(sy::exp(o(big))));
        CHECK(same(sy::exp(o(over)), inf));
        CHECK(same(sy::exp(o(T(1000))), inf));
        // Gradual underflow: exp(log(denorm_min)) ~ denorm_min, far below: 0.
        const T at_tiny = std::log(tiny);
        CHECK(sy::exp(o(at_tiny)) > 0);
        CHECK(sy::exp(o(at_tiny)) <= 2 * tiny);
        CHECK(same(sy::exp(o(T(-1000))), zero));
        CHECK(same(sy::exp(o(at_tiny - 1)), zero));
    }
    SECTION("expm1") {
        CHECK(same(sy::expm1(o(-inf)), T(-1)));
        CHECK(same(sy::expm1(o(inf)), inf));
        CHECK(std::isnan(sy::expm1(o(nan))));
        CHECK(same(sy::expm1(o(zero)), zero));
        CHECK(same(sy::expm1(o(neg_zero)), neg_zero));
        CHECK(same(sy::expm1(o(tiny)), tiny));
        CHECK(same(sy::expm1(o(-tiny)), -tiny));
        CHECK(same(sy::expm1(o(small_normal)), small_normal));
        CHECK(same(sy::expm1(o(T(-1000))), T(-1)));
        CHECK(same(sy::expm1(o(T(1000))), inf));
    }
    SECTION("log") {
        CHECK(same(sy::log(o(zero)), -inf));
        CHECK(same(sy::log(o(neg_zero)), -inf));
        CHECK(std::isnan(sy::log(o(T(-1)))));
        CHECK(std::isnan(sy::log(o(-tiny))));
        CHECK(std::isnan(sy::log(o(-inf))));
        CHECK(std::isnan(sy::log(o(nan))));
        CHECK(same(sy::log(o(inf)), inf));
        CHECK(same(sy::log(o(T(1))), zero));
        // Subnormal inputs: log(2^-149 or 2^-1074) = -149 ln2 or -1074 ln2.
        const int tiny_exp = std::is_same_v<T, float> ? -149 : -1074;
        CHECK(ulp_error<T>(sy::log(o(tiny)), tiny_exp * std::log(2.0L)) <= 1.0);
        CHECK(ulp_error<T>(sy::log(o(3 * tiny)), std::log(3.0L) + tiny_exp * std::log(2.0L)) <= 1.0);
        CHECK(ulp_error<T>(sy::log(o(lim::max())), std::log(static_cast<long double>(lim::max()))) <= 1.0);
    }
    SECTION("log1p") {
        CHECK(same(sy::log1p(o(T(-1))), -inf));
        CHECK(std::isnan(sy::log1p(o(T(-2)))));
        CHECK(std::isnan(sy::log1p(o(std::nextafter(T(-1), T(-2))))));
        CHECK(std::isnan(sy::log1p(o(-inf))));
        CHECK(std::isnan(sy::log1p(o(nan))));
        CHECK(same(sy::log1p(o(inf)), inf));
        CHECK(same(sy::log1p(o(zero)), zero));
        CHECK(same(sy::log1p(o(neg_zero)), neg_zero));
        CHECK(same(sy::log1p(o(tiny)), tiny));
        CHECK(same(sy::log1p(o(-tiny)), -tiny));
        CHECK(same(sy::log1p(o(small_normal)), small_normal));
        const T eps = lim::epsilon() / 4;  // log1p(eps) rounds to eps
        CHECK(same(sy::log1p(o(eps)), eps));
        CHECK(std::isfinite(sy::log1p(o(lim::max()))));
    }
    SECTION("tanh") {
        CHECK(same(sy::tanh(o(inf)), T(1)));
        CHECK(same(sy::tanh(o(-inf)), T(-1)));
        CHECK(std::isnan(sy::tanh(o(nan))));
        CHECK(same(sy::tanh(o(zero)), zero));
        CHECK(same(sy::tanh(o(neg_zero)), neg_zero));
        CHECK(same(sy::tanh(o(tiny)), tiny));
        CHECK(same(sy::tanh(o(-tiny)), -tiny));
        CHECK(same(sy::tanh(o(T(30))), T(1)));
        CHECK(same(sy::tanh(o(T(-30))), T(-1)));
    }
    SECTION("sigmoid") {
        CHECK(same(sy::sigmoid(o(-inf)), zero));
        CHECK(same(sy::sigmoid(o(inf)), T(1)));
        CHECK(std::isnan(sy::sigmoid(o(nan))));
        CHECK(same(sy::sigmoid(o(zero)), T(0.5)));
        CHECK(same(sy::sigmoid(o(neg_zero)), T(0.5)));
        CHECK(same(sy::sigmoid(o(T(-2000))), zero));
        CHECK(same(sy::sigmoid(o(T(2000))), T(1)));
    }
    SECTION("softplus") {
        CHECK(same(sy::softplus(o(-inf)), zero));
        CHECK(same(sy::softplus(o(inf)), inf));
        CHECK(std::isnan(sy::softplus(o(nan))));
        CHECK(std::isnan(sy::softplus(o(-nan))));
        CHECK(same(sy::softplus(o(zero)), std::log(T(2))));
        CHECK(same(sy::softplus(o(neg_zero)), std::log(T(2))));
        CHECK(same(sy::softplus(o(T(-2000))), zero));
        CHECK(same(sy::softplus(o(T(2000))), T(2000)));
        CHECK(same(sy::softplus(o(lim::max())), lim::max()));
        CHECK(same(sy::softplus(o(-lim::max())), zero));
    }
    SECTION("sqrt") {
        CHECK(same(sy::sqrt(o(zero)), zero));
        CHECK(same(sy::sqrt(o(neg_zero)), neg_zero));
        CHECK(same(sy::sqrt(o(inf)), inf));
        CHECK(std::isnan(sy::sqrt(o(T(-1)))));
        CHECK(std::isnan(sy::sqrt(o(-inf))));
        CHECK(std::isnan(sy::sqrt(o(nan))));
        CHECK(same(sy::sqrt(o(T(4))), T(2)));
        CHECK(same(sy::sqrt(o(T(2))), std::sqrt(T(2))));
    }
    SECTION("abs") {
        CHECK(same(sy::abs(o(T(-2.5))), T(2.5)));
        CHECK(same(sy::abs(o(T(2.5))), T(2.5)));
        CHECK(same(sy::abs(o(neg_zero)), zero));
        CHECK(same(sy::abs(o(-inf)), inf));
        CHECK(same(sy::abs(o(-tiny)), tiny));
        CHECK(std::isnan(sy::abs(o(nan))));
        CHECK_FALSE(std::signbit(sy::abs(o(-nan))));
    }
    SECTION("min and max: NaN propagates, -0 < +0") {
        CHECK(same(sy::min(o(T(1)), o(T(2))), T(1)));
        CHECK(same(sy::min(o(T(2)), o(T(1))), T(1)));
        CHECK(same(sy::max(o(T(1)), o(T(2))), T(2)));
        CHECK(same(sy::max(o(T(2)), o(T(1))), T(2)));
        CHECK(same(sy::min(o(T(-3)), o(-inf)), -inf));
        CHECK(same(sy::max(o(T(-3)), o(inf)), inf));
        CHECK(same(sy::min(o(T(5)), o(T(5))), T(5)));
        CHECK(same(sy::max(o(T(-5)), o(T(-5))), T(-5)));
        CHECK(std::isnan(sy::min(o(nan), o(T(1)))));
        CHECK(std::isnan(sy::min(o(T(1)), o(nan))));
        CHECK(std::isnan(sy::max(o(nan), o(T(1)))));
        CHECK(std::isnan(sy::max(o(T(1)), o(nan))));
        CHECK(std::isnan(sy::min(o(nan), o(-inf))));
        CHECK(std::isnan(sy::max(o(inf), o(nan))));
        CHECK(std::isnan(sy::min(o(nan), o(nan))));
        CHECK(std::isnan(sy::max(o(nan), o(nan))));
        CHECK(same(sy::min(o(zero), o(neg_zero)), neg_zero));
        CHECK(same(sy::min(o(neg_zero), o(zero)), neg_zero));
        CHECK(same(sy::max(o(zero), o(neg_zero)), zero));
        CHECK(same(sy::max(o(neg_zero), o(zero)), zero));
        CHECK(same(sy::min(o(neg_zero), o(neg_zero)), neg_zero));
        CHECK(same(sy::max(o(zero), o(zero)), zero));
        CHECK(same(sy::max(o(neg_zero), o(neg_zero)), neg_zero));
    }
    SECTION("select") {
        CHECK(same(sy::select(o(T(1)) > 0, o(T(3)), o(T(4))), T(3)));
        CHECK(same(sy::select(o(T(-1)) > 0, o(T(3)), o(T(4))), T(4)));
        CHECK(same(sy::select(true, neg_zero, zero), neg_zero));
        CHECK(std::isnan(sy::select(false, T(1), nan)));
    }
}

// Sign symmetry and exactness that the sweeps do not single out.
TEMPLATE_TEST_CASE("math: identities", "[math]", float, double) {
    using T = TestType;
    std::mt19937 rng(42);
    std::uniform_real_distribution<T> dist(T(-30), T(30));
    for (int i = 0; i < 10000; ++i) {
        const T x = opaque(dist(rng));
        INFO("x = " << x);
        CHECK(same(sy::tanh(-x), -sy::tanh(x)));
        CHECK(same(sy::abs(x), std::fabs(x)));
        CHECK(same(sy::min(x, T(1)), std::fmin(x, T(1))));
        CHECK(same(sy::max(x, T(1)), std::fmax(x, T(1))));
        CHECK(same(sy::sqrt(sy::abs(x)), std::sqrt(std::fabs(x))));
    }
}

// ---------------------------------------------------------------- constexpr --

// Everything but sqrt evaluates at compile time.
static_assert(sy::exp(0.0f) == 1.0f && sy::exp(0.0) == 1.0);
static_assert(sy::exp(-200.0f) == 0.0f &&
              sy::exp(700.0) > 1e304);  // (GCC rejects overflow to inf in constant evaluation)
static_assert(sy::expm1(0.0f) == 0.0f && sy::expm1(-100.0) == -1.0);
static_assert(sy::log(1.0f) == 0.0f && sy::log(1.0) == 0.0);
static_assert(sy::log1p(0.0f) == 0.0f && sy::log1p(-1.0) < -1e308);
static_assert(sy::tanh(20.0f) == 1.0f && sy::tanh(-0.0) == 0.0);
static_assert(sy::sigmoid(0.0f) == 0.5f && sy::sigmoid(0.0) == 0.5);
static_assert(sy::softplus(-200.0f) == 0.0f && sy::softplus(50.0) == 50.0);
static_assert(sy::abs(-2.0f) == 2.0f && sy::abs(-2.0) == 2.0);
static_assert(sy::min(1.0f, 2.0f) == 1.0f && sy::max(1.0, 2.0) == 2.0);
static_assert(sy::select(true, 1.0f, 2.0f) == 1.0f && sy::select(false, 1.0, 2.0) == 2.0);
// Compile-time values are accurate too (e = 0x1.5bf0a8b145769p+1).
static_assert(sy::exp(1.0f) >= 0x1.5bf0a6p+1f && sy::exp(1.0f) <= 0x1.5bf0aap+1f);
static_assert(sy::exp(1.0) >= 0x1.5bf0a8b145768p+1 && sy::exp(1.0) <= 0x1.5bf0a8b14576ap+1);

TEMPLATE_TEST_CASE("math: runtime calls, each function", "[math]", float, double) {
    // Plain calls on values the compiler cannot see, as a kernel makes them
    // (the test binary is built at several optimization levels in CI).
    using T = TestType;
    const T x = opaque(T(0.75));
    CHECK(sy::exp(x) == Approx(std::exp(0.75)));
    CHECK(sy::expm1(x) == Approx(std::expm1(0.75)));
    CHECK(sy::log(x) == Approx(std::log(0.75)));
    CHECK(sy::log1p(x) == Approx(std::log1p(0.75)));
    CHECK(sy::tanh(x) == Approx(std::tanh(0.75)));
    CHECK(sy::sigmoid(x) == Approx(1.0 / (1.0 + std::exp(-0.75))));
    CHECK(sy::softplus(x) == Approx(std::log1p(std::exp(0.75))));
    CHECK(sy::sqrt(x) == Approx(std::sqrt(0.75)));
    CHECK(sy::abs(-x) == x);
    CHECK(sy::min(x, T(1)) == x);
    CHECK(sy::max(x, T(1)) == T(1));
    CHECK(sy::select(x > T(0.5), x, T(0)) == x);
    // Compile-time values match run-time values (to an ulp: run-time code
    // may be FMA-contracted, constant evaluation is not).
    constexpr T cx = T(0.75);
    constexpr T c[] = {sy::exp(cx),  sy::expm1(cx),   sy::log(cx),     sy::log1p(cx),
                       sy::tanh(cx), sy::sigmoid(cx), sy::softplus(cx)};
    const T r[] = {sy::exp(x), sy::expm1(x), sy::log(x), sy::log1p(x), sy::tanh(x), sy::sigmoid(x), sy::softplus(x)};
    for (int i = 0; i < 7; ++i) {
        INFO("function " << i);
        CHECK(ulp_error<T>(r[i], c[i]) <= 1.0);
    }
}

// softplus_to<Storage> on the host is softplus itself for every storage type,
// 2-byte floating ones included (the reduced-precision path exists only in
// CUDA device code, where tests/cuda/test_cuda.cu checks it for every f16
// and bf16 input).
TEST_CASE("math: softplus_to is softplus on the host", "[math]") {
    for (float const x :
         {-1e30f, -104.0f, -20.0f, -1.5f, -0.0f, 0.0f, 1e-30f, 0.75f, 19.0f, 1e30f, INFINITY, -INFINITY}) {
        CHECK(std::bit_cast<std::uint32_t>(switchyard::softplus_to<switchyard::half>(x)) ==
              std::bit_cast<std::uint32_t>(switchyard::softplus(x)));
        CHECK(std::bit_cast<std::uint32_t>(switchyard::softplus_to<switchyard::bfloat16>(x)) ==
              std::bit_cast<std::uint32_t>(switchyard::softplus(x)));
        CHECK(std::bit_cast<std::uint32_t>(switchyard::softplus_to<float>(x)) ==
              std::bit_cast<std::uint32_t>(switchyard::softplus(x)));
        CHECK(std::bit_cast<std::uint64_t>(switchyard::softplus_to<double>(double{x})) ==
              std::bit_cast<std::uint64_t>(switchyard::softplus(double{x})));
    }
    CHECK(std::isnan(switchyard::softplus_to<switchyard::half>(NAN)));
}

// exp_to<Storage> on the host is exp itself for every storage type (the
// special-function-unit path exists only in CUDA device code, checked there
// for every f16 and bf16 input).
TEST_CASE("math: exp_to is exp on the host", "[math]") {
    for (float const x : {-1e30f, -104.0f, -87.5f, -20.0f, -1.5f, -0.0f, 0.0f, 1e-30f, 0.75f, 11.5f, 88.5f, 1e30f,
                          INFINITY, -INFINITY}) {
        CHECK(std::bit_cast<std::uint32_t>(switchyard::exp_to<switchyard::half>(x)) ==
              std::bit_cast<std::uint32_t>(switchyard::exp(x)));
        CHECK(std::bit_cast<std::uint32_t>(switchyard::exp_to<switchyard::bfloat16>(x)) ==
              std::bit_cast<std::uint32_t>(switchyard::exp(x)));
        CHECK(std::bit_cast<std::uint32_t>(switchyard::exp_to<float>(x)) ==
              std::bit_cast<std::uint32_t>(switchyard::exp(x)));
        CHECK(std::bit_cast<std::uint64_t>(switchyard::exp_to<double>(double{x})) ==
              std::bit_cast<std::uint64_t>(switchyard::exp(double{x})));
    }
    CHECK(std::isnan(switchyard::exp_to<switchyard::bfloat16>(NAN)));
}

// sigmoid_to<Storage> on the host: sigmoid itself for 4- and 8-byte storage;
// for f16 and bf16 the shorter 1 / (1 + exp(-x)), which after rounding to the
// storage type must be within 0.53 ulp of it for every 16-bit input (ulp of
// the storage type at the long double reference).
template <typename Storage>
void check_sigmoid_to_on_host(int mantissa_bits, int min_exponent) {
    double worst = 0;
    for (std::uint32_t b = 0; b < 65536; ++b) {
        float const x = static_cast<float>(Storage::from_bits(static_cast<std::uint16_t>(b)));
        float const got = static_cast<float>(Storage(switchyard::sigmoid_to<Storage>(x)));
        if (std::isnan(x)) {
            CHECK(std::isnan(got));
            continue;
        }
        long double const ref = 1.0L / (1.0L + std::exp(-static_cast<long double>(x)));
        int exponent = 0;
        std::frexp(static_cast<double>(ref), &exponent);
        exponent = std::max(exponent - 1, min_exponent);
        double const ulp = std::ldexp(1.0, exponent - mantissa_bits);
        worst = std::max(worst, static_cast<double>(std::fabs(static_cast<long double>(got) - ref)) / ulp);
    }
    INFO("worst " << worst << " ulp");
    CHECK(worst <= 0.53);
}

TEST_CASE("math: sigmoid_to on the host", "[math]") {
    check_sigmoid_to_on_host<switchyard::half>(10, -14);
    check_sigmoid_to_on_host<switchyard::bfloat16>(7, -126);
    for (float const x : {-1e30f, -104.0f, -20.0f, -1.5f, -0.0f, 0.0f, 0.75f, 19.0f, 1e30f, INFINITY, -INFINITY}) {
        CHECK(std::bit_cast<std::uint32_t>(switchyard::sigmoid_to<float>(x)) ==
              std::bit_cast<std::uint32_t>(switchyard::sigmoid(x)));
        CHECK(std::bit_cast<std::uint64_t>(switchyard::sigmoid_to<double>(double{x})) ==
              std::bit_cast<std::uint64_t>(switchyard::sigmoid(double{x})));
    }
}

// ---------------------------------------------- using namespace switchyard ---

// User code may say `using namespace switchyard;` (here in a namespace of its
// own and in a function body, so the rest of this file is unaffected).
// Unqualified calls must not be ambiguous: where a global function takes the
// arguments as well as switchyard's (libm's sqrt(double), exp(double), ...),
// the global one is called; where none does (min, max; exp(float) while
// <cmath> declares only ::exp(double) globally), switchyard's is.
namespace user_code_using_switchyard {
using namespace switchyard;

double unqualified_double(double x) { return sqrt(x) + exp(x) + log(x) + tanh(x) + min(x, 1.0) + max(x, 2.0); }
float unqualified_float(float x) { return sqrt(x) + exp(x) + log(x) + tanh(x) + min(x, 1.0f) + max(x, 2.0f); }

}  // namespace user_code_using_switchyard

// Qualified calls resolve as they would with plain functions: arguments
// convert (int, half, bfloat16 to float), and one overload's address can be
// taken.
static_assert(std::is_same_v<decltype(sy::exp(sy::half(1.0f))), float>);
static_assert(std::is_same_v<decltype(sy::sigmoid(sy::bfloat16(1.0f))), float>);
static_assert(sy::min(2.0f, 1) == 1.0f && sy::select(false, 1.0, 0) == 0.0);

// Found writing the fuzz target: select, min and max on integers were
// ambiguous between the float and double overloads.
TEST_CASE("math: select, min and max on integers", "[math]") {
    STATIC_REQUIRE(sy::select(true, 3, 4) == 3);
    STATIC_REQUIRE(std::is_same_v<decltype(sy::select(false, std::int64_t{3}, std::int64_t{4})), std::int64_t>);
    CHECK(sy::min(opaque(-2), 5) == -2);
    CHECK(sy::max(opaque(-2), 5) == 5);
    CHECK(sy::min(opaque(std::int64_t{1} << 40), std::int64_t{7}) == 7);
    CHECK(sy::max(opaque(0xFFFFFFFFu), 1u) == 0xFFFFFFFFu);
    CHECK(sy::select(opaque(1) > 0, std::uint8_t{9}, std::uint8_t{1}) == 9);
}

TEST_CASE("math: using namespace switchyard leaves unqualified calls unambiguous", "[math]") {
    float (*const exp_f32)(float) = &sy::exp;
    CHECK(exp_f32(opaque(0.0f)) == 1.0f);
    using namespace switchyard;
    CHECK(std::bit_cast<std::uint64_t>(sqrt(opaque(2.0))) == std::bit_cast<std::uint64_t>(std::sqrt(2.0)));
    // switchyard's exp(float) on glibc (an exact match beats ::exp(double)); it
    // rounds e correctly, as libm's expf does.
    CHECK(std::bit_cast<std::uint32_t>(exp(opaque(1.0f))) == std::bit_cast<std::uint32_t>(std::exp(1.0f)));
    CHECK(min(opaque(1.0), 2.0) == 1.0);
    CHECK(max(opaque(1.0f), 2.0f) == 2.0f);
    CHECK(abs(opaque(-3)) == 3);  // ::abs(int)
    static_assert(std::is_same_v<decltype(abs(-3)), int>);
    static_assert(std::is_same_v<decltype(exp(1)), double>);  // ::exp(double), as without the directive
    static_assert(std::is_same_v<decltype(exp(1.0f)), float>);
    // The global function is the one called: on these inputs libm's exp and
    // log (double) differ from switchyard's in some results, and the
    // unqualified calls match libm in all of them.
    int differs_from_switchyard = 0;
    for (int i = 0; i < 1000; ++i) {
        const double x = opaque(-20.0 + 0.0401 * i);
        CHECK(std::bit_cast<std::uint64_t>(exp(x)) == std::bit_cast<std::uint64_t>(std::exp(x)));
        CHECK(std::bit_cast<std::uint64_t>(log(x + 21.0)) == std::bit_cast<std::uint64_t>(std::log(x + 21.0)));
        differs_from_switchyard += (sy::exp(x) != std::exp(x)) + (sy::log(x + 21.0) != std::log(x + 21.0));
    }
    CHECK(differs_from_switchyard > 0);
    const double d = opaque(0.5);
    CHECK(user_code_using_switchyard::unqualified_double(d) ==
          std::sqrt(d) + std::exp(d) + std::log(d) + std::tanh(d) + 0.5 + 2.0);
    CHECK(user_code_using_switchyard::unqualified_float(opaque(0.5f)) ==
          Approx(std::sqrt(0.5) + std::exp(0.5) + std::log(0.5) + std::tanh(0.5) + 0.5 + 2.0).epsilon(1e-6));
    // Shader values still reach the shader overloads (a host value computes
    // switchyard's float function).
    CHECK(exp(shader::value<float>(1.0f)).host() == sy::exp(1.0f));
    CHECK(min(shader::value<float>(1.0f), shader::value<float>(2.0f)).host() == 1.0f);
}
