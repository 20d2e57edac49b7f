// Tests of transform on the CPU and of elementwise_layout: every dtype,
// broadcast, strided, transposed, reversed, rank-0 and empty operands against
// a naive reference indexed by coordinates; several outputs; 12 inputs and 4
// outputs; in place; the F16C conversions against the portable ones; the
// row function of every CPU level this machine has (fused f16/bf16 rows)
// against the baseline; and every error naming the operand.
#include <switchyard/switchyard.h>
#include <switchyard/transform.h>

#include <catch2/catch.hpp>

#include "test_arrays.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace sy = switchyard;

namespace {

using test_arrays::array;
using test_arrays::for_coords;
using test_arrays::row_major;

template <sy::dtype D>
using storage = sy::dtype_storage_t<D>;
template <sy::dtype D>
using compute = sy::dtype_compute_t<D>;

template <sy::dtype D>
storage<D> value_for(std::int64_t i) {
    return static_cast<storage<D>>(static_cast<compute<D>>(i % 23) - compute<D>(7));
}

// Streams every output (device/cpu/stream_store.h) while it lives, when
// `on`; else leaves the threshold as it is.
struct streaming_every_output {
    std::int64_t const saved;
    explicit streaming_every_output(bool on)
        : saved(on ? sy::detail::cpu_stream_store_bytes().exchange(0) : sy::detail::cpu_stream_store_bytes().load()) {}
    ~streaming_every_output() { sy::detail::cpu_stream_store_bytes().store(saved); }
};

struct layout_case {
    char const* what;
    std::vector<std::int64_t> out_sizes, out_strides;
    std::vector<std::int64_t> x_sizes, x_strides;
    std::vector<std::int64_t> y_sizes, y_strides;
};

std::vector<layout_case> layout_cases() {
    return {
        {"contiguous", {5, 7, 3}, {}, {5, 7, 3}, {}, {5, 7, 3}, {}},
        {"y per column", {5, 7, 300}, {}, {5, 7, 300}, {}, {300}, {}},
        {"y per row", {40, 300}, {}, {40, 300}, {}, {40, 1}, {}},
        {"y scalar", {9, 33}, {}, {9, 33}, {}, {}, {}},
        {"y size 1", {9, 33}, {}, {9, 33}, {}, {1}, {}},
        {"x and y broadcast", {6, 5, 4}, {}, {6, 1, 4}, {}, {5, 1}, {}},
        {"transposed output and x", {30, 20}, {1, 30}, {30, 20}, {1, 30}, {20}, {}},
        {"x transposed only", {30, 20}, {}, {30, 20}, {1, 30}, {30, 20}, {}},
        {"x sliced", {17, 19}, {}, {17, 19}, {40, 2}, {19}, {}},
        {"x reversed", {1000}, {}, {1000}, {-1}, {1000}, {}},
        {"y strided broadcast", {8, 9}, {}, {8, 9}, {}, {8, 1}, {5, 1}},
        {"rank 0", {}, {}, {}, {}, {}, {}},
        {"empty", {4, 0, 3}, {}, {4, 0, 3}, {}, {3}, {}},
        {"long rows across blocks and threads", {3, 70000}, {}, {3, 70000}, {}, {70000}, {}},
        {"many short rows", {20000, 3}, {}, {20000, 3}, {}, {20000, 1}, {}},
        {"one row for every row of a rank-3 output", {4, 5, 300}, {}, {4, 5, 300}, {}, {1, 1, 300}, {}},
        {"a row per outer index of a rank-3 output", {4, 5, 300}, {}, {4, 5, 300}, {}, {4, 1, 300}, {}},
    };
}

template <sy::dtype D>
void check_layouts() {
    using S = storage<D>;
    using C = compute<D>;
    for (auto const& c : layout_cases()) {
        INFO(c.what);
        auto stride_or = [](auto const& sizes, auto const& strides) {
            return strides.empty() ? row_major(sizes) : strides;
        };
        array<S> out(D, c.out_sizes, stride_or(c.out_sizes, c.out_strides), "out");
        array<S> x(D, c.x_sizes, stride_or(c.x_sizes, c.x_strides), "x");
        array<S> y(D, c.y_sizes, stride_or(c.y_sizes, c.y_strides), "y");
        for (std::size_t i = 0; i < x.buffer.size(); ++i) x.buffer[i] = value_for<D>(static_cast<std::int64_t>(i));
        for (std::size_t i = 0; i < y.buffer.size(); ++i)
            y.buffer[i] = value_for<D>(static_cast<std::int64_t>(i * 7 + 3));
        // Exact in every compute type: x * 2 is exact, so FMA contraction
        // cannot change the rounding of the sum.
        sy::transform(
            sy::tag<sy::device_kind::cpu, D>{}, out.ref, [](C a, C b) { return a * C(2) + b; }, x.ref, y.ref);
        int wrong = 0;
        for_coords(c.out_sizes, [&](std::vector<std::int64_t> const& at) {
            S const expected = static_cast<S>(static_cast<C>(x.at(at)) * C(2) + static_cast<C>(y.at(at)));
            if (std::memcmp(&out.at(at), &expected, sizeof(S)) != 0) ++wrong;
        });
        CHECK(wrong == 0);
    }
}

}  // namespace

TEST_CASE("transform matches a coordinate reference for every layout and dtype", "[transform]") {
    bool const stream = GENERATE(false, true);
    INFO("outputs streamed: " << stream);
    streaming_every_output const streaming(stream);
    check_layouts<sy::dtype::f32>();
    check_layouts<sy::dtype::f64>();
    check_layouts<sy::dtype::f16>();
    check_layouts<sy::dtype::bf16>();
    check_layouts<sy::dtype::i32>();
    check_layouts<sy::dtype::i64>();
    check_layouts<sy::dtype::i16>();
}

