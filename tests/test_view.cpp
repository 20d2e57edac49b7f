// Tests of the view and device layers: strided_ref validation, fast
// division, iteration orders, flat and ranked views against a naive
// reference, and the CPU device, any_device and buffer.
#include <switchyard/device/any_device.h>
#include <switchyard/device/buffer.h>
#include <switchyard/device/cpu.h>
#include <switchyard/view.h>

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <numeric>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

using namespace switchyard;

static_assert(std::is_trivially_copyable_v<strided_ref>);
static_assert(std::is_trivially_copyable_v<flat_in<device_kind::cpu, dtype::f32, contiguity::strided>>);
static_assert(std::is_trivially_copyable_v<flat_out<device_kind::cpu, dtype::f64, contiguity::contiguous>>);
static_assert(std::is_trivially_copyable_v<tensor_in<device_kind::cpu, dtype::i32, 3, contiguity::strided>>);
static_assert(std::is_trivially_copyable_v<tensor_out<device_kind::cpu, dtype::f16, 0, contiguity::contiguous>>);
static_assert(std::is_same_v<flat_in<device_kind::cpu, dtype::bf16, contiguity::contiguous>::value_type, bfloat16>);

namespace {

// Offset of row-major index i by plain division: the reference views must match.
std::int64_t reference_offset(std::vector<std::int64_t> const& sizes, std::vector<std::int64_t> const& strides,
                              std::int64_t i) {
    std::int64_t offset = 0;
    for (std::size_t d = sizes.size(); d-- > 0;) {
        offset += (i % sizes[d]) * strides[d];
        i /= sizes[d];
    }
    return offset;
}

struct layout {
    std::vector<std::int64_t> sizes, strides;
    std::int64_t base = 0;  // offset of element 0 inside the storage
    std::int64_t numel() const {
        return std::accumulate(sizes.begin(), sizes.end(), std::int64_t{1}, std::multiplies<>());
    }
};

// A random layout of the given rank: a row-major array, then some of:
// a permutation of dimensions, slicing with steps and offsets, broadcasting
// (stride 0), size-1 dimensions.
layout random_layout(std::mt19937& rng, int rank) {
    std::uniform_int_distribution<int> size_of(1, 4), coin(0, 3);
    layout l;
    for (int d = 0; d < rank; ++d) l.sizes.push_back(size_of(rng));
    // parent sizes larger than the view for slicing
    std::vector<std::int64_t> parent(l.sizes), step(rank, 1), start(rank, 0);
    for (int d = 0; d < rank; ++d)
        if (coin(rng) == 0) {
            step[d] = 1 + coin(rng) % 2;
            start[d] = coin(rng) % 2;
            parent[d] = start[d] + (l.sizes[d] - 1) * step[d] + 1;
        }
    std::vector<std::int64_t> parent_strides(rank);
    std::int64_t s = 1;
    for (int d = rank; d-- > 0;) {
        parent_strides[d] = s;
        s *= parent[d];
    }
    l.strides.resize(rank);
    for (int d = 0; d < rank; ++d) {
        l.strides[d] = parent_strides[d] * step[d];
        l.base += start[d] * parent_strides[d];
    }
    // permute dimensions (sizes and strides together)
    std::vector<int> perm(rank);
    std::iota(perm.begin(), perm.end(), 0);
    if (coin(rng) != 0) std::shuffle(perm.begin(), perm.end(), rng);
    layout p{{}, {}, l.base};
    for (int d = 0; d < rank; ++d) {
        p.sizes.push_back(l.sizes[perm[d]]);
        p.strides.push_back(l.strides[perm[d]]);
    }
    // broadcast one dimension
    if (rank > 0 && coin(rng) == 0) p.strides[coin(rng) % rank] = 0;
    return p;
}

}  // namespace

