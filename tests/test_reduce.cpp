// Tests of transform_reduce on the CPU and of reduction_layout: sum, prod,
// amin, amax, argmin, argmax and a user's combine against a reference by coordinates, for
// every float dtype and int32, ranks 0 to 5, reduced dimensions first,
// middle, last, several and all, keepdim or not, transposed, sliced,
// reversed and broadcast inputs, a strided output, empty dimensions, NaN and
// inf; int32 sums and products that wrap; the accuracy of a 2^24-element
// f32 sum; the same bits whatever the pool's size; kernels on a lent team
// (team_pool.h); and every error naming the argument.
#include <switchyard/reduce.h>
#include <switchyard/switchyard.h>

#include <catch2/catch.hpp>

#include "test_arrays.h"

#include <array>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>
#include <thread>
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
using cpu_tag = sy::tag<sy::device_kind::cpu, D>;

struct reduce_case {
    char const* what;
    std::vector<std::int64_t> x_sizes, x_strides;
    std::vector<std::int64_t> y_sizes, y_strides;  // y_sizes empty: one input
    std::vector<std::int64_t> dims;                // empty: all_dims
    bool keepdim = false;
    std::vector<std::int64_t> out_strides = {};  // empty: row-major
};

std::vector<reduce_case> reduce_cases() {
    return {
        {"rank 0, all", {}, {}, {}, {}, {}},
        {"rank 0, dim 0", {}, {}, {}, {}, {0}},
        {"rank 0, dim -1 keepdim", {}, {}, {}, {}, {-1}, true},
        {"rank 1, all", {7}, {}, {}, {}, {}},
        {"rank 1, all keepdim", {1000}, {}, {}, {}, {}, true},
        {"rank 2, last", {5, 300}, {}, {}, {}, {-1}},
        {"rank 2, first", {5, 300}, {}, {}, {}, {0}},
        {"rank 2, both", {5, 300}, {}, {}, {}, {0, 1}},
        {"rank 3, middle keepdim", {3, 40, 5}, {}, {}, {}, {1}, true},
        {"rank 3, first and last", {3, 40, 5}, {}, {}, {}, {2, 0}},
        {"rank 4, dims 1 and 3", {2, 3, 4, 5}, {}, {}, {}, {1, 3}},
        {"rank 5, dims 0, 2, 4", {2, 3, 2, 3, 4}, {}, {}, {}, {0, 2, 4}},
        {"rank 5, dims 1, 3 keepdim", {2, 3, 2, 3, 4}, {}, {}, {}, {-4, -2}, true},
        {"transposed, dim 0", {30, 20}, {1, 30}, {}, {}, {0}},
        {"transposed, dim 1", {30, 20}, {1, 30}, {}, {}, {1}},
        {"sliced", {17, 19}, {40, 2}, {}, {}, {1}},
        {"reversed", {1000}, {-1}, {}, {}, {0}},
        {"broadcast y per row", {6, 5, 4}, {}, {5, 1}, {}, {1}},
        {"broadcast both", {6, 1, 4}, {}, {5, 1}, {}, {0, 2}},
        {"broadcast y strided", {8, 9}, {}, {8, 1}, {5, 1}, {0}},
        {"long rows across blocks", {3, 70000}, {}, {}, {}, {-1}},
        {"many short rows", {20000, 3}, {}, {}, {}, {-1}},
        {"long columns across blocks", {70000, 3}, {}, {}, {}, {0}},
        {"wide columns", {2, 5000, 300}, {}, {}, {}, {1}},
        {"columns wider than a task", {40, 2500}, {}, {}, {}, {0}},
        {"wide middle across blocks", {3, 50, 1100}, {}, {}, {}, {1}},
        {"all of a large array", {300, 700}, {}, {300, 1}, {}, {}},
        {"strided output", {20, 30, 5}, {}, {}, {}, {2}, false, {1, 20}},
        {"empty kept dimension", {0, 5}, {}, {}, {}, {1}},
        {"empty reduced dimension", {4, 0}, {}, {}, {}, {1}},
    };
}

template <sy::dtype D>
storage<D> value_for(std::int64_t i) {
    return static_cast<storage<D>>(static_cast<compute<D>>(i % 23) - compute<D>(7));
}

// The output shape (keepdim or not) and, per coordinate of the input shape,
// the output's flat index.
struct reduced_shape {
    std::vector<std::int64_t> in_sizes, out_sizes;
    std::vector<bool> reduced;

    reduced_shape(std::vector<std::int64_t> const& x, std::vector<std::int64_t> const& y,
                  std::vector<std::int64_t> const& dims, bool keepdim) {
        in_sizes = x;
        if (y.size() > in_sizes.size()) in_sizes.insert(in_sizes.begin(), y.size() - in_sizes.size(), 1);
        for (std::size_t d = 0; d < y.size(); ++d) {
            auto& s = in_sizes[in_sizes.size() - y.size() + d];
            if (s == 1) s = y[d];
        }
        auto const rank = static_cast<std::int64_t>(in_sizes.size());
        reduced.assign(in_sizes.size(), dims.empty());
        for (auto d : dims)
            if (rank > 0) reduced[static_cast<std::size_t>(d < 0 ? d + rank : d)] = true;
        for (std::size_t d = 0; d < in_sizes.size(); ++d)
            if (!reduced[d])
                out_sizes.push_back(in_sizes[d]);
            else if (keepdim)
                out_sizes.push_back(1);
    }
    std::vector<std::int64_t> out_coords(std::vector<std::int64_t> const& c, bool keepdim) const {
        std::vector<std::int64_t> o;
        for (std::size_t d = 0; d < c.size(); ++d)
            if (!reduced[d])
                o.push_back(c[d]);
            else if (keepdim)
                o.push_back(0);
        return o;
    }
};

std::int64_t flat_of(std::vector<std::int64_t> const& c, std::vector<std::int64_t> const& sizes) {
    std::int64_t i = 0;
    for (std::size_t d = 0; d < c.size(); ++d) i = i * sizes[d] + c[d];
    return i;
}

template <sy::dtype D>
double tolerance(double magnitude) {
    if constexpr (D == sy::dtype::f16) return magnitude * 1e-3 + 1e-3;
    if constexpr (D == sy::dtype::bf16) return magnitude * 8e-3 + 1e-2;
    if constexpr (D == sy::dtype::f32) return magnitude * 1e-6;
    return magnitude * 1e-13;
}

// sum of x * y + 1 (or x * x with one input) against a double reference.
template <sy::dtype D>
void check_sums() {
    using S = storage<D>;
    using C = compute<D>;
    for (auto const& c : reduce_cases()) {
        INFO(c.what);
        auto stride_or = [](auto const& sizes, auto const& strides) {
            return strides.empty() ? row_major(sizes) : strides;
        };
        bool const two = !c.y_sizes.empty();
        reduced_shape const shape(c.x_sizes, c.y_sizes, c.dims, c.keepdim);
        array<S> x(D, c.x_sizes, stride_or(c.x_sizes, c.x_strides), "x");
        array<S> y(D, two ? c.y_sizes : std::vector<std::int64_t>{},
                   two ? stride_or(c.y_sizes, c.y_strides) : std::vector<std::int64_t>{}, "y");
        array<S> out(D, shape.out_sizes, stride_or(shape.out_sizes, c.out_strides), "out");
        for (std::size_t i = 0; i < x.buffer.size(); ++i) x.buffer[i] = value_for<D>(static_cast<std::int64_t>(i));
        for (std::size_t i = 0; i < y.buffer.size(); ++i)
            y.buffer[i] = value_for<D>(static_cast<std::int64_t>(i * 7 + 3));
        sy::dims const over = c.dims.empty() ? sy::all_dims : sy::dims(c.dims.data(), c.dims.size());
        if (two)
            sy::transform_reduce(
                cpu_tag<D>{}, out.ref, over, sy::sum, [](C a, C b) { return a * b + C(1); }, x.ref, y.ref);
        else
            sy::transform_reduce(
                cpu_tag<D>{}, out.ref, over, sy::sum, [](C a) { return a * a; }, x.ref);

        std::int64_t n_out = 1;
        for (auto s : shape.out_sizes) n_out *= s;
        std::vector<double> expected(static_cast<std::size_t>(n_out)), magnitude(expected.size());
        for_coords(shape.in_sizes, [&](std::vector<std::int64_t> const& at) {
            double const a = static_cast<double>(static_cast<C>(x.at(at)));
            double const v = two ? a * static_cast<double>(static_cast<C>(y.at(at))) + 1 : a * a;
            auto const o = static_cast<std::size_t>(flat_of(shape.out_coords(at, c.keepdim), shape.out_sizes));
            expected[o] += v;
            magnitude[o] += std::fabs(v);
        });
        int wrong = 0;
        for_coords(shape.out_sizes, [&](std::vector<std::int64_t> const& at) {
            auto const o = static_cast<std::size_t>(flat_of(at, shape.out_sizes));
            double const got = static_cast<double>(static_cast<C>(out.at(at)));
            // A sum past the storage type's range (f16: 65504) is stored as inf, as PyTorch's is.
            double const stored = static_cast<double>(static_cast<C>(static_cast<S>(static_cast<C>(expected[o]))));
            bool const ok =
                std::isinf(stored) ? got == stored : std::fabs(got - expected[o]) <= tolerance<D>(magnitude[o]);
            if (!ok) {
                if (wrong < 3) UNSCOPED_INFO("at flat " << o << ": got " << got << ", expected " << expected[o]);
                ++wrong;
            }
        });
        CHECK(wrong == 0);
    }
}

}  // namespace

