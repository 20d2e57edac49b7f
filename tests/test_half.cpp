// Tests for the half and bfloat16 storage types. Conversions are checked
// exhaustively where the domain is 16 bits, and float -> 16-bit rounding is
// checked against a reference that knows nothing about bit tricks: it
// searches the sorted list of representable values (built with std::ldexp)
// and picks the nearest one with double arithmetic.
#include <catch2/catch.hpp>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "switchyard/core/bfloat16.h"
#include "switchyard/core/half.h"

using switchyard::bfloat16;
using switchyard::half;

namespace {

// ---------------------------------------------------------------- traits ---

static_assert(std::is_trivially_copyable_v<half>);
static_assert(std::is_trivially_default_constructible_v<half>);
static_assert(std::is_standard_layout_v<half>);
static_assert(sizeof(half) == 2 && alignof(half) == 2);
static_assert(std::is_constructible_v<half, float>);
static_assert(!std::is_convertible_v<float, half>);     // explicit
static_assert(std::is_convertible_v<half, float>);      // implicit
static_assert(!std::is_constructible_v<half, double>);  // no double rounding

static_assert(std::is_trivially_copyable_v<bfloat16>);
static_assert(std::is_trivially_default_constructible_v<bfloat16>);
static_assert(std::is_standard_layout_v<bfloat16>);
static_assert(sizeof(bfloat16) == 2 && alignof(bfloat16) == 2);
static_assert(std::is_constructible_v<bfloat16, float>);
static_assert(!std::is_convertible_v<float, bfloat16>);
static_assert(std::is_convertible_v<bfloat16, float>);
static_assert(!std::is_constructible_v<bfloat16, double>);

// ------------------------------------------------------------- constexpr ---

constexpr float kQNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

static_assert(float(half(1.0f)) == 1.0f);
static_assert(half(1.0f).bits == 0x3C00);
static_assert(half(-2.0f).bits == 0xC000);
static_assert(half(65504.0f).bits == 0x7BFF);
static_assert(half(65519.0f).bits == 0x7BFF);
static_assert(half(65520.0f).bits == 0x7C00);
static_assert(half(kInf).bits == 0x7C00);
static_assert(half(kQNaN).bits == 0x7E00);
static_assert(half(0x1p-24f).bits == 0x0001);
static_assert(half(0x1p-25f).bits == 0x0000);  // tie -> even (zero)
static_assert(float(half::from_bits(0x0001)) == 0x1p-24f);
static_assert(float(half::from_bits(0x7C00)) == kInf);
static_assert(float(half::from_bits(0x7C01)) != float(half::from_bits(0x7C01)));  // NaN
static_assert(half::from_bits(0x1234).bits == 0x1234);
static_assert(half{}.bits == 0);

static_assert(float(bfloat16(1.0f)) == 1.0f);
static_assert(bfloat16(1.0f).bits == 0x3F80);
static_assert(bfloat16(kInf).bits == 0x7F80);
static_assert(bfloat16(kQNaN).bits == 0x7FC0);
static_assert(float(bfloat16::from_bits(0x4049)) == 3.140625f);
static_assert(bfloat16::from_bits(0x1234).bits == 0x1234);

// --------------------------------------------------------------- helpers ---

std::uint32_t f2u(float f) { return std::bit_cast<std::uint32_t>(f); }
float u2f(std::uint32_t u) { return std::bit_cast<float>(u); }

// A binary format with 1 sign bit, `exp_bits` exponent bits and `man_bits`
// mantissa bits (16 in total), decoded from its fields only.
struct Format {
    int exp_bits;
    int man_bits;