TEST_CASE("strided_ref validates and names the argument", "[view]") {
    float x[4] = {};
    std::int64_t const sizes9[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1}, strides9[9] = {};
    CHECK_THROWS_WITH(strided_ref::make(x, dtype::f32, device_kind::cpu, sizes9, strides9, 9, "big"),
                      Catch::Contains("'big': rank 9 exceeds switchyard's maximum of 8 dimensions"));
    CHECK_THROWS_WITH(strided_ref::make(x, dtype::f32, device_kind::cpu, {2, -3}, {1, 1}, "neg"),
                      Catch::Contains("'neg': size of dimension 1 is -3; sizes must be >= 0"));
    CHECK_THROWS_WITH(strided_ref::make(nullptr, dtype::f32, device_kind::cpu, {2}, {1}, "nul"),
                      Catch::Contains("'nul': data pointer is null but the array has 2 elements"));
    CHECK_NOTHROW(strided_ref::make(nullptr, dtype::f32, device_kind::cpu, {0, 5}, {5, 1}, "empty"));
    CHECK_THROWS_WITH(strided_ref::make(x, dtype::f32, device_kind::cpu, {1 << 30, 1 << 30, 1 << 30}, {1, 1, 1}, "n"),
                      Catch::Contains("'n': the element count overflows int64"));
    CHECK_THROWS_WITH(strided_ref::make(x, dtype::f32, device_kind::cpu, {3, 4}, {std::int64_t{1} << 62, 1}, "s"),
                      Catch::Contains("'s': sizes x strides overflow int64 (dimension 0)"));
    CHECK_THROWS_WITH(strided_ref::make(x, dtype::f32, device_kind::cpu, {3, 4}, {1}, "m"),
                      Catch::Contains("'m': 2 sizes but 1 strides"));
    // Issue 18: a pointer between elements was read through typed pointers.
    auto* const bytes = reinterpret_cast<unsigned char*>(x);
    CHECK_THROWS_WITH(
        strided_ref::make(bytes + 1, dtype::f32, device_kind::cpu, {2}, {1}, "odd"),
        Catch::Contains("'odd': data pointer 0x") && Catch::Contains("is not aligned to its 4-byte f32 elements"));
    CHECK_THROWS_WITH(strided_ref::make(bytes + 2, dtype::f64, device_kind::cuda, {1}, {1}, "odd"),
                      Catch::Contains("8-byte f64 elements"));
    CHECK_NOTHROW(strided_ref::make(bytes + 2, dtype::f16, device_kind::cpu, {1}, {1}, "half"));
    CHECK_NOTHROW(strided_ref::make(bytes + 1, dtype::f32, device_kind::cpu, {0}, {1}, "empty"));
    CHECK_NOTHROW(strided_ref::make(bytes + 1, dtype::f32, device_kind::webgpu, {2}, {1}, "handle"));
    auto const c = strided_ref::contiguous(x, dtype::f32, device_kind::cpu, {2, 1, 2}, "c");
    CHECK(c.is_contiguous());
    CHECK(c.numel() == 4);
    CHECK(c.strides[0] == 2);
    CHECK(c.strides[2] == 1);
}

TEST_CASE("fast_divider matches hardware division", "[view]") {
    std::mt19937_64 rng(7);
    std::vector<std::int64_t> divisors = {1,
                                          2,
                                          3,
                                          5,
                                          7,
                                          10,
                                          64,
                                          100,
                                          641,
                                          1000003,
                                          (1LL << 31) - 1,
                                          1LL << 32,
                                          (1LL << 32) + 1,
                                          (1LL << 62) + 1,
                                          std::numeric_limits<std::int64_t>::max()};
    for (int k = 0; k < 200; ++k) divisors.push_back(static_cast<std::int64_t>(rng() >> (1 + rng() % 62)) + 1);
    std::vector<std::int64_t> numerators = {
        0, 1, 2, 3, std::numeric_limits<std::int64_t>::max(), std::numeric_limits<std::int64_t>::max() - 1};
    std::size_t mismatches = 0;
    for (auto d : divisors) {
        fast_divider const f(d);
        auto check = [&](std::int64_t n) { mismatches += f.divide(n) != n / d; };
        for (auto n : numerators) check(n);
        for (int k = 0; k < 2000; ++k) check(static_cast<std::int64_t>(rng() >> (1 + rng() % 63)));
        // Around multiples of d, where the quotient steps (without overflowing int64).
        std::int64_t constexpr max = std::numeric_limits<std::int64_t>::max();
        for (std::int64_t k : {1, 2, 3})
            if (d <= max / k) {
                check(k * d - 1);
                check(k * d);
                if (k * d < max) check(k * d + 1);
            }
    }
    CHECK(mismatches == 0);
}