TEST_CASE("transform_reduce sums match a reference for every layout", "[reduce]") {
    SECTION("f32") { check_sums<sy::dtype::f32>(); }
    SECTION("f64") { check_sums<sy::dtype::f64>(); }
    SECTION("f16") { check_sums<sy::dtype::f16>(); }
    SECTION("bf16") { check_sums<sy::dtype::bf16>(); }
    SECTION("i32") { check_sums<sy::dtype::i32>(); }
}

namespace {

// A user's combine: the largest magnitude, NaN from either side (as amax).
auto const max_magnitude = sy::combine(
    [](float a, float b) {
        float const x = std::fabs(a), y = std::fabs(b);
        return x > y || x != x ? x : y;
    },
    0.0f);

// amin, amax, prod and a user's combine over rows and columns of x, against
// a reference folding the same values in order.
template <sy::dtype D, typename Combine>
void check_combine(Combine const& combine, std::vector<std::int64_t> const& sizes, std::int64_t dim,
                   std::vector<storage<D>> const& values, bool exact) {
    using S = storage<D>;
    using C = compute<D>;
    array<S> x(D, sizes, row_major(sizes), "x");
    x.buffer = values;
    x.ref.data = x.buffer.data();
    std::vector<std::int64_t> out_sizes = sizes;
    out_sizes.erase(out_sizes.begin() + dim);
    array<S> out(D, out_sizes, row_major(out_sizes), "out");
    sy::reduce(cpu_tag<D>{}, out.ref, sy::dims{dim}, combine, x.ref);
    std::vector<C> expected(out.buffer.size(), combine.template identity<C>());
    for_coords(sizes, [&](std::vector<std::int64_t> const& at) {
        auto o = at;
        o.erase(o.begin() + dim);
        auto& e = expected[static_cast<std::size_t>(flat_of(o, out_sizes))];
        e = combine(e, static_cast<C>(x.at(at)));
    });
    for (std::size_t i = 0; i < expected.size(); ++i) {
        INFO("output " << i);
        C const got = static_cast<C>(out.buffer[i]);
        C const want = static_cast<C>(static_cast<S>(expected[i]));
        if (std::isnan(static_cast<double>(want)))
            CHECK(std::isnan(static_cast<double>(got)));
        else if (exact)
            CHECK(got == want);
        else
            CHECK(static_cast<double>(got) == Approx(static_cast<double>(want)).epsilon(1e-5));
    }
}

}  // namespace

// amax and amin as written before they became two selects (a branch-free
// form for the scalar folds): the same result, bit for bit, for every pair.
template <typename A>
void check_min_max_against_one_select(std::vector<A> const& values) {
    for (A a : values)
        for (A b : values) {
            A const larger = (a > b || a != a) ? a : b, smaller = (a < b || a != a) ? a : b;
            A const got_max = sy::amax(a, b), got_min = sy::amin(a, b);
            INFO("a = " << a << ", b = " << b);
            CHECK(std::memcmp(&got_max, &larger, sizeof(A)) == 0);
            CHECK(std::memcmp(&got_min, &smaller, sizeof(A)) == 0);
        }
}

TEST_CASE("amax and amin: NaN from either side, ties and signed zeros as one select gives them", "[reduce]") {
    float const fnan = std::numeric_limits<float>::quiet_NaN(), finf = std::numeric_limits<float>::infinity();
    check_min_max_against_one_select<float>({fnan, -fnan, finf, -finf, 0.0f, -0.0f, 1.5f, -2.0f, 1e-45f, 3e38f});
    double const dnan = std::numeric_limits<double>::quiet_NaN(), dinf = std::numeric_limits<double>::infinity();
    check_min_max_against_one_select<double>({dnan, -dnan, dinf, -dinf, 0.0, -0.0, 1.5, -2.0, 5e-324});
    check_min_max_against_one_select<std::int64_t>(
        {0, -1, 1, std::numeric_limits<std::int64_t>::min(), std::numeric_limits<std::int64_t>::max()});
}

TEST_CASE("transform_reduce: amin, amax, prod and a user's combine", "[reduce]") {
    constexpr auto f32 = sy::dtype::f32;
    std::vector<float> v(6 * 700);
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>((i * 37) % 1001) - 500.0f;
    float const nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
    v[3 * 700 + 650] = nan;  // row 3, column 650
    v[1 * 700 + 5] = inf;    // row 1
    v[2 * 700 + 9] = -inf;   // row 2
    for (std::int64_t dim : {0, 1}) {
        INFO("dim " << dim);
        check_combine<f32>(sy::amax, {6, 700}, dim, v, true);
        check_combine<f32>(sy::amin, {6, 700}, dim, v, true);
        check_combine<f32>(sy::sum, {6, 700}, dim, v, false);
        check_combine<f32>(max_magnitude, {6, 700}, dim, v, true);
    }
    // Columns wider than a task's tile (reduce_column_tile) over several
    // blocks of reduced indices, in place and converted.
    std::vector<float> wide(40 * 2500);
    for (std::size_t i = 0; i < wide.size(); ++i) wide[i] = static_cast<float>((i * 37) % 1001) - 500.0f;
    wide[17 * 2500 + 2100] = nan;
    wide[33 * 2500 + 1500] = inf;
    check_combine<f32>(sy::amax, {40, 2500}, 0, wide, true);
    check_combine<f32>(sy::amin, {40, 2500}, 0, wide, true);
    check_combine<f32>(max_magnitude, {40, 2500}, 0, wide, true);
    std::vector<sy::bfloat16> wide_b(wide.begin(), wide.end());
    check_combine<sy::dtype::bf16>(sy::amax, {40, 2500}, 0, wide_b, true);
    std::vector<float> near_one(9 * 50);
    for (std::size_t i = 0; i < near_one.size(); ++i) near_one[i] = 1.0f + static_cast<float>(i % 5) / 64.0f - 0.03f;
    check_combine<f32>(sy::prod, {9, 50}, 1, near_one, false);
    check_combine<f32>(sy::prod, {9, 50}, 0, near_one, false);
    std::vector<sy::bfloat16> b(4 * 300);
    for (std::size_t i = 0; i < b.size(); ++i) b[i] = sy::bfloat16(static_cast<float>(i % 97) - 40.0f);
    check_combine<sy::dtype::bf16>(sy::amax, {4, 300}, 1, b, true);
    check_combine<sy::dtype::bf16>(sy::amin, {4, 300}, 0, b, true);
    std::vector<std::int32_t> ints(5 * 400);
    for (std::size_t i = 0; i < ints.size(); ++i) ints[i] = static_cast<std::int32_t>((i * 7919) % 100003) - 50000;
    check_combine<sy::dtype::i32>(sy::amax, {5, 400}, 1, ints, true);
    check_combine<sy::dtype::i32>(sy::amin, {5, 400}, 0, ints, true);
}

namespace {

// A row sum of x * y + 1 over contiguous [5, n] x and y: small integers, so
// that the float sum is exact and the stored result is known bit for bit.
template <sy::dtype D>
void check_two_input_rows(std::int64_t n) {
    using S = storage<D>;
    using C = compute<D>;
    constexpr std::int64_t rows = 5;
    std::vector<S> x(static_cast<std::size_t>(rows * n)), y(x.size()), out(rows);
    for (std::size_t i = 0; i < x.size(); ++i) {
        x[i] = S(static_cast<float>((i * 37) % 19) - 9.0f);
        y[i] = S(static_cast<float>((i * 11) % 7) - 3.0f);
    }
    auto const cpu = sy::device_kind::cpu;
    auto const xs = sy::strided_ref::contiguous(x.data(), D, cpu, {rows, n}, "x");
    auto const ys = sy::strided_ref::contiguous(y.data(), D, cpu, {rows, n}, "y");
    auto const os = sy::strided_ref::contiguous(out.data(), D, cpu, {rows}, "out");
    sy::transform_reduce(
        cpu_tag<D>{}, os, sy::dims{-1}, sy::sum, [](C a, C b) { return a * b + C(1); }, xs, ys);
    for (std::int64_t r = 0; r < rows; ++r) {
        double want = 0;
        for (std::int64_t j = 0; j < n; ++j) {
            auto const i = static_cast<std::size_t>(r * n + j);
            want += static_cast<double>(static_cast<C>(x[i])) * static_cast<double>(static_cast<C>(y[i])) + 1;
        }
        INFO("row " << r);
        CHECK(static_cast<double>(static_cast<C>(out[static_cast<std::size_t>(r)])) ==
              static_cast<double>(static_cast<C>(S(static_cast<C>(want)))));
    }
}

}  // namespace