    int bias() const { return (1 << (exp_bits - 1)) - 1; }
    std::uint16_t exp_field(std::uint16_t b) const {
        return static_cast<std::uint16_t>((b >> man_bits) & ((1u << exp_bits) - 1u));
    }
    std::uint16_t man_field(std::uint16_t b) const { return static_cast<std::uint16_t>(b & ((1u << man_bits) - 1u)); }
    bool is_nan(std::uint16_t b) const { return exp_field(b) == (1u << exp_bits) - 1u && man_field(b) != 0; }
    std::uint16_t inf_bits() const { return static_cast<std::uint16_t>(((1u << exp_bits) - 1u) << man_bits); }
    // Value of a non-NaN pattern.
    double value(std::uint16_t b) const {
        const int e = exp_field(b);
        const int m = man_field(b);
        double v;
        if (e == 0) {
            v = std::ldexp(static_cast<double>(m), 1 - bias() - man_bits);
        } else if (e == (1 << exp_bits) - 1) {
            v = std::numeric_limits<double>::infinity();
        } else {
            v = std::ldexp(static_cast<double>((1 << man_bits) + m), e - bias() - man_bits);
        }
        return (b & 0x8000u) ? -v : v;
    }
};

constexpr Format kHalfFormat{5, 10};
constexpr Format kBf16Format{8, 7};

// Sorted non-negative finite values of a format (index == bit pattern), plus
// the value one step past the largest finite, which is where an unbounded
// exponent would put the next value: rounding to it means overflow to inf.
struct Table {
    Format fmt;
    std::vector<double> pos;
    double beyond;

    explicit Table(Format f) : fmt(f) {
        const std::uint16_t n = f.inf_bits();
        pos.resize(n);
        for (std::uint32_t i = 0; i < n; ++i) pos[i] = f.value(static_cast<std::uint16_t>(i));
        beyond = std::ldexp(1.0, (1 << (f.exp_bits - 1)));  // 2^(emax + 1)
        REQUIRE(std::is_sorted(pos.begin(), pos.end()));
    }

    double next_after(std::uint32_t i) const { return i + 1 < pos.size() ? pos[i + 1] : beyond; }

    // Reference float -> format rounding (nearest, ties to even, overflow to
    // inf) for a non-NaN float. All quantities are exact in double.
    std::uint16_t round(float f) const {
        const std::uint16_t sign = std::signbit(f) ? 0x8000 : 0;
        const double a = std::fabs(static_cast<double>(f));
        std::uint32_t r;
        if (std::isinf(a)) {
            r = fmt.inf_bits();
        } else {
            const auto it = std::upper_bound(pos.begin(), pos.end(), a);
            const auto i = static_cast<std::uint32_t>(it - pos.begin()) - 1;  // pos[0] == 0 <= a
            const double lo = pos[i];
            const double hi = next_after(i);
            const double mid = (lo + hi) / 2;  // exact: few significant bits
            if (a == lo || a < mid) {
                r = i;
            } else if (a > mid) {
                r = i + 1;
            } else {
                r = (i % 2 == 0) ? i : i + 1;  // pattern parity == mantissa lsb parity
            }
        }
        return static_cast<std::uint16_t>(sign | r);
    }
};

const Table& half_table() {
    static const Table t(kHalfFormat);
    return t;
}
const Table& bf16_table() {
    static const Table t(kBf16Format);
    return t;
}

// Counts mismatches and remembers the first few, so millions of cases cost
// one Catch assertion instead of millions.
struct Mismatches {
    std::size_t count = 0;
    std::string first;