TEST_CASE("flat views match a naive reference for ranks 0-6 and all layouts", "[view]") {
    std::mt19937 rng(42);
    std::vector<float> storage(1 << 16);
    std::iota(storage.begin(), storage.end(), 0.0f);
    for (int rank = 0; rank <= 6; ++rank)
        for (int trial = 0; trial < 60; ++trial) {
            auto const l = random_layout(rng, rank);
            INFO("rank " << rank << " trial " << trial);
            auto const ref = strided_ref::make(storage.data() + l.base, dtype::f32, device_kind::cpu, l.sizes.data(),
                                               l.strides.data(), rank, "x");
            flat_out<device_kind::cpu, dtype::f32, contiguity::strided> const in(ref);
            REQUIRE(in.size() == l.numel());
            for (std::int64_t i = 0; i < l.numel(); ++i)
                REQUIRE(&in[i] - storage.data() == l.base + reference_offset(l.sizes, l.strides, i));

            // Under a joint order with a row-major output, index i still pairs
            // the same logical element of both.
            std::vector<float> out_storage(static_cast<std::size_t>(l.numel()) + 1);
            std::vector<std::int64_t> out_strides(rank);
            std::int64_t s = 1;
            for (int d = rank; d-- > 0;) {
                out_strides[d] = s;
                s *= l.sizes[d];
            }
            auto const out_ref = strided_ref::make(out_storage.data(), dtype::f32, device_kind::cpu, l.sizes.data(),
                                                   out_strides.data(), rank, "out");
            auto const order = iteration_order_of(ref, out_ref);
            flat_out<device_kind::cpu, dtype::f32, contiguity::strided> const in2(ref, order);
            flat_out<device_kind::cpu, dtype::f32, contiguity::strided> const out2(out_ref, order);
            std::vector<int> seen(static_cast<std::size_t>(l.numel()), 0);
            for (std::int64_t i = 0; i < l.numel(); ++i) {
                std::int64_t const logical = &out2[i] - out_storage.data();  // row-major index of the element
                REQUIRE(&in2[i] - storage.data() == l.base + reference_offset(l.sizes, l.strides, logical));
                ++seen[static_cast<std::size_t>(logical)];
            }
            CHECK(std::all_of(seen.begin(), seen.end(), [](int n) { return n == 1; }));
        }
}

// Issue 18: strides an empty tensor may have (as_strided allows any), and
// byte spans past int64, overflowed signed arithmetic (found by UBSan; the
// sanitizer job runs these).
TEST_CASE("hostile strides: no signed overflow, and spans past int64 still overlap", "[view]") {
    std::vector<float> buf(16);
    constexpr std::int64_t huge = std::numeric_limits<std::int64_t>::max() / 2;
    constexpr std::int64_t lowest = std::numeric_limits<std::int64_t>::min();
    auto const empty = strided_ref::make(buf.data(), dtype::f32, device_kind::cpu, {0, 3, 5}, {1, huge, huge}, "e");
    CHECK(detail::coalesce(empty).rank == 3);  // 3 * huge does not fit: not merged
    auto const empty_min = strided_ref::make(buf.data(), dtype::f32, device_kind::cpu, {2, 0}, {lowest, lowest}, "m");
    CHECK(iteration_order_of(empty_min, empty_min).dense);                   // nothing to walk; no |INT64_MIN| taken
    CHECK(memory_overlap_of(empty_min, empty_min) == memory_overlap::none);  // no elements
    CHECK_THROWS_WITH(strided_ref::make(buf.data(), dtype::f32, device_kind::cpu, {2}, {lowest}, "s"),
                      Catch::Contains("overflow"));
    // 2^62 elements apart: 2^64 bytes, past int64. Both arrays hold element 0.
    auto const far = strided_ref::make(buf.data(), dtype::f32, device_kind::cpu, {2}, {std::int64_t{1} << 62}, "far");
    auto const first = strided_ref::contiguous(buf.data(), dtype::f32, device_kind::cpu, {1}, "first");
    CHECK(memory_overlap_of(far, first) != memory_overlap::none);
    CHECK(memory_overlap_of(first, far) != memory_overlap::none);
    // Element 1 lies inside far's span; in 64 bits the span wrapped below it.
    auto const second = strided_ref::contiguous(buf.data() + 1, dtype::f32, device_kind::cpu, {1}, "second");
    CHECK(memory_overlap_of(far, second) == memory_overlap::unknown);
    std::int64_t const big = std::int64_t{1} << 40;
    auto const huge_empty =
        strided_ref::make(buf.data(), dtype::f32, device_kind::cpu, {0, big, big}, {0, big, 1}, "huge_empty");
    CHECK(strided_ref::contiguous_like(buf.data(), huge_empty, "like").numel() == 0);  // no UB in its strides
    CHECK(huge_empty.is_contiguous());                                                 // empty
}