// Rows of up to half the lanes fold over the power of two at or above their
// length (device/cpu/reduce.h, fold_short_run), in chunks with a padded
// last one; longer ones take the general loop. Every length up to past W,
// every combine, a NaN and infinities in some rows, and storage that is
// converted (bf16, f16).
TEST_CASE("transform_reduce: rows of every length up to past the lanes", "[reduce]") {
    constexpr std::int64_t W = sy::detail::reduce_lanes<float>;
    float const nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
    for (std::int64_t n = 1; n <= W + 20; ++n) {
        INFO("row length " << n);
        std::vector<float> v(static_cast<std::size_t>(5 * n));
        for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>((i * 37) % 1001) - 500.0f;
        v[static_cast<std::size_t>(1 * n + n / 2)] = nan;
        v[static_cast<std::size_t>(2 * n + n - 1)] = inf;
        v[static_cast<std::size_t>(3 * n)] = -inf;
        check_combine<sy::dtype::f32>(sy::amax, {5, n}, 1, v, true);
        check_combine<sy::dtype::f32>(sy::amin, {5, n}, 1, v, true);
        check_combine<sy::dtype::f32>(sy::sum, {5, n}, 1, v, false);
        check_combine<sy::dtype::f32>(max_magnitude, {5, n}, 1, v, true);
        std::vector<float> near_one(v.size());
        for (std::size_t i = 0; i < v.size(); ++i) near_one[i] = 1.0f + static_cast<float>(i % 5) / 64.0f - 0.03f;
        check_combine<sy::dtype::f32>(sy::prod, {5, n}, 1, near_one, false);
        std::vector<double> d(v.begin(), v.end());
        check_combine<sy::dtype::f64>(sy::sum, {5, n}, 1, d, false);
        check_combine<sy::dtype::f64>(sy::amax, {5, n}, 1, d, true);
        std::vector<sy::bfloat16> b(v.size());
        std::vector<sy::half> h(v.size());
        for (std::size_t i = 0; i < v.size(); ++i) {
            float const small = std::isfinite(v[i]) ? v[i] / 64.0f : v[i];
            b[i] = sy::bfloat16(small), h[i] = sy::half(small);
        }
        check_combine<sy::dtype::bf16>(sy::amax, {5, n}, 1, b, true);
        check_combine<sy::dtype::bf16>(sy::sum, {5, n}, 1, b, false);
        check_combine<sy::dtype::f16>(sy::amin, {5, n}, 1, h, true);
        check_combine<sy::dtype::f16>(sy::sum, {5, n}, 1, h, false);
        check_two_input_rows<sy::dtype::f32>(n);
        check_two_input_rows<sy::dtype::bf16>(n);
    }
}

namespace {

// argmax (or argmin) of x * y + 1 (or x with one input) for every layout of
// reduce_cases, against a reference that visits each output's values in
// row-major order, so the k-th visit is index k: the first NaN, else the
// first largest (smallest) value. value_for repeats values, so ties are many.
template <sy::dtype D, bool Largest>
void check_arg() {
    using S = storage<D>;
    using C = compute<D>;
    for (auto const& c : reduce_cases()) {
        bool const two = !c.y_sizes.empty();
        reduced_shape const shape(c.x_sizes, c.y_sizes, c.dims, c.keepdim);
        std::int64_t n_reduced = 1;
        for (std::size_t d = 0; d < shape.in_sizes.size(); ++d)
            if (shape.reduced[d]) n_reduced *= shape.in_sizes[d];
        if (n_reduced == 0) continue;  // refused: the error test covers it
        INFO(c.what);
        auto stride_or = [](auto const& sizes, auto const& strides) {
            return strides.empty() ? row_major(sizes) : strides;
        };
        array<S> x(D, c.x_sizes, stride_or(c.x_sizes, c.x_strides), "x");
        array<S> y(D, two ? c.y_sizes : std::vector<std::int64_t>{},
                   two ? stride_or(c.y_sizes, c.y_strides) : std::vector<std::int64_t>{}, "y");
        array<std::int64_t> out(sy::dtype::i64, shape.out_sizes, stride_or(shape.out_sizes, c.out_strides), "out");
        for (std::size_t i = 0; i < x.buffer.size(); ++i) x.buffer[i] = value_for<D>(static_cast<std::int64_t>(i));
        for (std::size_t i = 0; i < y.buffer.size(); ++i)
            y.buffer[i] = value_for<D>(static_cast<std::int64_t>(i * 7 + 3));
        if constexpr (std::is_floating_point_v<C>)
            if (x.buffer.size() > 50)
                x.buffer[x.buffer.size() / 3] = static_cast<S>(std::numeric_limits<C>::quiet_NaN());
        sy::dims const over = c.dims.empty() ? sy::all_dims : sy::dims(c.dims.data(), c.dims.size());
        auto const arg = [] {
            if constexpr (Largest)
                return sy::argmax;
            else
                return sy::argmin;
        }();
        auto const f = [](C a, C b) { return static_cast<C>(a * b + C(1)); };
        if (two)
            sy::transform_reduce(cpu_tag<D>{}, out.ref, over, arg, f, x.ref, y.ref);
        else
            sy::reduce(cpu_tag<D>{}, out.ref, over, arg, x.ref);

        std::int64_t n_out = 1;
        for (auto s : shape.out_sizes) n_out *= s;
        std::vector<C> best(static_cast<std::size_t>(n_out));
        std::vector<std::int64_t> best_index(best.size(), -1), seen(best.size(), 0);
        for_coords(shape.in_sizes, [&](std::vector<std::int64_t> const& at) {
            C const v = two ? f(static_cast<C>(x.at(at)), static_cast<C>(y.at(at))) : static_cast<C>(x.at(at));
            auto const o = static_cast<std::size_t>(flat_of(shape.out_coords(at, c.keepdim), shape.out_sizes));
            std::int64_t const k = seen[o]++;
            bool const v_nan = v != v, best_nan = best_index[o] >= 0 && best[o] != best[o];
            bool const better = Largest ? v > best[o] : v < best[o];
            if (best_index[o] < 0 || (!best_nan && (v_nan || better))) best[o] = v, best_index[o] = k;
        });
        int wrong = 0;
        for_coords(shape.out_sizes, [&](std::vector<std::int64_t> const& at) {
            auto const o = static_cast<std::size_t>(flat_of(at, shape.out_sizes));
            if (out.at(at) != best_index[o]) {
                if (wrong < 3)
                    UNSCOPED_INFO("at flat " << o << ": got " << out.at(at) << ", expected " << best_index[o]);
                ++wrong;
            }
        });
        CHECK(wrong == 0);
    }
}

}  // namespace

TEST_CASE("transform_reduce: argmax and argmin give PyTorch's index for every layout", "[reduce]") {
    SECTION("f32") { check_arg<sy::dtype::f32, true>(), check_arg<sy::dtype::f32, false>(); }
    SECTION("f64") { check_arg<sy::dtype::f64, true>(), check_arg<sy::dtype::f64, false>(); }
    SECTION("f16") { check_arg<sy::dtype::f16, true>(), check_arg<sy::dtype::f16, false>(); }
    SECTION("bf16") { check_arg<sy::dtype::bf16, true>(), check_arg<sy::dtype::bf16, false>(); }
    SECTION("i32") { check_arg<sy::dtype::i32, true>(), check_arg<sy::dtype::i32, false>(); }
}

TEST_CASE("argmax/argmin advance: a lane walking forward gives what the pair combine gives", "[reduce]") {
    // CUDA's row reduction folds each thread's values with advance (indices
    // only grow); the block then combines pairs. Both must agree.
    float const nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
    std::vector<float> const values = {-inf, 2.0f, 2.0f, -0.0f, 0.0f, nan, 3.0f, nan, -inf, 7.0f};
    auto check = [&](auto const& arg, std::size_t start) {
        auto walked = arg.template identity<float>(), folded = walked;
        for (std::size_t i = start; i < values.size(); ++i) {
            auto const index = static_cast<std::int64_t>(i);
            walked = arg.advance(walked, values[i], index);
            folded = arg(folded, sy::value_index<float>{values[i], index});
            CHECK(walked.index == folded.index);
        }
    };
    for (std::size_t start = 0; start < values.size(); ++start) {
        check(sy::argmax, start);
        check(sy::argmin, start);
    }
    constexpr auto first = sy::argmax.advance(sy::argmax.identity<float>(), -std::numeric_limits<float>::infinity(), 5);
    STATIC_REQUIRE(first.index == 5);  // the identity gives way even to its own value
}

TEST_CASE("transform_reduce: argmax takes the first of equal values and the first NaN", "[reduce]") {
    constexpr auto f32 = sy::dtype::f32;
    using tag = cpu_tag<f32>;
    float const nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
    // Long enough that each row spans several blocks and lanes.
    std::int64_t const n = 20000;
    std::vector<float> x(static_cast<std::size_t>(4 * n), -inf);
    x[static_cast<std::size_t>(0 * n + 9000)] = 2.0f;  // row 0: 2.0 at 9000 and 15000
    x[static_cast<std::size_t>(0 * n + 15000)] = 2.0f;
    x[static_cast<std::size_t>(1 * n + 17000)] = nan;  // row 1: NaN after a larger value
    x[static_cast<std::size_t>(1 * n + 100)] = 5.0f;
    x[static_cast<std::size_t>(1 * n + 19000)] = nan;
    x[static_cast<std::size_t>(2 * n + 0)] = -0.0f;  // row 2: -0 and +0 are equal
    x[static_cast<std::size_t>(2 * n + 1)] = 0.0f;
    // row 3: all -inf: index 0
    std::vector<std::int64_t> index(4, -1), low(4, -1);
    auto const xs = sy::strided_ref::contiguous(x.data(), f32, sy::device_kind::cpu, {4, n}, "x");
    auto const out = sy::strided_ref::contiguous(index.data(), sy::dtype::i64, sy::device_kind::cpu, {4}, "index");
    sy::reduce(tag{}, out, sy::dims{1}, sy::argmax, xs);
    CHECK(index == std::vector<std::int64_t>{9000, 17000, 0, 0});
    auto const low_out = sy::strided_ref::contiguous(low.data(), sy::dtype::i64, sy::device_kind::cpu, {4}, "index");
    sy::reduce(tag{}, low_out, sy::dims{1}, sy::argmin, xs);
    CHECK(low == std::vector<std::int64_t>{0, 17000, 2, 0});  // row 2: the first -inf
    // Over all dimensions: the flat row-major index.
    std::int64_t flat = -1;
    auto const flat_out = sy::strided_ref::contiguous(&flat, sy::dtype::i64, sy::device_kind::cpu, {}, "index");
    sy::reduce(tag{}, flat_out, sy::all_dims, sy::argmax, xs);
    CHECK(flat == 1 * n + 17000);
    // A transposed view: the index counts along the logical dimension.
    auto const xt = sy::strided_ref::make(x.data(), f32, sy::device_kind::cpu, {n, 4}, {1, n}, "x");
    std::vector<std::int64_t> columns(4, -1);
    auto const col_out = sy::strided_ref::contiguous(columns.data(), sy::dtype::i64, sy::device_kind::cpu, {4}, "i");
    sy::reduce(tag{}, col_out, sy::dims{0}, sy::argmax, xt);
    CHECK(columns == std::vector<std::int64_t>{9000, 17000, 0, 0});
    sy::reduce(tag{}, flat_out, sy::all_dims, sy::argmax, xt);
    CHECK(flat == 17000 * 4 + 1);
}