TEST_CASE("elementwise_layout merges dimensions per operand and keeps broadcast strides", "[transform]") {
    // Separate memory per operand: 1024 floats each.
    static float buf[4096] = {};
    int next = 0;
    auto ref = [&](std::initializer_list<std::int64_t> sizes, std::initializer_list<std::int64_t> strides,
                   char const* name) {
        return sy::strided_ref::make(buf + 1024 * next++, sy::dtype::f32, sy::device_kind::cpu, sizes, strides, name);
    };
    SECTION("contiguous operands become one dimension") {
        sy::strided_ref const outs[] = {ref({4, 8, 16}, {128, 16, 1}, "out")};
        sy::strided_ref const ins[] = {ref({4, 8, 16}, {128, 16, 1}, "x")};
        auto const l = sy::make_elementwise_layout("op", outs, 1, ins, 1);
        CHECK(l.rank == 1);
        CHECK(l.sizes[0] == 512);
        CHECK(l.inner_stride(0) == 1);
        CHECK(l.inner_stride(1) == 1);
    }
    SECTION("a row vector broadcast over rows gives two dimensions") {
        sy::strided_ref const outs[] = {ref({4, 8, 16}, {128, 16, 1}, "out")};
        sy::strided_ref const ins[] = {ref({4, 8, 16}, {128, 16, 1}, "x"), ref({16}, {1}, "y")};
        auto const l = sy::make_elementwise_layout("op", outs, 1, ins, 2);
        REQUIRE(l.rank == 2);
        CHECK(l.sizes[0] == 32);
        CHECK(l.sizes[1] == 16);
        CHECK(l.strides[2][0] == 0);
        CHECK(l.strides[2][1] == 1);
        CHECK(l.strides[1][0] == 16);
    }
    SECTION("transposed operands walk in memory order") {
        sy::strided_ref const outs[] = {ref({16, 8}, {1, 16}, "out")};
        sy::strided_ref const ins[] = {ref({16, 8}, {1, 16}, "x")};
        auto const l = sy::make_elementwise_layout("op", outs, 1, ins, 1);
        CHECK(l.rank == 1);
        CHECK(l.inner_stride(1) == 1);
    }
    SECTION("offset() names each operand's element") {
        sy::strided_ref const outs[] = {ref({3, 5}, {5, 1}, "out")};
        sy::strided_ref const ins[] = {ref({3, 1}, {1, 1}, "col")};
        auto const l = sy::make_elementwise_layout("op", outs, 1, ins, 1);
        for (std::int64_t i = 0; i < 15; ++i) {
            CHECK(l.offset(0, i) == i);
            CHECK(l.offset(1, i) == i / 5);
        }
    }
}

TEST_CASE("transform with several outputs, many inputs and in place", "[transform]") {
    using Tag = sy::tag<sy::device_kind::cpu, sy::dtype::f32>;
    bool const stream = GENERATE(false, true);
    INFO("outputs streamed: " << stream);
    streaming_every_output const streaming(stream);
    constexpr std::int64_t n = 1000;
    std::vector<std::vector<float>> in(12, std::vector<float>(n));
    for (std::size_t k = 0; k < in.size(); ++k)
        for (std::int64_t i = 0; i < n; ++i) in[k][static_cast<std::size_t>(i)] = float(i % 13) + float(k);
    auto as_ref = [](std::vector<float>& v, char const* name) {
        return sy::strided_ref::contiguous(v.data(), sy::dtype::f32, sy::device_kind::cpu,
                                           {static_cast<std::int64_t>(v.size())}, name);
    };
    std::vector<std::vector<float>> out(4, std::vector<float>(n, -1.0f));

    SECTION("two outputs") {
        sy::transform(
            Tag{}, sy::outputs(as_ref(out[0], "sum"), as_ref(out[1], "difference")),
            [](float a, float b) {
                return sy::results{a + b, a - b};
            },
            as_ref(in[0], "a"), as_ref(in[1], "b"));
        for (std::size_t i = 0; i < n; ++i) {
            CHECK(out[0][i] == in[0][i] + in[1][i]);
            CHECK(out[1][i] == in[0][i] - in[1][i]);
        }
    }
    SECTION("twelve inputs and four outputs") {
        std::vector<sy::strided_ref> r;
        for (auto& v : in) r.push_back(as_ref(v, "in"));
        sy::transform(
            Tag{}, sy::outputs(as_ref(out[0], "o0"), as_ref(out[1], "o1"), as_ref(out[2], "o2"), as_ref(out[3], "o3")),
            [](float a, float b, float c, float d, float e, float f, float g, float h, float i, float j, float k,
               float l) {
                return sy::results{a + b + c, d + e + f, g + h + i, j + k + l};
            },
            r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], r[8], r[9], r[10], r[11]);
        for (std::size_t i = 0; i < n; ++i)
            for (std::size_t o = 0; o < 4; ++o)
                CHECK(out[o][i] == (in[3 * o][i] + in[3 * o + 1][i]) + in[3 * o + 2][i]);
    }
    SECTION("in place") {
        std::vector<float> expected(n);
        for (std::size_t i = 0; i < n; ++i) expected[i] = in[0][i] * 3.0f + in[1][i];
        sy::transform(
            Tag{}, as_ref(in[0], "x"), [](float x, float y) { return x * 3.0f + y; }, as_ref(in[0], "x"),
            as_ref(in[1], "y"));
        CHECK(in[0] == expected);
    }
    SECTION("no inputs fills the output") {
        sy::transform(Tag{}, as_ref(out[0], "out"), [] { return 2.5f; });
        for (float v : out[0]) CHECK(v == 2.5f);
    }
}

// A row whose inputs are dense but one repeated per row runs a loop of its
// own with that input in a register (device/cpu/transform.h; for f16 and
// bf16 the fused groups): each input position, with one and two outputs, up
// to the loop's input limit and past it, and two repeated inputs (staged,
// or fused groups reading copies), all against the plain formula. Rows of
// 300 leave a fused row a tail of 300 % 16.
template <sy::dtype D, int NIn>
void check_one_repeated_input(int repeated, int second_repeated = -1) {
    using S = storage<D>;
    using C = compute<D>;
    constexpr std::int64_t rows = 37, cols = 300;
    std::vector<std::vector<S>> in(NIn);
    std::vector<sy::strided_ref> refs;
    for (int k = 0; k < NIn; ++k) {
        bool const per_row = k == repeated || k == second_repeated;
        in[k].resize(static_cast<std::size_t>(per_row ? rows : rows * cols));
        for (std::size_t i = 0; i < in[k].size(); ++i)
            in[k][i] = value_for<D>(static_cast<std::int64_t>(i * (2 * k + 1) + k));
        refs.push_back(per_row ? sy::strided_ref::contiguous(in[k].data(), D, sy::device_kind::cpu, {rows, 1}, "r")
                               : sy::strided_ref::contiguous(in[k].data(), D, sy::device_kind::cpu, {rows, cols}, "d"));
    }
    auto const input = [&](int k, std::int64_t i) {
        bool const per_row = k == repeated || k == second_repeated;
        return static_cast<C>(in[k][static_cast<std::size_t>(per_row ? i / cols : i)]);
    };
    std::vector<S> sum(static_cast<std::size_t>(rows * cols)), weighted(sum.size());
    auto const out = [&](std::vector<S>& v) {
        return sy::strided_ref::contiguous(v.data(), D, sy::device_kind::cpu, {rows, cols}, "out");
    };
    // Exact in every compute type: small integers.
    auto const f = [](auto... v) {
        C s = C(0), w = C(0), k = C(1);
        ((s = s + v, w = w + k * v, k = k + C(1)), ...);
        return sy::results{s, w};
    };
    auto const g = [f](auto... v) { return f(v...).template get<1>(); };
    [&]<std::size_t... K>(std::index_sequence<K...>) {
        sy::transform(
            sy::tag<sy::device_kind::cpu, D>{}, sy::outputs(out(sum), out(weighted)),
            [f](decltype(K, C{})... v) { return f(v...); }, refs[K]...);
        int wrong = 0;
        for (std::int64_t i = 0; i < rows * cols; ++i) {
            auto const expected = f(input(static_cast<int>(K), i)...);
            wrong += sum[static_cast<std::size_t>(i)] != static_cast<S>(expected.template get<0>());
            wrong += weighted[static_cast<std::size_t>(i)] != static_cast<S>(expected.template get<1>());
        }
        CHECK(wrong == 0);
        std::fill(weighted.begin(), weighted.end(), S{});
        sy::transform(
            sy::tag<sy::device_kind::cpu, D>{}, out(weighted), [g](decltype(K, C{})... v) { return g(v...); },
            refs[K]...);
        wrong = 0;
        for (std::int64_t i = 0; i < rows * cols; ++i)
            wrong += weighted[static_cast<std::size_t>(i)] !=
                     static_cast<S>(f(input(static_cast<int>(K), i)...).template get<1>());
        CHECK(wrong == 0);
    }
    (std::make_index_sequence<NIn>{});
}