// Found by tests/fuzz/fuzz_views.cpp (issue 18): empty arrays with stride-0
// or huge dimensions.
TEST_CASE("empty arrays: contiguous, no internal overlap, no overflow when coalesced or permuted", "[view]") {
    std::vector<float> buf(4);
    // [0, 3] with stride 0 everywhere names no element: it is contiguous and
    // an output may have that layout (is_contiguous said false, and
    // has_internal_overlap true).
    auto const expanded_empty = strided_ref::make(buf.data(), dtype::f32, device_kind::cpu, {0, 3}, {0, 0}, "e");
    CHECK(expanded_empty.is_contiguous());
    CHECK_FALSE(has_internal_overlap(expanded_empty));
    CHECK(has_internal_overlap(strided_ref::make(buf.data(), dtype::f32, device_kind::cpu, {1, 3}, {0, 0}, "x")));
    // Merging [2^62, 2, 2] (strides 0) multiplied the sizes past int64.
    std::int64_t const big = std::int64_t{1} << 62;
    auto const wide_empty =
        strided_ref::make(buf.data(), dtype::f32, device_kind::cpu, {0, big, 2, 2}, {1, 0, 0, 0}, "w");
    CHECK(detail::coalesce(wide_empty).rank >= 2);
    // numel() of an empty array permuted so that its large sizes come first.
    auto const huge = strided_ref::make(buf.data(), dtype::f32, device_kind::cpu, {big, 0, 4}, {1, 1, 1}, "h");
    iteration_order order = iteration_order::logical(3);
    order.dims[0] = 0;
    order.dims[1] = 2;
    order.dims[2] = 1;
    CHECK(order.permute(huge).numel() == 0);
    // A stride of INT64_MIN is refused where it is used, not on a dimension of size 1.
    auto const one = strided_ref::make(buf.data(), dtype::f32, device_kind::cpu, {1, 2},
                                       {std::numeric_limits<std::int64_t>::min(), 1}, "one");
    CHECK(one.is_contiguous());
    CHECK(detail::coalesce(one).rank == 1);
}