TEST_CASE("transform_reduce: argmax ties take the smallest index when memory orders dimensions otherwise", "[reduce]") {
    // The CPU scans a run again only when its max beats or ties the best so
    // far; a tie met later in memory order can have the smaller index. x
    // [7, 9, 41] with its dimensions permuted in memory and rows padded (so
    // some reduced dimensions do not merge and short rows are gathered),
    // values from {0, 1, 2} (many ties) and a few NaNs.
    std::int64_t const sizes[3] = {7, 9, 41};
    std::vector<std::array<int, 3>> const orders = {{0, 1, 2}, {2, 1, 0}, {1, 2, 0}, {2, 0, 1}};
    std::uint64_t state = 12345;
    auto const next = [&] { return (state = state * 6364136223846793005u + 1442695040888963407u) >> 33; };
    for (auto const& order : orders)
        for (bool const nans : {false, true}) {
            // order[0] innermost in memory; a pad of 3 after it.
            std::int64_t strides[3] = {}, step = 1;
            for (int p = 0; p < 3; ++p) {
                strides[order[p]] = step;
                step = step * sizes[order[p]] + (p == 0 ? 3 : 0);
            }
            std::vector<float> x(static_cast<std::size_t>(step));
            for (auto& v : x) v = static_cast<float>(next() % 3);
            if (nans)
                for (int k = 0; k < 5; ++k) x[next() % x.size()] = std::numeric_limits<float>::quiet_NaN();
            auto const xs =
                sy::strided_ref::make(x.data(), sy::dtype::f32, sy::device_kind::cpu, sizes, strides, 3, "x");
            auto const at = [&](std::int64_t i, std::int64_t j, std::int64_t k) {
                return x[static_cast<std::size_t>(i * strides[0] + j * strides[1] + k * strides[2])];
            };
            for (bool const largest : {true, false}) {
                INFO("memory order " << order[0] << order[1] << order[2] << ", NaNs " << nans << ", argmax "
                                     << largest);
                // Over all dimensions, and over {0, 2} (one output per j).
                std::int64_t want_all = -1;
                std::vector<std::int64_t> want_rows(9, -1);
                std::vector<float> best_rows(9);
                float best_all = 0;
                auto const better = [&](float v, float best, std::int64_t index) {
                    if (index < 0) return true;
                    if (best != best) return false;
                    return v != v || (largest ? v > best : v < best);
                };
                for (std::int64_t i = 0; i < 7; ++i)
                    for (std::int64_t j = 0; j < 9; ++j)
                        for (std::int64_t k = 0; k < 41; ++k) {
                            float const v = at(i, j, k);
                            if (better(v, best_all, want_all)) best_all = v, want_all = (i * 9 + j) * 41 + k;
                            auto const r = static_cast<std::size_t>(j);
                            if (better(v, best_rows[r], want_rows[r])) best_rows[r] = v, want_rows[r] = i * 41 + k;
                        }
                std::int64_t got_all = -1;
                std::vector<std::int64_t> got_rows(9, -1);
                auto const all_out =
                    sy::strided_ref::contiguous(&got_all, sy::dtype::i64, sy::device_kind::cpu, {}, "i");
                auto const rows_out =
                    sy::strided_ref::contiguous(got_rows.data(), sy::dtype::i64, sy::device_kind::cpu, {9}, "i");
                using tag = cpu_tag<sy::dtype::f32>;
                if (largest) {
                    sy::reduce(tag{}, all_out, sy::all_dims, sy::argmax, xs);
                    sy::reduce(tag{}, rows_out, sy::dims{0, 2}, sy::argmax, xs);
                } else {
                    sy::reduce(tag{}, all_out, sy::all_dims, sy::argmin, xs);
                    sy::reduce(tag{}, rows_out, sy::dims{0, 2}, sy::argmin, xs);
                }
                CHECK(got_all == want_all);
                CHECK(got_rows == want_rows);
            }
        }
}

TEST_CASE("transform_reduce: sum propagates NaN and inf as PyTorch does", "[reduce]") {
    constexpr auto f32 = sy::dtype::f32;
    float const nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
    std::vector<float> x(4 * 9000, 1.0f);
    x[0 * 9000 + 8500] = nan;  // a NaN in a later block of row 0
    x[1 * 9000 + 3] = inf;
    x[2 * 9000 + 3] = inf;
    x[2 * 9000 + 8999] = -inf;  // inf - inf
    std::vector<float> out(4);
    auto const xr = sy::strided_ref::contiguous(x.data(), f32, sy::device_kind::cpu, {4, 9000}, "x");
    auto const outr = sy::strided_ref::contiguous(out.data(), f32, sy::device_kind::cpu, {4}, "out");
    sy::reduce(cpu_tag<f32>{}, outr, sy::dims{1}, sy::sum, xr);
    CHECK(std::isnan(out[0]));
    CHECK(out[1] == inf);
    CHECK(std::isnan(out[2]));
    CHECK(out[3] == 9000.0f);
    sy::reduce(cpu_tag<f32>{}, outr, sy::dims{1}, sy::amax, xr);
    CHECK(std::isnan(out[0]));
    CHECK(out[1] == inf);
    CHECK(std::isnan(out[2]) == false);
    CHECK(out[2] == inf);
}

TEST_CASE("transform_reduce: int32 sums and products wrap as PyTorch's stored into int32", "[reduce]") {
    // PyTorch accumulates in int64 and stores the low 32 bits; signed
    // overflow in int32 would be undefined behaviour (UBSan fails it). Two
    // values already overflow, so rows and columns both wrap.
    constexpr auto i32 = sy::dtype::i32;
    // Every width, at compile time (constant evaluation rejects overflow).
    STATIC_REQUIRE(sy::sum(std::int64_t{INT64_MAX}, std::int64_t{1}) == INT64_MIN);
    STATIC_REQUIRE(sy::prod(std::int64_t{INT64_MIN}, std::int64_t{-1}) == INT64_MIN);
    STATIC_REQUIRE(sy::prod(std::int16_t{-32768}, std::int16_t{-32768}) == 0);
    STATIC_REQUIRE(sy::sum(std::int8_t{127}, std::int8_t{1}) == std::int8_t{-128});
    STATIC_REQUIRE(sy::sum(true, true) == true);
    for (std::int64_t const dim : {0, 1}) {
        INFO("dim " << dim);
        std::int64_t const rows = 3, cols = 9000;  // a row has two blocks
        std::vector<std::int32_t> x(static_cast<std::size_t>(rows * cols));
        for (std::size_t i = 0; i < x.size(); ++i) x[i] = (1 << 30) + static_cast<std::int32_t>(i % 3);
        std::vector<std::int32_t> sums(static_cast<std::size_t>(dim == 0 ? cols : rows));
        std::vector<std::int32_t> products(sums.size());
        auto const xr = sy::strided_ref::contiguous(x.data(), i32, sy::device_kind::cpu, {rows, cols}, "x");
        auto const out_of = [&](std::vector<std::int32_t>& v) {
            return sy::strided_ref::contiguous(v.data(), i32, sy::device_kind::cpu,
                                               {static_cast<std::int64_t>(v.size())}, "out");
        };
        sy::reduce(cpu_tag<i32>{}, out_of(sums), sy::dims{dim}, sy::sum, xr);
        sy::transform_reduce(
            cpu_tag<i32>{}, out_of(products), sy::dims{dim}, sy::prod, [](std::int32_t v) { return v | 3; }, xr);
        for (std::size_t m = 0; m < sums.size(); ++m) {
            std::uint64_t sum = 0, product = 1;
            for (std::int64_t r = 0; r < (dim == 0 ? rows : cols); ++r) {
                std::int64_t const i =
                    dim == 0 ? r * cols + static_cast<std::int64_t>(m) : static_cast<std::int64_t>(m) * cols + r;
                auto const v = static_cast<std::uint64_t>(static_cast<std::uint32_t>(x[static_cast<std::size_t>(i)]));
                sum += v;
                product *= v | 3;
            }
            REQUIRE(sums[m] == static_cast<std::int32_t>(static_cast<std::uint32_t>(sum)));
            REQUIRE(products[m] == static_cast<std::int32_t>(static_cast<std::uint32_t>(product)));
        }
    }
}

TEST_CASE("transform_reduce: an f32 sum of 2^24 values is accurate", "[reduce]") {
    constexpr auto f32 = sy::dtype::f32;
    std::int64_t const n = std::int64_t{1} << 24;
    std::vector<float> x(static_cast<std::size_t>(n));
    double exact = 0;
    for (std::int64_t i = 0; i < n; ++i) {
        // Values in [0.5, 1.5): a serial f32 sum would stall once the total
        // reaches 2^24 (adding 1 no longer changes it).
        x[static_cast<std::size_t>(i)] = 0.5f + static_cast<float>((i * 2654435761u) % 1000003) / 1000003.0f;
        exact += x[static_cast<std::size_t>(i)];
    }
    float out = 0;
    auto const xr = sy::strided_ref::contiguous(x.data(), f32, sy::device_kind::cpu, {n}, "x");
    auto const outr = sy::strided_ref::contiguous(&out, f32, sy::device_kind::cpu, {}, "out");
    sy::reduce(cpu_tag<f32>{}, outr, sy::all_dims, sy::sum, xr);
    INFO("sum " << out << ", exact " << exact);
    CHECK(std::fabs(out - exact) / exact < 1e-6);
}