// The fused f16/bf16 rows with no inputs, twelve inputs and four outputs,
// and in place: the lane arrays sized by the operand counts.
template <sy::dtype D>
void check_fused_operand_counts() {
    using S = storage<D>;
    using C = compute<D>;
    using Tag = sy::tag<sy::device_kind::cpu, D>;
    constexpr std::int64_t n = 1000;  // 62 groups of 16 and a tail of 8
    std::vector<std::vector<S>> in(12, std::vector<S>(n));
    for (std::size_t k = 0; k < in.size(); ++k)
        for (std::int64_t i = 0; i < n; ++i) in[k][static_cast<std::size_t>(i)] = value_for<D>(i + 3 * k);
    std::vector<std::vector<S>> out(4, std::vector<S>(n));
    auto const ref = [](std::vector<S>& v, char const* name) {
        return sy::strided_ref::contiguous(v.data(), D, sy::device_kind::cpu, {static_cast<std::int64_t>(v.size())},
                                           name);
    };
    auto const c = [&](std::size_t k, std::size_t i) { return static_cast<C>(in[k][i]); };
    int wrong = 0;
    sy::transform(Tag{}, ref(out[0], "out"), [] { return C(2.5); });
    for (S v : out[0]) wrong += static_cast<C>(v) != C(2.5);
    CHECK(wrong == 0);
    std::vector<sy::strided_ref> r;
    for (auto& v : in) r.push_back(ref(v, "in"));
    sy::transform(
        Tag{}, sy::outputs(ref(out[0], "o0"), ref(out[1], "o1"), ref(out[2], "o2"), ref(out[3], "o3")),
        [](C a, C b, C cc, C d, C e, C f, C g, C h, C i, C j, C k, C l) {
            return sy::results{a + b + cc, d + e + f, g + h + i, j + k + l};
        },
        r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], r[8], r[9], r[10], r[11]);
    wrong = 0;
    for (std::size_t i = 0; i < n; ++i)
        for (std::size_t o = 0; o < 4; ++o)
            wrong += static_cast<C>(out[o][i]) !=
                     static_cast<C>(static_cast<S>((c(3 * o, i) + c(3 * o + 1, i)) + c(3 * o + 2, i)));
    CHECK(wrong == 0);
    std::vector<S> expected(n);
    for (std::size_t i = 0; i < n; ++i) expected[i] = static_cast<S>(c(0, i) * C(3) - c(1, i));
    sy::transform(
        Tag{}, ref(in[0], "x"), [](C x, C y) { return x * C(3) - y; }, ref(in[0], "x"), ref(in[1], "y"));
    wrong = 0;
    for (std::size_t i = 0; i < n; ++i) wrong += static_cast<C>(in[0][i]) != static_cast<C>(expected[i]);
    CHECK(wrong == 0);
}

TEST_CASE("fused f16 and bf16 rows with no inputs, twelve inputs, four outputs and in place", "[transform]") {
    bool const stream = GENERATE(false, true);
    INFO("outputs streamed: " << stream);
    streaming_every_output const streaming(stream);
    check_fused_operand_counts<sy::dtype::f16>();
    check_fused_operand_counts<sy::dtype::bf16>();
}

TEST_CASE("rows with one input repeated per row give every element", "[transform]") {
    bool const stream = GENERATE(false, true);
    INFO("outputs streamed: " << stream);
    streaming_every_output const streaming(stream);
    INFO("one input, per row (f16/bf16: fused from copies)");
    check_one_repeated_input<sy::dtype::f16, 1>(0);
    check_one_repeated_input<sy::dtype::bf16, 1>(0);
    for (int k = 0; k < 3; ++k) {
        INFO("three inputs, input " << k << " per row");
        check_one_repeated_input<sy::dtype::f32, 3>(k);
        check_one_repeated_input<sy::dtype::f64, 3>(k);
        check_one_repeated_input<sy::dtype::i32, 3>(k);
        check_one_repeated_input<sy::dtype::f16, 3>(k);
        check_one_repeated_input<sy::dtype::bf16, 3>(k);
    }
    for (int k = 0; k < 2; ++k) {
        INFO("two inputs, input " << k << " per row");
        check_one_repeated_input<sy::dtype::f32, 2>(k);
    }
    constexpr int limit = sy::detail::cpu_repeated_loop_inputs;
    for (int k : {0, limit - 1}) {
        INFO("inputs at the loop's limit, input " << k << " per row");
        check_one_repeated_input<sy::dtype::f32, limit>(k);
        check_one_repeated_input<sy::dtype::bf16, limit>(k);
    }
    for (int k : {0, limit}) {
        INFO("inputs past the loop's limit (staged), input " << k << " per row");
        check_one_repeated_input<sy::dtype::f32, limit + 1>(k);
        check_one_repeated_input<sy::dtype::f16, limit + 1>(k);
    }
    INFO("two inputs per row (staged; fused from copies for f16 and bf16)");
    check_one_repeated_input<sy::dtype::f32, 3>(0, 2);
    check_one_repeated_input<sy::dtype::f16, 3>(0, 2);
    check_one_repeated_input<sy::dtype::bf16, 3>(1, 2);
}