TEST_CASE("coalescing and iteration orders", "[view]") {
    std::vector<float> buf(4096);
    auto const c6 = strided_ref::contiguous(buf.data(), dtype::f32, device_kind::cpu, {2, 3, 1, 4, 2, 5}, "c6");
    auto const xt = strided_ref::make(buf.data(), dtype::f32, device_kind::cpu, {64, 32}, {1, 64}, "xt");
    auto const y = strided_ref::contiguous(buf.data(), dtype::f32, device_kind::cpu, {64, 32}, "y");
    auto const yt = strided_ref::make(buf.data(), dtype::f32, device_kind::cpu, {64, 32}, {1, 64}, "yt");

    SECTION("a contiguous array coalesces to one dimension") {
        flat_in<device_kind::cpu, dtype::f32, contiguity::strided> const v(c6);
        (void)v;
        CHECK(detail::strided_walk(c6).coalesced_rank() == 1);
    }
    SECTION("a transposed array walks in memory order under its own order") {
        CHECK(detail::strided_walk(xt).coalesced_rank() == 2);
        auto const order = iteration_order_of(xt);
        CHECK(order.dense);
        CHECK(order.dims[0] == 1);
        CHECK(order.dims[1] == 0);
        CHECK(detail::strided_walk(order.permute(xt)).coalesced_rank() == 1);
        flat_out<device_kind::cpu, dtype::f32, contiguity::strided> const v(xt, order);
        for (std::int64_t i = 0; i < 2048; ++i) REQUIRE(&v[i] - buf.data() == i);
    }
    SECTION("operands with different layouts are not dense together") {
        CHECK_FALSE(iteration_order_of(y, xt).dense);
        CHECK(combined_contiguity(y, xt) == contiguity::strided);
        CHECK(combined_contiguity(yt, xt) == contiguity::contiguous);
        CHECK(combined_contiguity(y, y) == contiguity::contiguous);
        // The first operand leads: a row-major output keeps row-major order.
        auto const order = iteration_order_of(y, xt);
        CHECK(order.dims[0] == 0);
        // A contiguous view accepts a transposed array that is dense in a shared order ...
        auto const shared = iteration_order_of(yt, xt);
        flat_in<device_kind::cpu, dtype::f32, contiguity::contiguous> const v(xt, shared);
        CHECK(v.size() == 2048);
        // ... but not under an order that is not its memory order.
        CHECK_THROWS_WITH((flat_in<device_kind::cpu, dtype::f32, contiguity::contiguous>(xt, order)),
                          Catch::Contains("flat_in: 'xt' is not dense in the shared iteration order"));
    }
    SECTION("broadcast dimensions do not vote and stay strided") {
        auto const b = strided_ref::make(buf.data(), dtype::f32, device_kind::cpu, {64, 32}, {0, 1}, "b");
        CHECK(combined_contiguity(y, b) == contiguity::strided);
        flat_out<device_kind::cpu, dtype::f32, contiguity::strided> const v(b, iteration_order_of(y, b));
        for (std::int64_t i = 0; i < 2048; ++i) REQUIRE(&v[i] - buf.data() == i % 32);
    }
    SECTION("operands of different shapes are an error naming both") {
        auto const z = strided_ref::contiguous(buf.data(), dtype::f32, device_kind::cpu, {32, 64}, "z");
        CHECK_THROWS_WITH(iteration_order_of(y, z),
                          Catch::Contains("'z' has shape [32, 64] but 'y' has [64, 32]; elementwise operands "
                                          "must have one shape"));
    }
    SECTION("0-d and empty arrays") {
        auto const scalar = strided_ref::make(buf.data(), dtype::f32, device_kind::cpu, nullptr, nullptr, 0, "s");
        flat_out<device_kind::cpu, dtype::f32, contiguity::strided> const s(scalar);
        CHECK(s.size() == 1);
        CHECK(&s[0] == buf.data());
        flat_in<device_kind::cpu, dtype::f32, contiguity::contiguous> const sc(scalar);
        CHECK(sc.size() == 1);
        auto const empty = strided_ref::make(nullptr, dtype::f32, device_kind::cpu, {3, 0, 2}, {0, 2, 1}, "e");
        flat_in<device_kind::cpu, dtype::f32, contiguity::strided> const e(empty);
        CHECK(e.size() == 0);
        CHECK(iteration_order_of(empty).dense);
    }
}

TEST_CASE("views check device, dtype, contiguity and rank, naming the argument", "[view]") {
    double buf[6] = {};
    auto const x = strided_ref::contiguous(buf, dtype::f64, device_kind::cpu, {2, 3}, "weights");
    auto const xt = strided_ref::make(buf, dtype::f64, device_kind::cpu, {3, 2}, {1, 3}, "weights_t");
    CHECK_THROWS_WITH((flat_in<device_kind::cuda, dtype::f64, contiguity::contiguous>(x)),
                      Catch::Equals("flat_in: 'weights' is on cpu but the view is for cuda"));
    CHECK_THROWS_WITH((flat_out<device_kind::cpu, dtype::f32, contiguity::strided>(x)),
                      Catch::Equals("flat_out: 'weights' has dtype f64 but the view expects f32"));
    CHECK_THROWS_WITH((flat_out<device_kind::cpu, dtype::f64, contiguity::contiguous>(xt)),
                      Catch::Contains("flat_out: 'weights_t' is not contiguous"));
    CHECK_THROWS_WITH((tensor_in<device_kind::cpu, dtype::f64, 3, contiguity::strided>(x)),
                      Catch::Equals("tensor_in<..., 3, ...>: 'weights' has rank 2 but the view needs rank 3"));
    CHECK_THROWS_WITH((tensor_out<device_kind::cpu, dtype::f64, 2, contiguity::contiguous>(xt)),
                      Catch::Contains("tensor_out: 'weights_t' is not contiguous"));
    CHECK_THROWS_WITH((tensor_in<device_kind::cpu, dtype::i32, 2, contiguity::strided>(x)),
                      Catch::Equals("tensor_in: 'weights' has dtype f64 but the view expects i32"));
}