namespace {

// The bits of a sum of `sizes` over `over` on a pool of `threads` threads.
std::vector<float> sum_on_pool(std::vector<float> const& x, std::vector<std::int64_t> const& sizes,
                               std::vector<std::int64_t> const& out_sizes, sy::dims const& over, std::size_t threads,
                               bool uniform) {
    constexpr auto f32 = sy::dtype::f32;
    std::int64_t n_out = 1;
    for (auto s : out_sizes) n_out *= s;
    std::vector<float> out(static_cast<std::size_t>(n_out));
    auto const xr = sy::strided_ref::make(const_cast<float*>(x.data()), f32, sy::device_kind::cpu, sizes.data(),
                                          row_major(sizes).data(), static_cast<std::int64_t>(sizes.size()), "x");
    auto const outr =
        sy::strided_ref::make(out.data(), f32, sy::device_kind::cpu, out_sizes.data(), row_major(out_sizes).data(),
                              static_cast<std::int64_t>(out_sizes.size()), "out");
    auto const layout = sy::make_reduction_layout("test", outr, &xr, 1, over);
    auto const square = [](float v) { return v * v + 0.1f; };
    if (uniform) {
        sy::broadcast_pool pool(threads);
        sy::detail::cpu_transform_reduce_on<f32, float, float, 1>(pool, sy::sum, square, layout);
    } else {
        sy::work_stealing_pool pool(threads);
        sy::detail::cpu_transform_reduce_on<f32, float, float, 1>(pool, sy::sum, square, layout);
    }
    return out;
}

}  // namespace

TEST_CASE("transform_reduce: the same bits whatever the pool's size", "[reduce]") {
    struct shape_case {
        std::vector<std::int64_t> sizes, out_sizes;
        sy::dims over;
    };
    std::vector<shape_case> const cases = {
        {{1 << 20}, {}, sy::all_dims},
        {{3, 200000}, {3}, sy::dims{1}},
        {{200000, 3}, {3}, sy::dims{0}},
        {{64, 3000, 7}, {64, 7}, sy::dims{1}},
        // Columns wider than a task's tile, over several blocks.
        {{300, 2500}, {2500}, sy::dims{0}},
    };
    for (auto const& c : cases) {
        std::int64_t n = 1;
        for (auto s : c.sizes) n *= s;
        std::vector<float> x(static_cast<std::size_t>(n));
        for (std::size_t i = 0; i < x.size(); ++i) x[i] = std::sin(static_cast<float>(i)) * 3.0f;
        auto const one = sum_on_pool(x, c.sizes, c.out_sizes, c.over, 1, false);
        for (std::size_t threads : {2u, 3u, 5u, 8u}) {
            for (bool uniform : {false, true}) {
                INFO("threads " << threads << (uniform ? " broadcast_pool" : " work_stealing_pool"));
                auto const many = sum_on_pool(x, c.sizes, c.out_sizes, c.over, threads, uniform);
                CHECK(std::memcmp(one.data(), many.data(), one.size() * sizeof(float)) == 0);
            }
        }
    }
}

// docs/reduce.md: value j of a block into lane j % W, the lanes halved (l
// with l + W / 2, ...), the blocks' partials pairwise in block order. For
// storage type S summed in float; x [rows, A, C] summed over {1, 2}.
// Unpadded with inner stride 1 the reduced dimensions merge into rows read
// in place (f32) or converted a lane group at a time (bf16, and f16 where F16C is
// known at compile time; else through the buffer); a padded
// row (its dimensions do not merge) or an inner stride of 2 takes the runs
// that gather short rows or convert through the buffer.
template <sy::dtype D>
void check_row_sum_order() {
    using S = sy::dtype_storage_t<D>;
    constexpr std::int64_t W = sy::detail::reduce_lanes<float>;
    constexpr std::int64_t block = sy::detail::reduce_row_block;
    auto const expected = [&](std::vector<float> const& v) {
        std::int64_t const n = static_cast<std::int64_t>(v.size());
        std::vector<float> partials;
        for (std::int64_t b0 = 0; b0 < n; b0 += block) {
            std::vector<float> lanes(W, 0.0f);
            for (std::int64_t j = 0; j < block && b0 + j < n; ++j) lanes[j % W] += v[b0 + j];
            for (std::int64_t w = W / 2; w > 0; w /= 2)
                for (std::int64_t l = 0; l < w; ++l) lanes[l] += lanes[l + w];
            partials.push_back(lanes[0]);
        }
        for (std::size_t m = partials.size(); m > 1; m = m / 2 + m % 2) {
            for (std::size_t j = 0; j < m / 2; ++j) partials[j] = partials[2 * j] + partials[2 * j + 1];
            if (m % 2) partials[m / 2] = partials[m - 1];
        }
        return partials[0];
    };
    auto const hash = [](std::size_t i) { return (i + 1) * 0x9E3779B97F4A7C15u; };
    // f32: full significands and random signs (so that sums cancel and
    // rounding differences show), every other block scaled by 2^12. A sum
    // stored as f16 or bf16 would round such differences away, so those rows
    // hold small values m * 2^-13 (m in 1..3) and pairs of +-2^11 (set in
    // reduced order below, so that they cancel): a small added to a lane at
    // +-2^11 is half an ulp (a tie), one ulp (exact) or 1.5 ulps (a tie) in
    // float, and ties round to even, so the order decides which smalls
    // survive into the (small, exactly cancelling) sum.
    auto const value = [&](std::size_t i) {
        std::uint64_t const h = hash(i);
        if constexpr (D == sy::dtype::f32) {
            float const scale = (i / block) % 2 == 0 ? 0x1p12f : 1.0f;
            float const significand = 1.0f + static_cast<float>((h >> 20) % (1u << 23)) * 0x1p-23f;
            float const sign = (h >> 63) != 0 ? -1.0f : 1.0f;
            return sign * scale * std::ldexp(significand, static_cast<int>((h >> 8) % 11) - 5);
        } else {
            return ((h >> 63) != 0 ? -1.0f : 1.0f) * static_cast<float>(1 + (h >> 20) % 3) * 0x1p-13f;
        }
    };
    struct shape_case {
        std::int64_t A, C, inner_stride, pad;
    };
    std::vector<shape_case> cases = {{1, 1, 1, 0},
                                     {1, W - 1, 1, 0},
                                     {1, W + 1, 1, 0},
                                     {1, 1000, 1, 0},
                                     {1, 4 * block + 100, 1, 0},
                                     {97, 5, 1, 1},
                                     {97, 100, 1, 1},
                                     {97, W + 3, 2, 0},
                                     {5, 9000, 1, 1},
                                     {1, 4 * block + 100, 2, 0},
                                     {3, block, 1, 1},
                                     {1, 16 * block + 100, 1, 0}};
    // Every length of a row up to the lanes (fold_short_run up to W / 2).
    for (std::int64_t n = 2; n <= W; ++n) cases.push_back({1, n, 1, 0});
    for (auto const& c : cases) {
        INFO("A " << c.A << ", C " << c.C << ", inner stride " << c.inner_stride << ", pad " << c.pad);
        constexpr std::int64_t rows = 2;
        std::int64_t const row_pitch = c.C * c.inner_stride + c.pad;
        std::vector<S> x(static_cast<std::size_t>(rows * c.A * row_pitch));
        for (std::size_t i = 0; i < x.size(); ++i) x[i] = S(value(i));
        // Output r's values' positions in reduced (row-major) order.
        auto const positions = [&](std::int64_t r) {
            std::vector<std::size_t> at;
            for (std::int64_t a = 0; a < c.A; ++a)
                for (std::int64_t j = 0; j < c.C; ++j)
                    at.push_back(static_cast<std::size_t>(r * c.A * row_pitch + a * row_pitch + j * c.inner_stride));
            return at;
        };
        if constexpr (D != sy::dtype::f32) {
            for (std::int64_t r = 0; r < rows; ++r) {
                std::vector<std::size_t> bigs;
                for (std::size_t i : positions(r))
                    if (hash(i + 12345) % 8 == 0) bigs.push_back(i);
                for (std::size_t k = 0; k + 1 < bigs.size(); k += 2)
                    x[bigs[k]] = S(0x1p11f), x[bigs[k + 1]] = S(-0x1p11f);
            }
        }
        std::int64_t const sizes[3] = {rows, c.A, c.C}, strides[3] = {c.A * row_pitch, row_pitch, c.inner_stride};
        auto const in = sy::strided_ref::make(x.data(), D, sy::device_kind::cpu, sizes, strides, 3, "x");
        std::vector<S> out(rows);
        auto const o = sy::strided_ref::contiguous(out.data(), D, sy::device_kind::cpu, {rows}, "out");
        sy::reduce(cpu_tag<D>{}, o, sy::dims{1, 2}, sy::sum, in);
        for (std::int64_t r = 0; r < rows; ++r) {
            std::vector<float> v;
            for (std::size_t i : positions(r)) v.push_back(static_cast<float>(x[i]));
            S const want = S(expected(v));
            CHECK(std::memcmp(&out[static_cast<std::size_t>(r)], &want, sizeof(S)) == 0);
        }
    }
}