TEST_CASE("a repeated input's row loop in place", "[transform]") {
    using Tag = sy::tag<sy::device_kind::cpu, sy::dtype::f32>;
    constexpr std::int64_t rows = 23, cols = 301, n = rows * cols;
    std::vector<float> x(n), gate(rows);
    for (std::int64_t i = 0; i < n; ++i) x[static_cast<std::size_t>(i)] = float(i % 29) - 11.0f;
    for (std::int64_t r = 0; r < rows; ++r) gate[static_cast<std::size_t>(r)] = float(r % 7) - 3.0f;
    auto const f = [](float a, float g) { return a * 2.0f + g; };
    auto const expected = [&](std::vector<float> const& from, std::int64_t i) {
        return f(from[static_cast<std::size_t>(i)], gate[static_cast<std::size_t>(i / cols)]);
    };
    auto const x_ref = sy::strided_ref::contiguous(x.data(), sy::dtype::f32, sy::device_kind::cpu, {rows, cols}, "x");
    auto const gate_ref =
        sy::strided_ref::contiguous(gate.data(), sy::dtype::f32, sy::device_kind::cpu, {rows, 1}, "gate");
    std::vector<float> const before = x;
    sy::transform(Tag{}, x_ref, f, x_ref, gate_ref);
    int wrong = 0;
    for (std::int64_t i = 0; i < n; ++i) wrong += x[static_cast<std::size_t>(i)] != expected(before, i);
    CHECK(wrong == 0);
}

TEST_CASE("mapped inputs: hoisted once per element of a broadcast input, fused otherwise", "[transform]") {
    using Tag = sy::tag<sy::device_kind::cpu, sy::dtype::f32>;
    constexpr std::int64_t rows = 300, cols = 257;
    std::vector<float> x(rows * cols), out(rows * cols), gate(rows * cols);
    for (std::size_t i = 0; i < x.size(); ++i) {
        x[i] = float(i % 97) * 0.25f - 7.0f;
        gate[i] = float(i % 31) * 0.5f - 8.0f;
    }
    auto const ref = [](std::vector<float>& v, std::initializer_list<std::int64_t> sizes, char const* name) {
        return sy::strided_ref::contiguous(v.data(), sy::dtype::f32, sy::device_kind::cpu, sizes, name);
    };
    std::atomic<std::int64_t> calls{0};
    auto const counted_sigmoid = [&calls](float g) {
        calls.fetch_add(1, std::memory_order_relaxed);
        return sy::sigmoid(g);
    };
    auto const mul = [](float v, float s) { return v * s; };
    auto const check = [&](std::int64_t gate_rows, std::int64_t gate_cols) {
        for (std::int64_t r = 0; r < rows; ++r)
            for (std::int64_t c = 0; c < cols; ++c) {
                std::size_t const i = static_cast<std::size_t>(r * cols + c);
                std::size_t const g =
                    static_cast<std::size_t>((gate_rows == 1 ? 0 : r) * gate_cols + (gate_cols == 1 ? 0 : c));
                REQUIRE(out[i] == x[i] * sy::sigmoid(gate[g]));
            }
    };

    SECTION("a per-column gate: the map runs once per gate element") {
        sy::transform(Tag{}, ref(out, {rows, cols}, "out"), mul, ref(x, {rows, cols}, "x"),
                      sy::mapped(ref(gate, {cols}, "gate"), counted_sigmoid));
        CHECK(calls.load() == cols);
        check(1, cols);
    }
    SECTION("a per-row gate") {
        sy::transform(Tag{}, ref(out, {rows, cols}, "out"), mul, ref(x, {rows, cols}, "x"),
                      sy::mapped(ref(gate, {rows, 1}, "gate"), counted_sigmoid));
        CHECK(calls.load() == rows);
        check(rows, 1);
    }
    SECTION("a gate of the output's shape is fused: one call per element, no extra pass") {
        sy::transform(Tag{}, ref(out, {rows, cols}, "out"), mul, ref(x, {rows, cols}, "x"),
                      sy::mapped(ref(gate, {rows, cols}, "gate"), counted_sigmoid));
        CHECK(calls.load() == rows * cols);
        check(rows, cols);
    }
    SECTION("in place on the mapped input itself") {
        std::vector<float> expected(gate.size());
        for (std::size_t i = 0; i < gate.size(); ++i) expected[i] = x[i] * sy::sigmoid(gate[i]);
        sy::transform(Tag{}, ref(gate, {rows, cols}, "gate"), mul, ref(x, {rows, cols}, "x"),
                      sy::mapped(ref(gate, {rows, cols}, "gate"), counted_sigmoid));
        CHECK(gate == expected);
    }
    SECTION("errors name the mapped input") {
        CHECK_THROWS_WITH(sy::transform(Tag{}, ref(out, {rows, cols}, "out"), mul, ref(x, {rows, cols}, "x"),
                                        sy::mapped(ref(gate, {2, cols}, "gate"), counted_sigmoid)),
                          Catch::Contains("input 'gate' has shape [2, 257]"));
        std::vector<double> d(cols);
        auto const gate64 = sy::strided_ref::contiguous(d.data(), sy::dtype::f64, sy::device_kind::cpu, {cols}, "gate");
        CHECK_THROWS_WITH(sy::transform(Tag{}, ref(out, {rows, cols}, "out"), mul, ref(x, {rows, cols}, "x"),
                                        sy::mapped(gate64, counted_sigmoid)),
                          Catch::Contains("input 'gate' has dtype f64"));
        CHECK(calls.load() == 0);
    }
}

TEST_CASE("mapped inputs round the mapped value to the storage type, hoisted or fused alike", "[transform]") {
    using Tag = sy::tag<sy::device_kind::cpu, sy::dtype::bf16>;
    using bf16 = sy::storage_t<Tag>;
    constexpr std::int64_t rows = 64, cols = 100;
    std::vector<bf16> x(rows * cols), gate(cols), gate_full(rows * cols), hoisted(rows * cols), fused(rows * cols);
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = bf16(float(i % 41) * 0.37f - 5.0f);
    for (std::size_t i = 0; i < gate.size(); ++i) gate[i] = bf16(float(i) * 0.11f - 4.0f);
    for (std::size_t i = 0; i < gate_full.size(); ++i) gate_full[i] = gate[i % cols];
    auto const ref = [](std::vector<bf16>& v, std::initializer_list<std::int64_t> sizes, char const* name) {
        return sy::strided_ref::contiguous(v.data(), sy::dtype::bf16, sy::device_kind::cpu, sizes, name);
    };
    auto const mul = [](float v, float s) { return v * s; };
    auto const sigmoid = [](float g) { return sy::sigmoid(g); };
    sy::transform(Tag{}, ref(hoisted, {rows, cols}, "out"), mul, ref(x, {rows, cols}, "x"),
                  sy::mapped(ref(gate, {cols}, "gate"), sigmoid));
    sy::transform(Tag{}, ref(fused, {rows, cols}, "out"), mul, ref(x, {rows, cols}, "x"),
                  sy::mapped(ref(gate_full, {rows, cols}, "gate"), sigmoid));
    for (std::size_t i = 0; i < x.size(); ++i) {
        float const s = float(bf16(sy::sigmoid(float(gate[i % cols]))));  // as torch.sigmoid(gate) stores it
        REQUIRE(float(hoisted[i]) == float(bf16(float(x[i]) * s)));
        REQUIRE(float(fused[i]) == float(hoisted[i]));
    }
}