TEST_CASE("ranked views match a naive reference for ranks 0-6", "[view]") {
    std::mt19937 rng(3);
    std::vector<std::int32_t> storage(1 << 16);
    std::iota(storage.begin(), storage.end(), 0);
    auto check_rank = [&](auto rank_constant) {
        constexpr int rank = decltype(rank_constant)::value;
        for (int trial = 0; trial < 40; ++trial) {
            auto const l = random_layout(rng, rank);
            auto const ref = strided_ref::make(storage.data() + l.base, dtype::i32, device_kind::cpu, l.sizes.data(),
                                               l.strides.data(), rank, "t");
            tensor_out<device_kind::cpu, dtype::i32, rank, contiguity::strided> const t(ref);
            for (std::int64_t i = 0; i < l.numel(); ++i) {
                std::int64_t idx[rank > 0 ? rank : 1] = {};
                std::int64_t rest = i;
                for (int d = rank; d-- > 0;) {
                    idx[d] = rest % l.sizes[d];
                    rest /= l.sizes[d];
                }
                auto const* got = [&]<std::size_t... D>(std::index_sequence<D...>) { return &t(idx[D]...); }
                (std::make_index_sequence<rank>{});
                REQUIRE(got - storage.data() == l.base + reference_offset(l.sizes, l.strides, i));
            }
            CHECK(t.size(0 % (rank > 0 ? rank : 1)) == (rank > 0 ? l.sizes[0] : 0));
        }
        // contiguous variant on a row-major array
        std::vector<std::int64_t> sizes(rank, 3);
        std::vector<std::int64_t> strides(rank);
        std::int64_t s = 1;
        for (int d = rank; d-- > 0;) {
            strides[d] = s;
            s *= 3;
        }
        auto const c =
            strided_ref::make(storage.data(), dtype::i32, device_kind::cpu, sizes.data(), strides.data(), rank, "c");
        tensor_out<device_kind::cpu, dtype::i32, rank, contiguity::contiguous> const o(c);
        for (std::int64_t i = 0; i < s; ++i) {
            std::int64_t idx[rank > 0 ? rank : 1] = {};
            std::int64_t rest = i;
            for (int d = rank; d-- > 0;) {
                idx[d] = rest % 3;
                rest /= 3;
            }
            auto* got = [&]<std::size_t... D>(std::index_sequence<D...>) { return &o(idx[D]...); }
            (std::make_index_sequence<rank>{});
            REQUIRE(got - storage.data() == i);
        }
    };
    check_rank(std::integral_constant<int, 0>{});
    check_rank(std::integral_constant<int, 1>{});
    check_rank(std::integral_constant<int, 2>{});
    check_rank(std::integral_constant<int, 3>{});
    check_rank(std::integral_constant<int, 4>{});
    check_rank(std::integral_constant<int, 5>{});
    check_rank(std::integral_constant<int, 6>{});
}