    void add(float in, unsigned got, unsigned want) {
        if (count++ < 5) {
            char buf[160];
            std::snprintf(buf, sizeof buf, "in=%a (0x%08x) got=0x%04x want=0x%04x\n", static_cast<double>(in), f2u(in),
                          got, want);
            first += buf;
        }
    }
};

template <class T>
std::uint16_t convert(float f) {
    return T(f).bits;
}

// Checks T(f) against the reference, including the NaN contract: a NaN input
// gives a NaN of the same sign with the quiet bit set.
template <class T>
void check_one(const Table& t, float f, Mismatches& mm) {
    const std::uint16_t got = convert<T>(f);
    if (std::isnan(f)) {
        const unsigned quiet_bit = 1u << (t.fmt.man_bits - 1);
        const bool ok = t.fmt.is_nan(got) && (got & quiet_bit) != 0 && ((got & 0x8000u) != 0) == std::signbit(f);
        if (!ok) mm.add(f, got, 0xFFFF);
        return;
    }
    const std::uint16_t want = t.round(f);
    if (got != want) mm.add(f, got, want);
}

// Every tie between adjacent representable magnitudes (including the one
// between the largest finite value and the overflow point), and the floats
// immediately on either side of it.
template <class T>
void check_ties(const Table& t) {
    Mismatches tie_mm, below_mm, above_mm, ref_mm;
    for (std::uint32_t i = 0; i < t.pos.size(); ++i) {
        const double mid_d = (t.pos[i] + t.next_after(i)) / 2;
        const float mid = static_cast<float>(mid_d);
        REQUIRE(static_cast<double>(mid) == mid_d);  // the tie must be a float
        const auto even = static_cast<std::uint16_t>(i % 2 == 0 ? i : i + 1);
        const auto lo = static_cast<std::uint16_t>(i);
        const auto hi = static_cast<std::uint16_t>(i + 1);
        const float below = std::nextafter(mid, 0.0f);
        const float above = std::nextafter(mid, kInf);
        for (const std::uint16_t s : {std::uint16_t{0}, std::uint16_t{0x8000}}) {
            const float sg = s ? -1.0f : 1.0f;
            if (convert<T>(sg * mid) != (even | s)) tie_mm.add(sg * mid, convert<T>(sg * mid), even | s);
            if (convert<T>(sg * below) != (lo | s)) below_mm.add(sg * below, convert<T>(sg * below), lo | s);
            if (convert<T>(sg * above) != (hi | s)) above_mm.add(sg * above, convert<T>(sg * above), hi | s);
            // The reference must agree with these hand-derived expectations too.
            if (t.round(sg * mid) != (even | s) || t.round(sg * below) != (lo | s) || t.round(sg * above) != (hi | s))
                ref_mm.add(sg * mid, t.round(sg * mid), even | s);
        }
    }
    INFO(tie_mm.first << below_mm.first << above_mm.first << ref_mm.first);
    CHECK(tie_mm.count == 0);
    CHECK(below_mm.count == 0);
    CHECK(above_mm.count == 0);
    CHECK(ref_mm.count == 0);
}

}  // namespace

// ================================================================== half ===

TEST_CASE("half to float is exact for all 65536 patterns", "[half]") {
    Mismatches mm;
    std::size_t nan_count = 0;
    for (std::uint32_t b = 0; b < 0x10000; ++b) {
        const auto h = static_cast<std::uint16_t>(b);
        const float f = half::from_bits(h);
        if (kHalfFormat.is_nan(h)) {
            ++nan_count;
            // Quieting (setting the top mantissa bit) is allowed; the sign and the
            // other 9 payload bits, which land at float mantissa bits 13..21, must
            // survive.
            const std::uint32_t payload = 0x1FFu;
            if (!std::isnan(f) || std::signbit(f) != ((h & 0x8000u) != 0) ||
                ((f2u(f) >> 13) & payload) != (h & payload))
                mm.add(f, h, 0xFFFF);
            continue;
        }
        const double want = kHalfFormat.value(h);
        // Compare bit patterns so that -0 vs +0 is checked too.
        if (f2u(f) != f2u(static_cast<float>(want))) mm.add(f, h, h);
    }
    INFO(mm.first);
    CHECK(mm.count == 0);
    CHECK(nan_count == 2 * 1023);
}

TEST_CASE("half round-trips through float", "[half]") {
    Mismatches mm;
    for (std::uint32_t b = 0; b < 0x10000; ++b) {
        const auto h = static_cast<std::uint16_t>(b);
        const float f = half::from_bits(h);
        const std::uint16_t back = half(f).bits;
        if (kHalfFormat.is_nan(h)) {
            const bool ok = kHalfFormat.is_nan(back) && (back & 0x8000u) == (h & 0x8000u) && (back & 0x0200u) != 0;
            if (!ok) mm.add(f, back, 0xFFFF);
        } else if (back != h) {
            mm.add(f, back, h);
        }
    }
    INFO(mm.first);
    CHECK(mm.count == 0);
}