TEST_CASE("transform_reduce: a row sum folds in the documented order", "[reduce]") {
    SECTION("f32") { check_row_sum_order<sy::dtype::f32>(); }
    SECTION("f16") { check_row_sum_order<sy::dtype::f16>(); }
    SECTION("bf16") { check_row_sum_order<sy::dtype::bf16>(); }
}

TEST_CASE("transform_reduce: errors name the argument and what is allowed", "[reduce]") {
    constexpr auto f32 = sy::dtype::f32;
    using tag = cpu_tag<f32>;
    std::vector<float> xb(12), yb(5), ob(12);
    auto const x = sy::strided_ref::contiguous(xb.data(), f32, sy::device_kind::cpu, {3, 4}, "x");
    auto const out3 = sy::strided_ref::contiguous(ob.data(), f32, sy::device_kind::cpu, {3}, "out");
    auto const msg = [&](auto&& call) -> std::string {
        try {
            call();
        } catch (std::invalid_argument const& e) {
            return e.what();
        }
        return "no error";
    };
    using Catch::Matchers::Contains;
    using Catch::Matchers::StartsWith;
    CHECK_THAT(msg([&] { sy::reduce(tag{}, out3, sy::dims{2}, sy::sum, x); }),
               StartsWith("reduce: dimension 2 in dims [2] is out of range for the input shape [3, 4] "
                          "(allowed -2 to 1)"));
    CHECK_THAT(msg([&] { sy::reduce(tag{}, out3, sy::dims{-3}, sy::sum, x); }), Contains("out of range"));
    CHECK_THAT(msg([&] {
                   sy::reduce(tag{}, out3, sy::dims{1, -1}, sy::sum, x);
               }),
               Contains("dimension 1 appears more than once in dims [1, -1]"));
    CHECK_THAT(msg([&] { sy::reduce(tag{}, out3, sy::dims(nullptr, 0), sy::sum, x); }),
               Contains("dims is empty; name the dimensions to reduce, or pass all_dims"));
    CHECK_THAT(msg([&] { sy::reduce(tag{}, out3, sy::dims{0}, sy::sum, x); }),
               Contains("output 'out' has shape [3] but reducing dims [0] of the input shape [3, 4] gives [4] "
                        "(or [1, 4] with keepdim)"));
    auto const out_2x1 = sy::strided_ref::contiguous(ob.data(), f32, sy::device_kind::cpu, {3, 2}, "out");
    CHECK_THAT(msg([&] { sy::reduce(tag{}, out_2x1, sy::dims{1}, sy::sum, x); }), Contains("gives [3]"));
    auto const in_place = sy::strided_ref::contiguous(xb.data(), f32, sy::device_kind::cpu, {3}, "out");
    CHECK_THAT(msg([&] { sy::reduce(tag{}, in_place, sy::dims{1}, sy::sum, x); }),
               Contains("output 'out' shares memory with input 'x'"));
    auto const expanded = sy::strided_ref::make(ob.data(), f32, sy::device_kind::cpu, {3}, {0}, "out");
    CHECK_THAT(msg([&] { sy::reduce(tag{}, expanded, sy::dims{1}, sy::sum, x); }), Contains("internal overlap"));
    auto const y = sy::strided_ref::contiguous(yb.data(), f32, sy::device_kind::cpu, {5}, "y");
    CHECK_THAT(msg([&] {
                   sy::transform_reduce(
                       tag{}, out3, sy::dims{1}, sy::sum, [](float a, float b) { return a * b; }, x, y);
               }),
               StartsWith("transform_reduce: input 'y' has shape [5], which does not broadcast with input 'x' of "
                          "shape [3, 4] (size 5 against 4 in dimension 1 of the broadcast inputs)"));
    auto const empty = sy::strided_ref::contiguous(xb.data(), f32, sy::device_kind::cpu, {3, 0}, "x");
    CHECK_THAT(msg([&] { sy::reduce(tag{}, out3, sy::dims{1}, sy::amax, empty); }),
               Contains("amax over zero elements (dims [1] of the input shape [3, 0]) has no identity"));
    CHECK_THAT(msg([&] { sy::reduce(tag{}, out3, sy::dims{1}, sy::amin, empty); }), Contains("amin over zero"));
    std::vector<double> db(3);
    auto const out_f64 = sy::strided_ref::contiguous(db.data(), sy::dtype::f64, sy::device_kind::cpu, {3}, "out");
    CHECK_THAT(msg([&] { sy::reduce(tag{}, out_f64, sy::dims{1}, sy::sum, x); }),
               StartsWith("reduce: output 'out' has dtype f64 but the tag's dtype is f32"));
    auto const x_cuda = sy::strided_ref::make(xb.data(), f32, sy::device_kind::cuda, {3, 4}, {4, 1}, "x");
    CHECK_THAT(msg([&] { sy::reduce(tag{}, out3, sy::dims{1}, sy::sum, x_cuda); }),
               StartsWith("reduce: input 'x' is on cuda but the tag names device cpu"));
    std::vector<std::int64_t> ib(3, 0);
    auto const index3 = sy::strided_ref::contiguous(ib.data(), sy::dtype::i64, sy::device_kind::cpu, {3}, "index");
    CHECK_THAT(msg([&] { sy::reduce(tag{}, out3, sy::dims{1}, sy::argmax, x); }),
               StartsWith("reduce: output 'out' has dtype f32 but argmax writes indices, which need dtype i64"));
    CHECK_THAT(msg([&] { sy::reduce(tag{}, index3, sy::dims{1}, sy::argmin, empty); }),
               Contains("argmin over zero elements (dims [1] of the input shape [3, 0]) has no index to give"));
    CHECK_THAT(msg([&] { sy::reduce(tag{}, index3, sy::dims{0}, sy::argmax, x); }), Contains("gives [4]"));
    auto const index_cuda = sy::strided_ref::make(ib.data(), sy::dtype::i64, sy::device_kind::cuda, {3}, {1}, "index");
    CHECK_THAT(msg([&] { sy::reduce(tag{}, index_cuda, sy::dims{1}, sy::argmax, x); }),
               StartsWith("reduce: output 'index' is on cuda but the tag names device cpu"));
    for (auto v : ib) CHECK(v == 0);
    // Nothing was written by any refused call.
    for (float v : ob) CHECK(v == 0.0f);
    // An empty sum is the identity, written to every output.
    sy::reduce(tag{}, out3, sy::dims{1}, sy::sum, empty);
    for (int i = 0; i < 3; ++i) CHECK(ob[static_cast<std::size_t>(i)] == 0.0f);
    ob.assign(ob.size(), 5.0f);
    sy::reduce(tag{}, out3, sy::dims{1}, sy::prod, empty);
    for (int i = 0; i < 3; ++i) CHECK(ob[static_cast<std::size_t>(i)] == 1.0f);
}