TEST_CASE("transform rejects bad operands, naming them", "[transform]") {
    using Tag = sy::tag<sy::device_kind::cpu, sy::dtype::f32>;
    std::vector<float> a(64), b(64);
    std::vector<double> d(64);
    auto f32 = [](std::vector<float>& v, std::initializer_list<std::int64_t> sizes, char const* name) {
        return sy::strided_ref::contiguous(v.data(), sy::dtype::f32, sy::device_kind::cpu, sizes, name);
    };
    auto const add = [](float x, float y) { return x + y; };
    auto const fails_with = [](auto&& call, std::string const& what) {
        try {
            call();
        } catch (std::invalid_argument const& e) {
            INFO(e.what());
            CHECK(std::string(e.what()).find(what) != std::string::npos);
            return;
        }
        FAIL("no error; expected: " << what);
    };
    fails_with(
        [&] {
            sy::transform(Tag{}, f32(a, {4, 16}, "out"), add, f32(b, {4, 16}, "x"), f32(b, {3}, "y"));
        },
        "transform: input 'y' has shape [3], which does not broadcast to the output shape [4, 16] (size 3 "
        "against 16 in dimension 1 of the output)");
    fails_with(
        [&] {
            sy::transform(Tag{}, f32(a, {2, 4, 8}, "out"), add, f32(b, {2, 4, 8}, "x"), f32(b, {3, 1}, "y"));
        },
        "input 'y' has shape [3, 1], which does not broadcast to the output shape [2, 4, 8] (size 3 against 4 in "
        "dimension 1 of the output)");
    fails_with(
        [&] {
            sy::transform(Tag{}, f32(a, {16}, "out"), add, f32(b, {4, 16}, "x"), f32(b, {16}, "y"));
        },
        "input 'x' has shape [4, 16], which does not broadcast to the output shape [16]");
    fails_with(
        [&] {
            auto const out =
                sy::strided_ref::make(a.data(), sy::dtype::f32, sy::device_kind::cpu, {4, 16}, {0, 1}, "out");
            sy::transform(Tag{}, out, add, f32(b, {4, 16}, "x"), f32(b, {16}, "y"));
        },
        "output 'out' has internal overlap");
    fails_with(
        [&] {
            auto const shifted =
                sy::strided_ref::contiguous(a.data() + 1, sy::dtype::f32, sy::device_kind::cpu, {32}, "x");
            sy::transform(Tag{}, f32(a, {32}, "out"), add, shifted, f32(b, {32}, "y"));
        },
        "output 'out' shares memory with input 'x' but is not exactly that array");
    fails_with([&] { sy::transform(Tag{}, f32(a, {16}, "out"), add, f32(a, {1}, "x"), f32(b, {16}, "y")); },
               "output 'out' shares memory with input 'x' but is not exactly that array");
    fails_with(
        [&] {
            auto const wrong = sy::strided_ref::contiguous(d.data(), sy::dtype::f64, sy::device_kind::cpu, {16}, "y");
            sy::transform(Tag{}, f32(a, {16}, "out"), add, f32(b, {16}, "x"), wrong);
        },
        "transform: input 'y' has dtype f64 but the tag's dtype is f32");
    fails_with(
        [&] {
            auto const gpu = sy::strided_ref::contiguous(b.data(), sy::dtype::f32, sy::device_kind::cuda, {16}, "y");
            sy::transform(Tag{}, f32(a, {16}, "out"), add, f32(b, {16}, "x"), gpu);
        },
        "transform: input 'y' is on cuda but the tag names device cpu");
    fails_with(
        [&] {
            sy::transform(
                Tag{}, sy::outputs(f32(a, {16}, "lo"), f32(b, {8}, "hi")),
                [](float x) {
                    return sy::results{x, x};
                },
                f32(a, {16}, "x"));
        },
        "output 'hi' has shape [8] but output 'lo' has [16]");
    // A broadcast view of the output (x.mul_(x[:, :1])) and a shifted slice
    // of it: the strides alone do not prove the memory disjoint, so refused.
    fails_with(
        [&] {
            auto const x = f32(a, {2, 32}, "x");
            auto const column =
                sy::strided_ref::make(a.data(), sy::dtype::f32, sy::device_kind::cpu, {2, 1}, {32, 1}, "x[:, :1]");
            sy::transform(Tag{}, x, add, x, column);
        },
        "output 'x' shares memory with input 'x[:, :1]' but is not exactly that array");
    fails_with(
        [&] {
            auto const out =
                sy::strided_ref::make(a.data() + 2, sy::dtype::f32, sy::device_kind::cpu, {4, 4}, {8, 1}, "b[:, 2:6]");
            auto const in =
                sy::strided_ref::make(a.data(), sy::dtype::f32, sy::device_kind::cpu, {4, 4}, {8, 1}, "b[:, 0:4]");
            sy::transform(Tag{}, out, add, in, f32(b, {4, 4}, "y"));
        },
        "output 'b[:, 2:6]' shares memory with input 'b[:, 0:4]'");
    fails_with(
        [&] {
            sy::transform(
                Tag{}, sy::outputs(f32(a, {16}, "lo"), f32(a, {16}, "hi")),
                [](float x) {
                    return sy::results{x, x};
                },
                f32(b, {16}, "x"));
        },
        "output 'hi' overlaps output 'lo'");
}

TEST_CASE("transform rethrows a kernel's exception from the thread pool", "[transform]") {
    using Tag = sy::tag<sy::device_kind::cpu, sy::dtype::f64>;
    std::vector<double> x(1 << 20, 1.0), out(1 << 20);
    auto const xr = sy::strided_ref::contiguous(x.data(), sy::dtype::f64, sy::device_kind::cpu, {1 << 20}, "x");
    auto const o = sy::strided_ref::contiguous(out.data(), sy::dtype::f64, sy::device_kind::cpu, {1 << 20}, "out");
    auto const throwing = [](double v) {
        if (v > 0) throw std::runtime_error("kernel refused");
        return v;
    };
    bool const stream = GENERATE(false, true);
    INFO("outputs streamed: " << stream);
    streaming_every_output const streaming(stream);
    CHECK_THROWS_WITH(sy::transform(Tag{}, o, throwing, xr), "kernel refused");
}