TEST_CASE("float to half rounds to nearest even at and around every tie", "[half]") { check_ties<half>(half_table()); }

TEST_CASE("float to half special values and boundaries", "[half]") {
    const auto h = [](float f) { return half(f).bits; };
    CHECK(h(0.0f) == 0x0000);
    CHECK(h(-0.0f) == 0x8000);
    CHECK(h(1.0f) == 0x3C00);
    CHECK(h(-1.0f) == 0xBC00);
    CHECK(h(65504.0f) == 0x7BFF);
    CHECK(h(65519.99f) == 0x7BFF);
    CHECK(h(std::nextafter(65520.0f, 0.0f)) == 0x7BFF);
    CHECK(h(65520.0f) == 0x7C00);
    CHECK(h(-65520.0f) == 0xFC00);
    CHECK(h(65536.0f) == 0x7C00);
    CHECK(h(1e30f) == 0x7C00);
    CHECK(h(std::numeric_limits<float>::max()) == 0x7C00);
    CHECK(h(-std::numeric_limits<float>::max()) == 0xFC00);
    CHECK(h(kInf) == 0x7C00);
    CHECK(h(-kInf) == 0xFC00);
    // Subnormal range.
    CHECK(h(std::numeric_limits<float>::denorm_min()) == 0x0000);
    CHECK(h(-std::numeric_limits<float>::denorm_min()) == 0x8000);
    CHECK(h(std::numeric_limits<float>::min()) == 0x0000);
    CHECK(h(0x1p-24f) == 0x0001);
    CHECK(h(0x1p-25f) == 0x0000);  // tie -> 0 (even)
    CHECK(h(std::nextafter(0x1p-25f, 1.0f)) == 0x0001);
    CHECK(h(0x3p-25f) == 0x0002);                        // 1.5 ulp tie -> 2 (even)
    CHECK(h(0x5p-25f) == 0x0002);                        // 2.5 ulp tie -> 2 (even)
    CHECK(h(1023.0f * 0x1p-24f) == 0x03FF);              // largest subnormal
    CHECK(h(1023.5f * 0x1p-24f) == 0x0400);              // tie rounds up into normal
    CHECK(h(std::nextafter(0x1p-14f, 0.0f)) == 0x0400);  // rounds up to smallest normal
    CHECK(h(0x1p-14f) == 0x0400);
    CHECK(h(-0x1p-14f) == 0x8400);
}

TEST_CASE("float to half keeps NaN a quiet NaN with its sign", "[half]") {
    const std::uint32_t nans[] = {0x7FC00000u, 0x7F800001u, 0x7F801FFFu, 0x7FA00000u,
                                  0x7FFFFFFFu, 0xFF800001u, 0xFFC00000u, 0xFFFFFFFFu};
    for (const std::uint32_t u : nans) {
        const std::uint16_t b = half(u2f(u)).bits;
        CAPTURE(u, b);
        CHECK(kHalfFormat.is_nan(b));
        CHECK((b & 0x0200u) != 0);
        CHECK(((b & 0x8000u) != 0) == ((u & 0x80000000u) != 0));
    }
}

TEST_CASE("float to half matches the reference on random floats", "[half]") {
    const Table& t = half_table();
    std::mt19937 rng(20240611u);
    Mismatches full_mm, near_mm;
    // Uniform bit patterns: every exponent, NaNs and infinities included.
    for (int k = 0; k < 1000000; ++k) check_one<half>(t, u2f(rng()), full_mm);
    // Exponents 100..143 span below the smallest subnormal half up to past
    // the overflow threshold, where nearly all interesting rounding happens.
    for (int k = 0; k < 2000000; ++k) {
        const std::uint32_t u = rng();
        const std::uint32_t exp = 100u + (u >> 24) % 44u;
        check_one<half>(t, u2f((u & 0x807FFFFFu) | (exp << 23)), near_mm);
    }
    INFO(full_mm.first << near_mm.first);
    CHECK(full_mm.count == 0);
    CHECK(near_mm.count == 0);
}