// transform_rows: softmax and a layernorm (two statistics, the second using
// the first, and a gain broadcast along the row) against double references.
namespace {

struct rows_case {
    char const* what;
    std::vector<std::int64_t> sizes, x_strides;  // x_strides empty: row-major
    std::vector<std::int64_t> out_strides = {};  // empty: row-major
};

std::vector<rows_case> rows_cases() {
    return {
        {"rank 0", {}, {}},
        {"rows of one", {5, 1}, {}},
        {"rank 1", {1000}, {}},
        {"rank 2", {7, 300}, {}},
        {"rank 3", {3, 4, 50}, {}},
        {"rows across blocks", {2, 20000}, {}},
        {"rows past the cache", {2, 70000}, {}},
        {"transposed", {30, 20}, {1, 30}},
        {"sliced", {17, 19}, {40, 2}},
        {"reversed rows", {4, 100}, {100, -1}},
        {"x broadcast along the row", {6, 40}, {1, 0}},
        {"strided output", {20, 30}, {}, {1, 20}},
        {"empty rows", {3, 0}, {}},
        {"no rows", {0, 5}, {}},
    };
}

template <sy::dtype D>
double rows_tolerance() {
    if constexpr (D == sy::dtype::f16) return 2e-3;
    if constexpr (D == sy::dtype::bf16) return 1e-2;
    if constexpr (D == sy::dtype::f32) return 2e-5;
    return 1e-10;  // a constant row's layernorm amplifies the mean's rounding 316 times
}

// How many elements of out differ from reference(row) -> expected row,
// given each row's x values as doubles, by more than the dtype's tolerance
// relative to |expected| + scale.
template <sy::dtype D, typename Reference>
int rows_mismatches(array<storage<D>> const& x, array<storage<D>> const& out, std::vector<std::int64_t> const& sizes,
                    double scale, Reference const& reference) {
    using C = compute<D>;
    std::vector<std::int64_t> outer(sizes.begin(), sizes.end() - (sizes.empty() ? 0 : 1));
    std::int64_t const n = sizes.empty() ? 1 : sizes.back();
    int wrong = 0;
    for_coords(outer, [&](std::vector<std::int64_t> const& at) {
        std::vector<double> row(static_cast<std::size_t>(n));
        std::vector<std::int64_t> c = at;
        if (!sizes.empty()) c.push_back(0);
        for (std::int64_t j = 0; j < n; ++j) {
            if (!sizes.empty()) c.back() = j;
            row[static_cast<std::size_t>(j)] = static_cast<double>(static_cast<C>(x.at(c)));
        }
        std::vector<double> const want = reference(row);
        for (std::int64_t j = 0; j < n; ++j) {
            if (!sizes.empty()) c.back() = j;
            double const got = static_cast<double>(static_cast<C>(out.at(c)));
            double const w = want[static_cast<std::size_t>(j)];
            if (!(std::fabs(got - w) <= rows_tolerance<D>() * (std::fabs(w) + scale))) {
                if (wrong < 3) UNSCOPED_INFO("at column " << j << ": got " << got << ", expected " << w);
                ++wrong;
            }
        }
    });
    return wrong;
}

std::vector<double> softmax_reference(std::vector<double> const& row) {
    double max = -INFINITY, sum = 0;
    for (double v : row) max = std::max(max, v);
    for (double v : row) sum += std::exp(v - max);
    std::vector<double> out;
    for (double v : row) out.push_back(std::exp(v - max) / sum);
    return out;
}

template <sy::dtype D>
void check_rows() {
    using S = storage<D>;
    using C = compute<D>;
    for (auto const& c : rows_cases()) {
        INFO(c.what);
        auto const x_strides = c.x_strides.empty() ? row_major(c.sizes) : c.x_strides;
        array<S> x(D, c.sizes, x_strides, "x");
        array<S> out(D, c.sizes, c.out_strides.empty() ? row_major(c.sizes) : c.out_strides, "out");
        for (std::size_t i = 0; i < x.buffer.size(); ++i)
            x.buffer[i] = value_for<D>(static_cast<std::int64_t>(i * 5 + 1));
        auto const shifted_exp = [](C v, C max) { return sy::exp(v - max); };
        auto const normalized = [](C v, C max, C sum) { return sy::exp(v - max) / sum; };
        sy::transform_rows(cpu_tag<D>{}, out.ref, sy::row_stats(sy::amax, sy::row_stat(sy::sum, shifted_exp)),
                           normalized, x.ref);
        // f16 stores values under 6.1e-5 as subnormals, with absolute steps.
        CHECK(rows_mismatches<D>(x, out, c.sizes, D == sy::dtype::f16 ? 6.1e-5 : 1e-6, softmax_reference) == 0);
        // The same with the sum's values handed to f (kept by the CPU).
        sy::transform_rows(
            cpu_tag<D>{}, out.ref, sy::row_stats(sy::amax, sy::row_stat(sy::sum, shifted_exp).with_values()),
            [](C, C e, C, C sum) { return e / sum; }, x.ref);
        CHECK(rows_mismatches<D>(x, out, c.sizes, D == sy::dtype::f16 ? 6.1e-5 : 1e-6, softmax_reference) == 0);
        // And in place (the values then go to the per-task buffer, not the output).
        if (c.x_strides.empty() && c.out_strides.empty()) {
            array<S> y(D, c.sizes, row_major(c.sizes), "y");
            y.buffer = x.buffer;
            sy::transform_rows(
                cpu_tag<D>{}, y.ref, sy::row_stats(sy::amax, sy::row_stat(sy::sum, shifted_exp).with_values()),
                [](C, C e, C, C sum) { return e / sum; }, y.ref);
            CHECK(rows_mismatches<D>(x, y, c.sizes, D == sy::dtype::f16 ? 6.1e-5 : 1e-6, softmax_reference) == 0);
        }

        // A layernorm: mean, then the variance about it; a gain per column.
        std::int64_t const n = c.sizes.empty() ? 1 : c.sizes.back();
        bool const rank0 = c.sizes.empty();
        array<S> gain(D, rank0 ? std::vector<std::int64_t>{} : std::vector<std::int64_t>{n},
                      rank0 ? std::vector<std::int64_t>{} : std::vector<std::int64_t>{1}, "gain");
        for (std::int64_t j = 0; j < n; ++j)
            gain.buffer[static_cast<std::size_t>(j)] = static_cast<S>(C(0.5) + C(j % 3));
        C const inv_n = C(1) / static_cast<C>(n > 0 ? n : 1);
        auto const mean_term = [inv_n](C v, C) { return v * inv_n; };
        auto const variance_term = [inv_n](C v, C, C mean) { return (v - mean) * (v - mean) * inv_n; };
        auto const normalize = [](C v, C g, C mean, C variance) {
            return (v - mean) / sy::sqrt(variance + C(1e-5)) * g;
        };
        sy::transform_rows(cpu_tag<D>{}, out.ref,
                           sy::row_stats(sy::row_stat(sy::sum, mean_term), sy::row_stat(sy::sum, variance_term)),
                           normalize, x.ref, gain.ref);
        CHECK(rows_mismatches<D>(x, out, c.sizes, 1.0, [&](std::vector<double> const& row) {
                  double mean = 0, variance = 0;
                  for (double v : row) mean += v / static_cast<double>(row.size());
                  for (double v : row) variance += (v - mean) * (v - mean) / static_cast<double>(row.size());
                  std::vector<double> r;
                  for (std::size_t j = 0; j < row.size(); ++j)
                      r.push_back((row[j] - mean) / std::sqrt(variance + 1e-5) *
                                  static_cast<double>(static_cast<C>(gain.buffer[j])));
                  return r;
              }) == 0);
    }
}

}  // namespace

TEST_CASE("transform_rows: softmax and layernorm match a reference for every layout", "[rows]") {
    SECTION("f32") { check_rows<sy::dtype::f32>(); }
    SECTION("f64") { check_rows<sy::dtype::f64>(); }
    SECTION("f16") { check_rows<sy::dtype::f16>(); }
    SECTION("bf16") { check_rows<sy::dtype::bf16>(); }
}

TEST_CASE("transform_rows: in place, NaN and inf, and statistics without a map", "[rows]") {
    constexpr auto f32 = sy::dtype::f32;
    using tag = cpu_tag<f32>;
    // In place: out is x.
    std::vector<float> xb = {1, 2, 3, 4, 0, 0, 0, 0};
    auto const x = sy::strided_ref::contiguous(xb.data(), f32, sy::device_kind::cpu, {2, 4}, "x");
    auto const centered = [](float v, float max) { return v - max; };
    sy::transform_rows(tag{}, x, sy::row_stats(sy::amax), centered, x);
    CHECK(xb == std::vector<float>{-3, -2, -1, 0, 0, 0, 0, 0});
    // amax propagates NaN into its row only; inf stays inf.
    float const nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
    xb = {1, nan, 3, 4, 1, inf, 3, 4};
    std::vector<float> ob(8);
    auto const out = sy::strided_ref::contiguous(ob.data(), f32, sy::device_kind::cpu, {2, 4}, "out");
    sy::transform_rows(
        tag{}, out, sy::row_stats(sy::amax), [](float, float max) { return max; }, x);
    for (int j = 0; j < 4; ++j) CHECK(std::isnan(ob[static_cast<std::size_t>(j)]));
    for (int j = 4; j < 8; ++j) CHECK(ob[static_cast<std::size_t>(j)] == inf);
    // No statistics: an elementwise map.
    sy::transform_rows(
        tag{}, out, sy::row_stats(), [](float v) { return v * 2; }, x);
    CHECK(ob[0] == 2.0f);
    CHECK(ob[7] == 8.0f);
    // A user's combine, with the first input's values (no map).
    auto const product = sy::combine([](float a, float b) { return a * b; }, 1.0f);
    xb = {1, 2, 3, 4, 1, 1, 2, 2};
    sy::transform_rows(
        tag{}, out, sy::row_stats(product, sy::amin), [](float, float p, float lo) { return p + lo; }, x);
    CHECK(ob[0] == 25.0f);
    CHECK(ob[4] == 5.0f);
}

TEST_CASE("transform_rows as separate calls (the WebGPU path) agrees with the fused CPU rows", "[rows]") {
    // The composition shared by devices without a row runner, run on the CPU:
    // the same arguments in the same order reach the maps and f.
    using tag = cpu_tag<sy::dtype::f32>;
    std::vector<std::int64_t> const sizes = {7, 300};
    array<float> x(sy::dtype::f32, sizes, row_major(sizes), "x");
    array<float> gain(sy::dtype::f32, {300}, {1}, "gain");
    array<float> fused(sy::dtype::f32, sizes, row_major(sizes), "out");
    array<float> composed(sy::dtype::f32, sizes, row_major(sizes), "out");
    for (std::size_t i = 0; i < x.buffer.size(); ++i) x.buffer[i] = std::sin(0.3f * static_cast<float>(i)) * 3.0f;
    for (std::size_t i = 0; i < gain.buffer.size(); ++i) gain.buffer[i] = 0.5f + static_cast<float>(i % 3);
    float const inv_n = 1.0f / 300.0f;
    auto const stats = sy::row_stats(
        sy::amax, sy::row_stat(sy::sum, [inv_n](float v, float, float max) { return (v - max) * (v - max) * inv_n; }));
    auto const f = [](float v, float g, float max, float spread) { return (v - max) / sy::sqrt(spread + 1.0f) * g; };
    sy::transform_rows(tag{}, fused.ref, stats, f, x.ref, gain.ref);
    sy::detail::composed_transform_rows(tag{}, composed.ref, stats, f, x.ref, gain.ref);
    for (std::size_t i = 0; i < fused.buffer.size(); ++i) {
        INFO("at " << i);
        CHECK(std::fabs(fused.buffer[i] - composed.buffer[i]) <= 1e-5f * (std::fabs(fused.buffer[i]) + 1.0f));
    }
}