TEST_CASE("f16 block conversions: F16C and the portable loops agree", "[transform]") {
    auto const& chosen = sy::detail::f16_block_converters();
    std::vector<std::uint16_t> bits(65536);
    std::iota(bits.begin(), bits.end(), std::uint16_t{0});
    std::vector<float> a(bits.size()), b(bits.size());
    chosen.load(bits.data(), a.data(), static_cast<std::int64_t>(bits.size()));
    sy::detail::f16_load_portable(bits.data(), b.data(), static_cast<std::int64_t>(bits.size()));
    int differ = 0;
    for (std::size_t i = 0; i < bits.size(); ++i)
        if (std::isnan(a[i]) ? !std::isnan(b[i]) : std::memcmp(&a[i], &b[i], 4) != 0) ++differ;
    CHECK(differ == 0);

    // Stores: every half value, the midpoints between neighbours (ties to
    // even), overflow, underflow and subnormals.
    std::vector<float> values;
    for (std::size_t i = 0; i + 1 < b.size(); ++i) {
        if (std::isnan(b[i]) || std::isnan(b[i + 1]) || std::isinf(b[i])) continue;
        values.push_back(b[i]);
        values.push_back(b[i] + (b[i + 1] - b[i]) * 0.5f);
        values.push_back(std::nextafter(b[i], b[i + 1]));
    }
    for (float v : {65520.0f, 65519.99f, 1e-8f, -3e-8f, 6e-8f, 1e30f, -1e30f}) values.push_back(v);
    std::vector<std::uint16_t> x(values.size()), y(values.size());
    chosen.store(values.data(), x.data(), static_cast<std::int64_t>(values.size()));
    sy::detail::f16_store_portable(values.data(), y.data(), static_cast<std::int64_t>(values.size()));
    CHECK(x == y);
}

namespace {

// One row through the row function built for `level`: out0 = x * 2 + y,
// out1 = x - y, y repeated (stride 0) or contiguous, out0 optionally in
// place over x, the outputs optionally streamed.
template <sy::dtype D>
std::vector<std::uint16_t> run_row(sy::detail::cpu_isa level, std::int64_t n, bool y_repeated, bool in_place,
                                   bool stream) {
    using S = storage<D>;
    using C = compute<D>;
    std::vector<S> x(static_cast<std::size_t>(n)), y(static_cast<std::size_t>(n)), out0(x.size()), out1(x.size());
    for (std::int64_t i = 0; i < n; ++i) {
        x[static_cast<std::size_t>(i)] = value_for<D>(i);
        y[static_cast<std::size_t>(i)] = value_for<D>(i * 5 + 1);
    }
    auto const f = [](C a, C b) { return sy::results{a * C(2) + b, a - b}; };
    auto const row = sy::detail::transform_row_for<D, S, C, 2, 2, decltype(f)>(level);
    S* ptr[4] = {in_place ? x.data() : out0.data(), out1.data(), x.data(), y.data()};
    std::int64_t const inner[4] = {1, 1, 1, y_repeated ? 0 : 1};
    row(f, ptr, inner, n, stream);
    sy::detail::stream_fence();
    std::vector<S> const& first = in_place ? x : out0;
    std::vector<std::uint16_t> bits;
    for (std::size_t i = 0; i < first.size(); ++i) {
        bits.push_back(sy::detail::bits16(first[i]));
        bits.push_back(sy::detail::bits16(out1[i]));
        C const a = static_cast<C>(value_for<D>(static_cast<std::int64_t>(i)));
        C const b = y_repeated ? static_cast<C>(y[0]) : static_cast<C>(y[i]);
        // Exact in f16 and bf16 for these values, so every level agrees.
        REQUIRE(sy::detail::bits16(first[i]) == sy::detail::bits16(static_cast<S>(a * C(2) + b)));
        REQUIRE(sy::detail::bits16(out1[i]) == sy::detail::bits16(static_cast<S>(a - b)));
    }
    return bits;
}

template <sy::dtype D>
void check_every_level() {
    using sy::detail::cpu_isa;
    for (std::int64_t n : {0, 1, 15, 16, 17, 31, 63, 64, 65, 128, 1000}) {
        for (bool y_repeated : {false, true}) {
            for (bool in_place : {false, true}) {
                INFO("n " << n << ", y repeated " << y_repeated << ", in place " << in_place);
                auto const baseline = run_row<D>(cpu_isa::baseline, n, y_repeated, in_place, false);
                CHECK(run_row<D>(cpu_isa::baseline, n, y_repeated, in_place, true) == baseline);
                for (cpu_isa level : {cpu_isa::x86_64_v3, cpu_isa::x86_64_v4}) {
                    if (sy::detail::host_cpu_isa() < level) continue;
                    CHECK(run_row<D>(level, n, y_repeated, in_place, false) == baseline);
                    CHECK(run_row<D>(level, n, y_repeated, in_place, true) == baseline);
                }
            }
        }
    }
}

}  // namespace

// Three inputs through the row function of `level`: out = (a * 2 + b) - c,
// the inputs in `repeated` (a bit per input) with stride 0: the register
// groups for one repeated input, the copies for two or three.
template <sy::dtype D>
std::vector<std::uint16_t> run_row3(sy::detail::cpu_isa level, std::int64_t n, unsigned repeated, bool stream) {
    using S = storage<D>;
    using C = compute<D>;
    std::vector<std::vector<S>> in(3, std::vector<S>(static_cast<std::size_t>(n > 0 ? n : 1)));
    for (std::size_t k = 0; k < 3; ++k)
        for (std::size_t i = 0; i < in[k].size(); ++i) in[k][i] = value_for<D>(static_cast<std::int64_t>(i * 3 + k));
    std::vector<S> out(static_cast<std::size_t>(n));
    auto const f = [](C a, C b, C c) { return (a * C(2) + b) - c; };
    auto const row = sy::detail::transform_row_for<D, S, C, 1, 3, decltype(f)>(level);
    S* ptr[4] = {out.data(), in[0].data(), in[1].data(), in[2].data()};
    std::int64_t inner[4] = {1, 1, 1, 1};
    for (int k = 0; k < 3; ++k)
        if (repeated & (1u << k)) inner[1 + k] = 0;
    row(f, ptr, inner, n, stream);
    sy::detail::stream_fence();
    std::vector<std::uint16_t> bits;
    for (std::int64_t i = 0; i < n; ++i) {
        auto const v = [&](int k) {
            return static_cast<C>(in[static_cast<std::size_t>(k)][static_cast<std::size_t>(inner[1 + k] * i)]);
        };
        // Exact in f16 and bf16 for these values, so every level agrees.
        REQUIRE(sy::detail::bits16(out[static_cast<std::size_t>(i)]) ==
                sy::detail::bits16(static_cast<S>(f(v(0), v(1), v(2)))));
        bits.push_back(sy::detail::bits16(out[static_cast<std::size_t>(i)]));
    }
    return bits;
}