TEST_CASE("cpu_device, any_device and buffer", "[device]") {
    cpu_device cpu;
    CHECK(cpu.name() == "cpu");
    CHECK(cpu.alloc(0) == nullptr);
    cpu.free(nullptr);
    for (std::size_t bytes : {1u, 63u, 64u, 65u, 4096u, 1000001u}) {
        void* p = cpu.alloc(bytes);
        REQUIRE(p != nullptr);
        CHECK(reinterpret_cast<std::uintptr_t>(p) % 64 == 0);
        cpu.free(p);
    }
    CHECK_THROWS_AS(cpu.alloc(std::numeric_limits<std::size_t>::max() - 10), device_error);
    CHECK_THROWS_WITH(cpu.alloc(std::size_t{1} << 62), Catch::Contains("cpu alloc: out of memory allocating"));

    any_device any = cpu_device{};
    CHECK(any.name() == "cpu");
    CHECK(any.get<cpu_device>() != nullptr);
    std::vector<int> src = {1, 2, 3, 4}, dst(4);
    {
        buffer<any_device> b(any, sizeof(int) * 4);
        b.copy_from_host(src.data(), sizeof(int) * 4);
        b.device().sync();
        buffer<any_device> moved = std::move(b);
        CHECK(b.data() == nullptr);
        moved.copy_to_host(dst.data(), sizeof(int) * 4);
        CHECK(dst == src);
        CHECK_THROWS_WITH(moved.copy_to_host(dst.data(), 17),
                          Catch::Equals("buffer::copy_to_host: 17 bytes requested but the buffer holds 16"));
        CHECK(moved.data<int>()[2] == 3);
    }
}

// ------------------------------------------------------------ stream marks --

TEST_CASE("find_streams finds the views a closure captured, and nothing else", "[view]") {
    std::vector<float> a(100, 1.0f);
    std::vector<double> b(100, 0.0);
    auto const a_ref = strided_ref::contiguous(a.data(), dtype::f32, device_kind::cpu, {10, 10}, "a");
    auto const b_ref = strided_ref::contiguous(b.data(), dtype::f64, device_kind::cpu, {10, 10}, "b");
    auto const at_ref = strided_ref::make(a.data(), dtype::f32, device_kind::cpu, {10, 10}, {1, 10}, "at");
    flat_in<device_kind::cpu, dtype::f32, contiguity::contiguous> const in(a_ref);
    flat_out<device_kind::cpu, dtype::f64, contiguity::contiguous> const out(b_ref);
    flat_in<device_kind::cpu, dtype::f32, contiguity::strided> const strided(at_ref);
    float const scale = 2.0f;

    SECTION("contiguous views, with scalars around them") {
        auto const kernel = [=](auto, std::int64_t i) { out[i] = in[i] * scale; };
        detail::stream_set const s = detail::find_streams(kernel);
        REQUIRE(s.count == 2);
        // Capture order is unspecified; look both up.
        int const ia = s.address[0] == reinterpret_cast<std::uintptr_t>(a.data()) ? 0 : 1;
        CHECK(s.address[ia] == reinterpret_cast<std::uintptr_t>(a.data()));
        CHECK(s.address[1 - ia] == reinterpret_cast<std::uintptr_t>(b.data()));
        CHECK(s.info[ia].element_bytes == 4);
        CHECK(!s.info[ia].writable);
        CHECK(s.info[ia].contiguous);
        CHECK(s.info[1 - ia].element_bytes == 8);
        CHECK(s.info[1 - ia].writable);
    }
    SECTION("a strided view is found and marked as such") {
        auto const kernel = [=](auto, std::int64_t i) { return strided[i]; };
        detail::stream_set const s = detail::find_streams(kernel);
        REQUIRE(s.count == 1);
        CHECK(!s.info[0].contiguous);
    }
    SECTION("plain data and references report nothing") {
        std::mt19937_64 rng(7);
        std::uint64_t words[64];
        for (auto& w : words) w = rng();
        CHECK(detail::find_streams(words).count == 0);
        CHECK(detail::find_streams([&](auto, std::int64_t i) { return in[i]; }).count == 0);
    }
    SECTION("closures that are not trivially copyable are read too") {
        // (as nvcc's wrappers of __host__ __device__ lambdas)
        std::vector<int> owned(3);
        CHECK(detail::find_streams([=](auto, std::int64_t i) { return in[i] + owned[0]; }).count == 1);
    }
    SECTION("a default-constructed view is not a stream") {
        flat_in<device_kind::cpu, dtype::f32, contiguity::contiguous> const empty;
        CHECK(detail::find_streams([=](auto, std::int64_t i) { return empty[i]; }).count == 0);
    }
}