// ============================================================== bfloat16 ===

TEST_CASE("bfloat16 to float is exact for all 65536 patterns", "[bfloat16]") {
    Mismatches mm;
    for (std::uint32_t b = 0; b < 0x10000; ++b) {
        const auto v = static_cast<std::uint16_t>(b);
        const float f = bfloat16::from_bits(v);
        if (kBf16Format.is_nan(v)) {
            // NaNs stay NaN, sign and payload intact (the conversion is exact).
            if (!std::isnan(f) || f2u(f) != (b << 16)) mm.add(f, v, 0xFFFF);
            continue;
        }
        if (f2u(f) != f2u(static_cast<float>(kBf16Format.value(v)))) mm.add(f, v, v);
    }
    INFO(mm.first);
    CHECK(mm.count == 0);
}

TEST_CASE("bfloat16 round-trips through float", "[bfloat16]") {
    Mismatches mm;
    for (std::uint32_t b = 0; b < 0x10000; ++b) {
        const auto v = static_cast<std::uint16_t>(b);
        const float f = bfloat16::from_bits(v);
        const std::uint16_t back = bfloat16(f).bits;
        if (kBf16Format.is_nan(v)) {
            const bool ok = kBf16Format.is_nan(back) && (back & 0x8000u) == (v & 0x8000u) && (back & 0x0040u) != 0;
            if (!ok) mm.add(f, back, 0xFFFF);
        } else if (back != v) {
            mm.add(f, back, v);
        }
    }
    INFO(mm.first);
    CHECK(mm.count == 0);
}

TEST_CASE("float to bfloat16 rounds to nearest even at and around every tie", "[bfloat16]") {
    check_ties<bfloat16>(bf16_table());
}

TEST_CASE("float to bfloat16 special values and boundaries", "[bfloat16]") {
    const auto b = [](float f) { return bfloat16(f).bits; };
    CHECK(b(0.0f) == 0x0000);
    CHECK(b(-0.0f) == 0x8000);
    CHECK(b(kInf) == 0x7F80);
    CHECK(b(-kInf) == 0xFF80);
    CHECK(b(u2f(0x7F7F7FFFu)) == 0x7F7F);  // just below the tie: largest finite
    CHECK(b(u2f(0x7F7F8000u)) == 0x7F80);  // tie, odd lsb -> rounds to inf
    CHECK(b(std::numeric_limits<float>::max()) == 0x7F80);
    CHECK(b(-std::numeric_limits<float>::max()) == 0xFF80);
    CHECK(b(u2f(0x00008000u)) == 0x0000);  // subnormal tie -> even (zero)
    CHECK(b(u2f(0x00018000u)) == 0x0002);  // subnormal tie -> even
    CHECK(b(u2f(0x007FFFFFu)) == 0x0080);  // largest float subnormal -> smallest normal
}

TEST_CASE("float to bfloat16 keeps NaN a quiet NaN with its sign", "[bfloat16]") {
    // 0x7FFFFFFF would carry into the sign bit and 0x7F800001 would truncate
    // to infinity under plain rounding.
    const std::uint32_t nans[] = {0x7FC00000u, 0x7F800001u, 0x7F80FFFFu, 0x7FFFFFFFu,
                                  0x7FFF8000u, 0xFF800001u, 0xFFFFFFFFu};
    for (const std::uint32_t u : nans) {
        const std::uint16_t v = bfloat16(u2f(u)).bits;
        CAPTURE(u, v);
        CHECK(kBf16Format.is_nan(v));
        CHECK((v & 0x0040u) != 0);
        CHECK(((v & 0x8000u) != 0) == ((u & 0x80000000u) != 0));
    }
}

TEST_CASE("float to bfloat16 matches the reference on random floats", "[bfloat16]") {
    const Table& t = bf16_table();
    std::mt19937 rng(7031u);
    Mismatches mm;
    for (int k = 0; k < 2000000; ++k) check_one<bfloat16>(t, u2f(rng()), mm);
    INFO(mm.first);
    CHECK(mm.count == 0);
}