// The fused rows (device/cpu/transform.h) run only where a row is dense and
// its storage needs converting; this reaches every CPU level this machine
// has, not only the one the runner picks.
TEST_CASE("every CPU level's row function gives the baseline's results", "[transform]") {
    check_every_level<sy::dtype::f16>();
    check_every_level<sy::dtype::bf16>();
    using sy::detail::cpu_isa;
    for (std::int64_t n : {0, 1, 15, 16, 17, 300, 1000}) {
        for (unsigned repeated = 0; repeated < 8; ++repeated) {
            for (bool stream : {false, true}) {
                INFO("three inputs, n " << n << ", repeated mask " << repeated << ", streamed " << stream);
                auto const f16 = run_row3<sy::dtype::f16>(cpu_isa::baseline, n, repeated, stream);
                auto const bf16 = run_row3<sy::dtype::bf16>(cpu_isa::baseline, n, repeated, stream);
                for (cpu_isa level : {cpu_isa::x86_64_v3, cpu_isa::x86_64_v4}) {
                    if (sy::detail::host_cpu_isa() < level) continue;
                    CHECK(run_row3<sy::dtype::f16>(level, n, repeated, stream) == f16);
                    CHECK(run_row3<sy::dtype::bf16>(level, n, repeated, stream) == bf16);
                }
            }
        }
    }
}