TEST_CASE("transform_rows: with_values hands f each marked statistic's map values, in order", "[rows]") {
    // Statistics 0 and 2 hand their values to f, 1 does not; the maps are
    // exact, so f can check that it got exactly them. Rows of 3000 values
    // span several CPU blocks; the composition (WebGPU's path) computes the
    // values again and must give f the same.
    using tag = cpu_tag<sy::dtype::f32>;
    std::vector<std::int64_t> const sizes = {5, 3000};
    array<float> x(sy::dtype::f32, sizes, row_major(sizes), "x");
    array<float> y(sy::dtype::f32, {3000}, {1}, "y");
    for (std::size_t i = 0; i < x.buffer.size(); ++i) x.buffer[i] = static_cast<float>(static_cast<int>(i % 97) - 40);
    for (std::size_t i = 0; i < y.buffer.size(); ++i) y.buffer[i] = static_cast<float>(i % 5);
    auto const stats = sy::row_stats(sy::row_stat(sy::amax, [](float v, float w) { return v + w; }).with_values(),
                                     sy::row_stat(sy::amin, [](float v, float, float) { return v; }),
                                     sy::row_stat(sy::sum, [](float v, float w, float max, float min) {
                                         return v * 2 - max + w * min;
                                     }).with_values());
    static_assert(decltype(stats)::values_count == 2);
    auto const f = [](float v, float w, float e0, float e2, float max, float min, float sum) {
        bool const exact = e0 == v + w && e2 == v * 2 - max + w * min;
        return exact ? sum + min : -1.0f;
    };
    for (bool composed : {false, true}) {
        INFO((composed ? "as separate calls" : "fused"));
        array<float> out(sy::dtype::f32, sizes, row_major(sizes), "out");
        if (composed)
            sy::detail::composed_transform_rows(tag{}, out.ref, stats, sy::detail::recompute_values<2>(stats, f), x.ref,
                                                y.ref);
        else
            sy::transform_rows(tag{}, out.ref, stats, f, x.ref, y.ref);
        for (std::int64_t m = 0; m < 5; ++m) {
            double max = -INFINITY, min = INFINITY, sum = 0;
            for (std::int64_t j = 0; j < 3000; ++j) {
                double const v = x.buffer[static_cast<std::size_t>(m * 3000 + j)],
                             w = y.buffer[static_cast<std::size_t>(j)];
                max = std::max(max, v + w);
                min = std::min(min, v);
            }
            for (std::int64_t j = 0; j < 3000; ++j)
                sum += x.buffer[static_cast<std::size_t>(m * 3000 + j)] * 2 - max +
                       y.buffer[static_cast<std::size_t>(j)] * min;
            for (std::int64_t j = 0; j < 3000; j += 37) {
                INFO("row " << m << " column " << j);
                CHECK(out.buffer[static_cast<std::size_t>(m * 3000 + j)] == static_cast<float>(sum + min));
            }
        }
    }
}

TEST_CASE("transform_rows and reduce on bool: any of a row", "[rows]") {
    // Buffers of bool compute values (strided rows are converted, long rows
    // have block partials) must not be std::vector<bool>.
    using tag = cpu_tag<sy::dtype::boolean>;
    std::vector<char> storage(2 * 70000, 0);  // bytes holding bools
    bool* const b = reinterpret_cast<bool*>(storage.data());
    b[1] = true;       // outside the view: every other element of each row
    b[139998] = true;  // row 1's last element in the view
    std::int64_t const sizes[2] = {2, 35000}, strides[2] = {70000, 2}, out_strides[2] = {35000, 1};
    auto const x = sy::strided_ref::make(b, sy::dtype::boolean, sy::device_kind::cpu, sizes, strides, 2, "x");
    std::vector<char> out_storage(2 * 35000, 1);
    bool* const o = reinterpret_cast<bool*>(out_storage.data());
    auto const out = sy::strided_ref::make(o, sy::dtype::boolean, sy::device_kind::cpu, sizes, out_strides, 2, "out");
    sy::transform_rows(
        tag{}, out, sy::row_stats(sy::amax), [](bool v, bool any) { return any && !v; }, x);
    CHECK(!o[0]);
    CHECK(o[35000]);
    CHECK(!o[2 * 35000 - 1]);
    bool any[2] = {true, false};
    auto const anys = sy::strided_ref::contiguous(any, sy::dtype::boolean, sy::device_kind::cpu, {2}, "any");
    sy::reduce(tag{}, anys, sy::dims{1}, sy::amax, x);
    CHECK(!any[0]);
    CHECK(any[1]);
}

TEST_CASE("transform_rows: errors name the argument and what is allowed", "[rows]") {
    constexpr auto f32 = sy::dtype::f32;
    using tag = cpu_tag<f32>;
    std::vector<float> xb(12), yb(5), ob(12, 7.0f);
    auto const x = sy::strided_ref::contiguous(xb.data(), f32, sy::device_kind::cpu, {3, 4}, "x");
    auto const out = sy::strided_ref::contiguous(ob.data(), f32, sy::device_kind::cpu, {3, 4}, "out");
    auto const msg = [&](auto&& call) -> std::string {
        try {
            call();
        } catch (std::invalid_argument const& e) {
            return e.what();
        }
        return "no error";
    };
    using Catch::Matchers::Contains;
    using Catch::Matchers::StartsWith;
    auto const stats = sy::row_stats(sy::amax);
    auto const keep = [](float v, float) { return v; };
    auto const y = sy::strided_ref::contiguous(yb.data(), f32, sy::device_kind::cpu, {5}, "y");
    CHECK_THAT(msg([&] {
                   sy::transform_rows(
                       tag{}, out, stats, [](float v, float, float) { return v; }, x, y);
               }),
               StartsWith("transform_rows: input 'y' has shape [5], which does not broadcast"));
    std::vector<double> db(12);
    auto const out_f64 = sy::strided_ref::contiguous(db.data(), sy::dtype::f64, sy::device_kind::cpu, {3, 4}, "out");
    CHECK_THAT(msg([&] { sy::transform_rows(tag{}, out_f64, stats, keep, x); }),
               StartsWith("transform_rows: output 'out' has dtype f64 but the tag's dtype is f32"));
    auto const x_cuda = sy::strided_ref::make(xb.data(), f32, sy::device_kind::cuda, {3, 4}, {4, 1}, "x");
    CHECK_THAT(msg([&] { sy::transform_rows(tag{}, out, stats, keep, x_cuda); }),
               StartsWith("transform_rows: input 'x' is on cuda but the tag names device cpu"));
    auto const shifted = sy::strided_ref::contiguous(xb.data() + 1, f32, sy::device_kind::cpu, {3, 3}, "out");
    auto const x33 = sy::strided_ref::make(xb.data(), f32, sy::device_kind::cpu, {3, 3}, {4, 1}, "x");
    CHECK_THAT(msg([&] { sy::transform_rows(tag{}, shifted, stats, keep, x33); }),
               Contains("output 'out' shares memory with input 'x' but is not exactly that array"));
    auto const expanded = sy::strided_ref::make(ob.data(), f32, sy::device_kind::cpu, {3, 4}, {0, 1}, "out");
    CHECK_THAT(msg([&] { sy::transform_rows(tag{}, expanded, stats, keep, x); }), Contains("internal overlap"));
    // Nothing was written by any refused call.
    for (float v : ob) CHECK(v == 7.0f);
}

namespace {
// A team of std::threads started per job that counts its jobs and the threads
// its chunks ran on.
struct counting_team {
    std::atomic<int> jobs{0};
    static void run(void* self, sy::detail::job_base& job, std::size_t n) noexcept {
        static_cast<counting_team*>(self)->jobs.fetch_add(1);
        std::vector<std::thread> members;
        for (std::size_t slot = 1; slot < n; ++slot) members.emplace_back([&job, slot] { job.work(job, slot); });
        job.work(job, 0);
        for (auto& t : members) t.join();
    }
};
}  // namespace

TEST_CASE("under a team_scope, CPU kernels run on the team with the default pool's results", "[reduce][parallel]") {
    constexpr auto D = sy::dtype::f32;
    std::vector<std::int64_t> const sizes{512, 300};
    array<float> x(D, sizes, row_major(sizes), "x");
    for (std::size_t i = 0; i < x.buffer.size(); ++i) x.buffer[i] = static_cast<float>((i * 37) % 101) * 0.01f;
    auto const run_all = [&] {
        std::vector<std::vector<float>> results;
        array<float> out(D, sizes, row_major(sizes), "out");
        sy::transform(
            cpu_tag<D>{}, out.ref, [](float v) { return v * 2 + 1; }, x.ref);
        results.push_back(out.buffer);
        std::vector<std::int64_t> const row_sizes{512};
        array<float> sums(D, row_sizes, row_major(row_sizes), "sums");
        sy::reduce(cpu_tag<D>{}, sums.ref, sy::dims{1}, sy::sum, x.ref);
        results.push_back(sums.buffer);
        auto const shifted_exp = [](float v, float max) { return sy::exp(v - max); };
        sy::transform_rows(
            cpu_tag<D>{}, out.ref, sy::row_stats(sy::amax, sy::row_stat(sy::sum, shifted_exp)),
            [](float v, float max, float sum) { return sy::exp(v - max) / sum; }, x.ref);
        results.push_back(out.buffer);
        std::vector<float> doubled(x.buffer.size());
        sy::parallel_for(0, static_cast<std::int64_t>(doubled.size()), 64, [&](std::int64_t b, std::int64_t e) {
            for (std::int64_t i = b; i < e; ++i)
                doubled[static_cast<std::size_t>(i)] = 2 * x.buffer[static_cast<std::size_t>(i)];
        });
        results.push_back(doubled);
        return results;
    };
    auto const expected = run_all();
    counting_team runtime;
    sy::team_pool team(2, &counting_team::run, &runtime);
    {
        sy::team_scope scope(team);
        CHECK(run_all() == expected);
    }
    // Each kernel ran at least one job on the team.
    CHECK(runtime.jobs.load() >= 4);
    int const jobs = runtime.jobs.load();
    CHECK(run_all() == expected);
    CHECK(runtime.jobs.load() == jobs);
}