// An input repeated per row or per column, in chunks that start and end
// anywhere in a row. A per-row input runs the register loops (fused for
// f16/bf16, in place for f32).
template <sy::dtype D>
void check_chunks_with_a_repeated_input(std::int64_t rows, std::int64_t cols, bool per_row, bool stream = false) {
    using S = storage<D>;
    using C = compute<D>;
    std::int64_t const repeats = per_row ? rows : cols;
    std::vector<S> x(static_cast<std::size_t>(rows * cols)), y(static_cast<std::size_t>(repeats)), out(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = value_for<D>(static_cast<std::int64_t>(i));
    for (std::size_t i = 0; i < y.size(); ++i) y[i] = value_for<D>(static_cast<std::int64_t>(i * 7 + 3));
    sy::strided_ref const outs[] = {
        sy::strided_ref::contiguous(out.data(), D, sy::device_kind::cpu, {rows, cols}, "out")};
    sy::strided_ref const ins[] = {sy::strided_ref::contiguous(x.data(), D, sy::device_kind::cpu, {rows, cols}, "x"),
                                   per_row
                                       ? sy::strided_ref::contiguous(y.data(), D, sy::device_kind::cpu, {rows, 1}, "y")
                                       : sy::strided_ref::contiguous(y.data(), D, sy::device_kind::cpu, {cols}, "y")};
    auto const layout = sy::make_elementwise_layout("test", outs, 1, ins, 2);
    auto const f = [](C a, C b) { return a * C(2) + b; };
    std::int64_t const n = rows * cols;
    for (std::int64_t cut : {std::int64_t{1}, cols / 2 + 1, cols, cols + 1, 2 * cols + 3, 3 * cols - 7}) {
        INFO("rows " << rows << ", cols " << cols << (per_row ? ", per row" : ", per column")
                     << (stream ? ", streamed" : "") << ", chunks of " << cut);
        std::fill(out.begin(), out.end(), S{});
        for (std::int64_t b = 0; b < n; b += cut)
            sy::detail::transform_range<D, S, C, 1, 2>(f, layout, b, std::min(n, b + cut), stream);
        int wrong = 0;
        for (std::int64_t i = 0; i < n; ++i) {
            S const expected =
                static_cast<S>(static_cast<C>(x[static_cast<std::size_t>(i)]) * C(2) +
                               static_cast<C>(y[static_cast<std::size_t>(per_row ? i / cols : i % cols)]));
            if (std::memcmp(&out[static_cast<std::size_t>(i)], &expected, sizeof(S)) != 0) ++wrong;
        }
        CHECK(wrong == 0);
    }
}

TEST_CASE("an input repeated per row or per column gives every element in chunks", "[transform]") {
    for (auto [rows, cols] : {std::pair<std::int64_t, std::int64_t>{40, 300}, {9, 1000}, {3, 5000}}) {
        check_chunks_with_a_repeated_input<sy::dtype::f16>(rows, cols, false);
        check_chunks_with_a_repeated_input<sy::dtype::bf16>(rows, cols, false);
        check_chunks_with_a_repeated_input<sy::dtype::f32>(rows, cols, true);
        check_chunks_with_a_repeated_input<sy::dtype::f16>(rows, cols, true);
        check_chunks_with_a_repeated_input<sy::dtype::bf16>(rows, cols, true);
        // Streamed outputs: chunks and rows start at any alignment.
        check_chunks_with_a_repeated_input<sy::dtype::f16>(rows, cols, false, true);
        check_chunks_with_a_repeated_input<sy::dtype::bf16>(rows, cols, true, true);
        check_chunks_with_a_repeated_input<sy::dtype::f32>(rows, cols, true, true);
        check_chunks_with_a_repeated_input<sy::dtype::f32>(rows, cols, false, true);
    }
}

// Every bit pattern, times 1.3 so that the stores round, through the row
// function of every CPU level this machine has. On x86-64-v3 and up this
// compares F16C (f16) and the vector rounding of convert.h (bf16) with the
// integer conversions; at the baseline it checks the fused rows' lanes and
// tails. bf16 must match bit for bit, NaN payloads included.
template <sy::dtype D>
void check_every_bit_pattern(sy::detail::cpu_isa level) {
    using S = storage<D>;
    std::vector<std::uint16_t> bits(65536), out(65536, 0);
    std::iota(bits.begin(), bits.end(), std::uint16_t{0});
    auto const f = [](float v) { return v * 1.3f; };
    auto const row = sy::detail::transform_row_for<D, S, float, 1, 1, decltype(f)>(level);
    S* ptr[2] = {reinterpret_cast<S*>(out.data()), reinterpret_cast<S*>(bits.data())};
    std::int64_t const inner[2] = {1, 1};
    row(f, ptr, inner, 65536, false);
    constexpr bool f16 = D == sy::dtype::f16;
    int differ = 0;
    for (std::size_t i = 0; i < bits.size(); ++i) {
        float const in = f16 ? sy::detail::half_bits_to_float(bits[i]) : sy::detail::bfloat16_bits_to_float(bits[i]);
        float const product = in * 1.3f;
        std::uint16_t const expected =
            f16 ? sy::detail::float_to_half_bits(product) : sy::detail::float_to_bfloat16_bits(product);
        // An f16 NaN stays a NaN (F16C may keep more of its payload).
        if (f16 && std::isnan(in) ? !std::isnan(sy::detail::half_bits_to_float(out[i])) : out[i] != expected) ++differ;
    }
    CHECK(differ == 0);
}

TEST_CASE("fused f16 and bf16 rows convert every bit pattern as the scalar conversions do", "[transform]") {
    using sy::detail::cpu_isa;
    for (cpu_isa level : {cpu_isa::baseline, cpu_isa::x86_64_v3, cpu_isa::x86_64_v4}) {
        if (sy::detail::host_cpu_isa() < level) continue;
        INFO("level " << static_cast<int>(level));
        check_every_bit_pattern<sy::dtype::f16>(level);
        check_every_bit_pattern<sy::dtype::bf16>(level);
    }
}

TEST_CASE("SWITCHYARD_STREAM_STORE_BYTES takes a byte count and names itself when it is not one", "[transform]") {
    using sy::detail::parse_stream_store_bytes;
    CHECK(parse_stream_store_bytes("0") == 0);
    CHECK(parse_stream_store_bytes("16777216") == 16777216);
    CHECK(parse_stream_store_bytes("9223372036854775807") == sy::detail::cpu_stream_store_never);
    for (char const* bad :
         {"12x", "-1", " 5", "1e6", "9223372036854775808", "9999999999999999999", "99999999999999999999999"}) {
        INFO(bad);
        CHECK_THROWS_WITH(
            parse_stream_store_bytes(bad),
            Catch::StartsWith("SWITCHYARD_STREAM_STORE_BYTES must be a byte count") && Catch::Contains(bad));
    }
}

TEST_CASE("outputs stream when they total at least SWITCHYARD_STREAM_STORE_BYTES", "[transform]") {
    auto& threshold = sy::detail::cpu_stream_store_bytes();
    std::int64_t const saved = threshold.exchange(4096);
    bool const streams = sy::detail::cpu_streams_output(4096);
    bool const below = sy::detail::cpu_streams_output(4095);
    threshold.store(saved);
    CHECK_FALSE(below);
#if defined(SWITCHYARD_HAS_STREAM_STORES)
    CHECK(streams);
#else
    CHECK_FALSE(streams);
#endif
}

namespace coverage_test {

struct negate_op {
    template <typename Tag>
    static void op(Tag tag, sy::strided_ref const& out, sy::strided_ref const& x) {
        using C = sy::compute_t<Tag>;
        sy::transform(
            tag, out, [](C v) { return -v; }, x);
    }
    using space = sy::axes<sy::full_device_axis, sy::float_dtype_axis>;
    using subspaces = sy::transform_coverage<sy::float_dtype_axis>;
    using dispatcher = sy::dispatch_table<space, void(sy::strided_ref const&, sy::strided_ref const&)>;
};

}  // namespace coverage_test

TEST_CASE("transform_coverage: the devices this build runs transform on, each with the dtypes it stores",
          "[transform]") {
    using sy::device_kind;
    using sy::dtype;
    // This file is compiled by a host compiler without the WebGPU or Metal targets.
    static_assert(sy::transform_runs_on(device_kind::cpu));
    static_assert(!sy::transform_runs_on(device_kind::cuda) && !sy::transform_runs_on(device_kind::webgpu) &&
                  !sy::transform_runs_on(device_kind::metal));
    static_assert(std::is_same_v<sy::transform_coverage<sy::float_dtype_axis>,
                                 sy::coverage<sy::axes<sy::axis<device_kind::cpu>, sy::float_dtype_axis>>>);
    // What each device stores, as shader views check it when they are built.
    using sy::shader::device_stores_dtype;
    static_assert(
        std::is_same_v<sy::detail::axis_where<sy::float_dtype_axis, &device_stores_dtype<device_kind::webgpu>>::type,
                       sy::axis<dtype::f16, dtype::f32>>);
    static_assert(
        std::is_same_v<sy::detail::axis_where<sy::float_dtype_axis, &device_stores_dtype<device_kind::metal>>::type,
                       sy::axis<dtype::f16, dtype::bf16, dtype::f32>>);
    static_assert(
        std::is_same_v<sy::detail::axis_where<sy::full_dtype_axis, &device_stores_dtype<device_kind::cuda>>::type,
                       sy::full_dtype_axis>);
    static_assert(
        std::is_same_v<sy::detail::axis_where<sy::integer_dtype_axis, &device_stores_dtype<device_kind::webgpu>>::type,
                       sy::axis<dtype::i32>>);
    static_assert(
        sy::detail::axis_where<sy::axis<dtype::f64, dtype::i64>, &device_stores_dtype<device_kind::metal>>::size == 0);
    // An axis no shader device stores leaves the CPU alone (a regression: an
    // empty shader entry once failed to compile in every build).
    static_assert(std::is_same_v<sy::transform_coverage<sy::axis<dtype::f64>>,
                                 sy::coverage<sy::axes<sy::axis<device_kind::cpu>, sy::axis<dtype::f64>>>>);
    static_assert(
        std::is_same_v<sy::transform_coverage<sy::axis<dtype::boolean, dtype::i64>>,
                       sy::coverage<sy::axes<sy::axis<device_kind::cpu>, sy::axis<dtype::boolean, dtype::i64>>>>);

    auto const table = sy::dispatch_table_from_op<coverage_test::negate_op>("negate");
    std::vector<float> x = {1.5f, -2.0f}, out(2);
    auto const xr = sy::strided_ref::contiguous(x.data(), dtype::f32, device_kind::cpu, {2}, "x");
    auto const outr = sy::strided_ref::contiguous(out.data(), dtype::f32, device_kind::cpu, {2}, "out");
    table.select(sy::dispatch_set{device_kind::cpu, dtype::f32})(outr, xr);
    CHECK(out == std::vector<float>{-1.5f, 2.0f});
    CHECK_THROWS_AS(table.select(sy::dispatch_set{device_kind::webgpu, dtype::f32}), sy::dispatch_lookup_error);
    CHECK_THROWS_AS(table.select(sy::dispatch_set{device_kind::cuda, dtype::f64}), sy::dispatch_lookup_error);
}
