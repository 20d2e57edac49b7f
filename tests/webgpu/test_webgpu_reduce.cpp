// transform_reduce on WebGPU (lavapipe in CI) against f64 references and the
// same call on the CPU: full, row, column and middle reductions, strided and
// broadcast inputs, several passes, the combines (argmin and argmax with
// ties and NaN), i32 and f16, empty reductions, bitwise repeatability, and
// the errors.
#include <catch2/catch.hpp>

#include <switchyard/switchyard.h>

#include "operands.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

namespace sy = switchyard;
using sy::device_kind;
using sy::dtype;

namespace {

using test_webgpu::dev;
using test_webgpu::operand;
using test_webgpu::ulps;
using gpu_f32 = sy::tag<device_kind::webgpu, dtype::f32>;
using cpu_f32 = sy::tag<device_kind::cpu, dtype::f32>;

std::vector<std::int64_t> row_major(std::vector<std::int64_t> const& sizes) {
    std::vector<std::int64_t> strides(sizes.size());
    std::int64_t step = 1;
    for (std::size_t d = sizes.size(); d-- > 0;) {
        strides[d] = step;
        step *= sizes[d];
    }
    return strides;
}

std::int64_t count(std::vector<std::int64_t> const& sizes) {
    std::int64_t n = 1;
    for (auto s : sizes) n *= s;
    return n;
}

// sum over `over` of x * y + 1: one call for both devices.
template <typename Tag>
void weighted_sum(Tag tag, sy::strided_ref const& out, sy::dims const& over, sy::strided_ref const& x,
                  sy::strided_ref const& y) {
    using C = sy::compute_t<Tag>;
    sy::transform_reduce(
        tag, out, over, sy::sum, [](C a, C b) { return a * b + 1.0f; }, x, y);
}

// The largest distance between the device's result and the CPU's, relative
// to the sum of magnitudes the result adds up (the scale of its rounding).
double worst_relative(std::vector<float> const& got, std::vector<float> const& want, double scale) {
    double worst = 0;
    for (std::size_t i = 0; i < got.size(); ++i)
        worst = std::max(worst, std::fabs(double(got[i]) - double(want[i])) / scale);
    return worst;
}

}  // namespace

TEST_CASE("webgpu transform_reduce matches the CPU over rows, columns, middles and all", "[webgpu][reduce]") {
    struct shape_case {
        char const* what;
        std::vector<std::int64_t> x_sizes, x_strides;
        std::int64_t x_elements;
        std::vector<std::int64_t> y_sizes, y_strides;
        std::int64_t y_elements;
        sy::dims over;
        std::vector<std::int64_t> out_sizes;
    };
    std::vector<shape_case> const cases = {
        {"rows", {300, 70}, {70, 1}, 21000, {70}, {1}, 70, sy::dims{-1}, {300}},
        {"rows, keepdim", {300, 70}, {70, 1}, 21000, {300, 1}, {1, 1}, 300, sy::dims{1}, {300, 1}},
        {"columns", {300, 70}, {70, 1}, 21000, {70}, {1}, 70, sy::dims{0}, {70}},
        {"all", {300, 70}, {70, 1}, 21000, {}, {}, 1, sy::all_dims, {}},
        {"middle of a transposed rank 3", {6, 50, 7}, {1, 42, 6}, 2100, {7}, {1}, 7, sy::dims{1}, {6, 7}},
        {"first and last of rank 4", {3, 4, 5, 6}, {120, 30, 6, 1}, 360, {6}, {1}, 6, sy::dims{0, -1}, {4, 5}},
        {"sliced", {50, 40}, {100, 2}, 5000, {50, 40}, {40, 1}, 2000, sy::dims{1}, {50}},
        {"rows of several blocks (two passes)", {3, 100003}, {100003, 1}, 300009, {1}, {1}, 1, sy::dims{1}, {3}},
        {"empty rows", {4, 0}, {0, 1}, 1, {0}, {1}, 1, sy::dims{1}, {4}},
    };
    for (auto const& c : cases) {
        INFO(c.what);
        operand x(c.x_sizes, c.x_strides, c.x_elements, "x", 0.5f);
        operand y(c.y_sizes, c.y_strides, c.y_elements, "y", 1.5f);
        operand out(c.out_sizes, row_major(c.out_sizes), count(c.out_sizes), "out", 7.0f);
        weighted_sum(gpu_f32{}, out.gpu, c.over, x.gpu, y.gpu);
        weighted_sum(cpu_f32{}, out.cpu, c.over, x.cpu, y.cpu);
        std::vector<float> const got = out.read();
        // |x * y + 1| <= 17 per element; the per-output count bounds the scale.
        double const per_output = double(count(c.x_sizes)) / double(std::max<std::int64_t>(1, count(c.out_sizes)));
        CHECK(worst_relative(got, out.host, 17.0 * std::max(1.0, per_output)) < 1e-6);
        if (count(c.x_sizes) == 0)
            for (float v : got) CHECK(v == 0.0f);
    }
}

TEST_CASE("webgpu argmax and argmin give the CPU's index: every layout, ties, NaN, several passes",
          "[webgpu][reduce][arg]") {
    struct shape_case {
        char const* what;
        std::vector<std::int64_t> x_sizes, x_strides;
        std::int64_t x_elements;
        sy::dims over;
        std::vector<std::int64_t> out_sizes, out_strides;  // no strides: row-major
    };
    std::vector<shape_case> const cases = {
        {"rows", {300, 70}, {70, 1}, 21000, sy::dims{-1}, {300}, {}},
        {"rows, keepdim", {300, 70}, {70, 1}, 21000, sy::dims{1}, {300, 1}, {}},
        {"rows into a strided output", {300, 70}, {70, 1}, 21000, sy::dims{-1}, {300}, {2}},
        {"columns", {300, 70}, {70, 1}, 21000, sy::dims{0}, {70}, {}},
        {"all", {300, 70}, {70, 1}, 21000, sy::all_dims, {}, {}},
        // Memory order differs from the index order (row-major in the
        // reduced dims of the shape): the index operand's strides say which.
        {"transposed rows", {70, 300}, {1, 70}, 21000, sy::dims{-1}, {70}, {}},
        {"middle of a transposed rank 3", {6, 50, 7}, {1, 42, 6}, 2100, sy::dims{1}, {6, 7}, {}},
        {"first and last of a permuted rank 4", {3, 4, 5, 6}, {1, 90, 18, 3}, 360, sy::dims{0, -1}, {4, 5}, {}},
        {"all of a permuted rank 3", {6, 50, 7}, {1, 42, 6}, 2100, sy::all_dims, {}, {}},
        {"rows of several blocks (two passes)", {3, 100003}, {100003, 1}, 300009, sy::dims{1}, {3}, {}},
        {"middle of two kept dims, two passes", {4, 9000, 3}, {27000, 3, 1}, 108000, sy::dims{1}, {4, 3}, {}},
        {"broadcast rows (stride 0)", {4, 9000}, {1, 0}, 4, sy::dims{1}, {4}, {}},
    };
    for (auto const& c : cases) {
        for (int values = 0; values < 3; ++values) {
            INFO(c.what << (values == 0 ? ", distinct values" : values == 1 ? ", few levels (ties)" : ", with NaN"));
            operand x(c.x_sizes, c.x_strides, c.x_elements, "x", 0.5f);
            for (std::size_t i = 0; i < x.host.size(); ++i) {
                if (values >= 1) x.host[i] = std::round(x.host[i]);  // 9 levels: many ties
                if (values == 2 && i % 97 == 5) x.host[i] = std::numeric_limits<float>::quiet_NaN();
            }
            dev().copy_from_host(x.buffer, x.host.data(), x.host.size() * 4);
            std::vector<std::int64_t> const out_strides =
                c.out_strides.empty() ? row_major(c.out_sizes) : c.out_strides;
            std::int64_t elements = 1;  // one past the largest offset
            for (std::size_t d = 0; d < c.out_sizes.size(); ++d) elements += (c.out_sizes[d] - 1) * out_strides[d];
            auto const n = static_cast<std::size_t>(elements);
            std::vector<std::int64_t> want(n, -1);
            test_webgpu::device_array got_buffer(n * 8);
            auto const rank = static_cast<std::int64_t>(c.out_sizes.size());
            auto const gpu_out = sy::strided_ref::make(got_buffer.buffer, dtype::i64, device_kind::webgpu,
                                                       c.out_sizes.data(), out_strides.data(), rank, "index");
            auto const cpu_out = sy::strided_ref::make(want.data(), dtype::i64, device_kind::cpu, c.out_sizes.data(),
                                                       out_strides.data(), rank, "index");
            // Both devices from the same -1s (high words and gaps too).
            auto const both = [&](char const* name, auto&& run) {
                INFO(name);
                std::vector<std::int64_t> const garbage(n, -1);
                dev().copy_from_host(got_buffer.buffer, garbage.data(), n * 8);
                want = garbage;
                run(gpu_f32{}, gpu_out, x.gpu);
                run(cpu_f32{}, cpu_out, x.cpu);
                CHECK(got_buffer.read<std::int64_t>(n) == want);
            };
            both("argmax",
                 [&](auto tag, auto const& o, auto const& xs) { sy::reduce(tag, o, c.over, sy::argmax, xs); });
            both("argmin",
                 [&](auto tag, auto const& o, auto const& xs) { sy::reduce(tag, o, c.over, sy::argmin, xs); });
            // A map of two inputs with a host number (a uniform word after
            // the index operand's strides): the largest |x - y| + 0.25, y
            // broadcast along the last dimension. No multiply: an FMA in the
            // CPU's AVX2/AVX-512 copies would round x - 0.75 y differently
            // from the GPU, and near-ties then pick other indices.
            if (values == 0) {
                std::int64_t const last = c.x_sizes.back();
                operand y({last}, {1}, last, "y", 1.5f);
                auto const distance = [](auto a, auto b) { return sy::abs(a - b) + 0.25f; };  // traced on WebGPU
                auto const ys = [&](auto tag) { return std::is_same_v<decltype(tag), cpu_f32> ? y.cpu : y.gpu; };
                both("argmax of a map", [&](auto tag, auto const& o, auto const& xs) {
                    sy::transform_reduce(tag, o, c.over, sy::argmax, distance, xs, ys(tag));
                });
            }
        }
    }
}

TEST_CASE("webgpu argmax of i32 and f16, its errors, and amax and amin of NaN", "[webgpu][reduce][arg]") {
    // Rows of 9000: two passes, the partials carrying i32 values' bits.
    std::int64_t const length = 9000;
    std::vector<std::int32_t> host(static_cast<std::size_t>(3 * length));
    for (std::size_t i = 0; i < host.size(); ++i) host[i] = std::int32_t(i * 7919 % 613) - 300;  // ties
    host[8500] = -1000;  // row 0's smallest, in its second block
    test_webgpu::device_array x(host);
    test_webgpu::device_array index(3 * 8);
    using gpu_i32 = sy::tag<device_kind::webgpu, dtype::i32>;
    auto const in = x.ref(dtype::i32, {3, length}, "x");
    sy::reduce(gpu_i32{}, index.ref(dtype::i64, {3}, "index"), sy::dims{1}, sy::argmin, in);
    std::vector<std::int64_t> const got = index.read<std::int64_t>(3);
    CHECK(got[0] == 8500);
    for (std::size_t r = 0; r < 3; ++r) {
        auto const row = host.begin() + std::ptrdiff_t(r) * length;
        CHECK(got[r] == std::min_element(row, row + length) - row);  // the first of the smallest
    }
    CHECK_THROWS_WITH(sy::reduce(gpu_i32{}, x.ref(dtype::i32, {3}, "index"), sy::dims{1}, sy::argmax, in),
                      Catch::Contains("argmax writes indices, which need dtype i64"));
    std::int64_t const none_sizes[] = {0}, one[] = {1};
    auto const empty = sy::strided_ref::make(x.buffer, dtype::i32, device_kind::webgpu, none_sizes, one, 1, "x");
    CHECK_THROWS_WITH(sy::reduce(gpu_i32{}, index.ref(dtype::i64, {}, "index"), sy::all_dims, sy::argmax, empty),
                      Catch::Contains("argmax over zero elements"));

    // NaN wins amax and amin too, found by its bits (lavapipe folds v != v).
    std::vector<float> const nan_rows = {1.0f, NAN, 3.0f, -2.0f, 5.0f, 4.0f};
    test_webgpu::device_array f(nan_rows);
    test_webgpu::device_array extremes(2 * 4);
    sy::reduce(gpu_f32{}, extremes.ref(dtype::f32, {2}, "out"), sy::dims{1}, sy::amax, f.ref(dtype::f32, {2, 3}, "x"));
    std::vector<float> extreme = extremes.read<float>(2);
    CHECK(std::isnan(extreme[0]));
    CHECK(extreme[1] == 5.0f);
    sy::reduce(gpu_f32{}, extremes.ref(dtype::f32, {2}, "out"), sy::dims{1}, sy::amin, f.ref(dtype::f32, {2, 3}, "x"));
    extreme = extremes.read<float>(2);
    CHECK(std::isnan(extreme[0]));
    CHECK(extreme[1] == -2.0f);

    if (!dev().has_f16()) {
        SUCCEED("the adapter has no shader-f16");
        return;
    }
    std::vector<sy::half> halves(9000);
    for (std::size_t i = 0; i < halves.size(); ++i) halves[i] = sy::half(float(i % 1000) * 0.5f);
    halves[4321] = sy::half(600.0f);  // the largest, in the second block
    test_webgpu::device_array h(halves);
    sy::reduce(sy::tag<device_kind::webgpu, dtype::f16>{}, index.ref(dtype::i64, {}, "index"), sy::all_dims, sy::argmax,
               h.ref(dtype::f16, {9000}, "x"));
    CHECK(index.read<std::int64_t>(1)[0] == 4321);
}

TEST_CASE("webgpu sums 2^24 f32 accurately and bitwise the same each run", "[webgpu][reduce]") {
    std::int64_t const n = std::int64_t{1} << 24;
    operand x({n}, {1}, n, "x", 0.0f);
    for (std::size_t i = 0; i < x.host.size(); ++i) x.host[i] = 1.0f + float(i % 1000) * 1e-3f;
    dev().copy_from_host(x.buffer, x.host.data(), x.host.size() * 4);
    double exact = 0;
    for (float v : x.host) exact += v;
    operand out({}, {}, 1, "out", 0.0f);
    sy::reduce(gpu_f32{}, out.gpu, sy::all_dims, sy::sum, x.gpu);
    float const first = out.read()[0];
    sy::reduce(gpu_f32{}, out.gpu, sy::all_dims, sy::sum, x.gpu);
    float const second = out.read()[0];
    CHECK(std::fabs(double(first) - exact) / exact < 1e-6);  // a serial f32 sum is off by ~1e-3
    CHECK(std::memcmp(&first, &second, 4) == 0);
}

TEST_CASE("webgpu empty reductions write the identity without binding their inputs", "[webgpu][reduce]") {
    operand out({4}, {1}, 4, "out", 7.0f);
    void* none = dev().alloc(0);  // an empty tensor's memory
    std::int64_t const sizes[] = {4, 0}, strides[] = {0, 1};
    auto const empty = sy::strided_ref::make(none, dtype::f32, device_kind::webgpu, sizes, strides, 2, "empty");
    sy::reduce(gpu_f32{}, out.gpu, sy::dims{1}, sy::sum, empty);
    CHECK(out.read() == std::vector<float>(4, 0.0f));
    sy::reduce(gpu_f32{}, out.gpu, sy::dims{1}, sy::prod, empty);
    CHECK(out.read() == std::vector<float>(4, 1.0f));
    // A sliced empty view (its reduced size-0 dimension has a stride).
    operand x({8, 8}, {8, 1}, 64, "x", 0.5f);
    std::int64_t const sliced_sizes[] = {0, 4}, sliced_strides[] = {8, 2};
    auto const sliced =
        sy::strided_ref::make(x.buffer, dtype::f32, device_kind::webgpu, sliced_sizes, sliced_strides, 2, "sliced");
    sy::reduce(gpu_f32{}, out.gpu, sy::dims{0}, sy::sum, sliced);
    CHECK(out.read() == std::vector<float>(4, 0.0f));
    dev().free(none);
}

TEST_CASE("webgpu reductions of more than 8192 x 8192 values take three passes", "[webgpu][reduce]") {
    // Rows of 2^26 + 5 values, each row one value read through a stride 0.
    std::int64_t const length = (std::int64_t{1} << 26) + 5;
    operand x({3, length}, {1, 0}, 3, "x", 0.0f);
    x.host = {1.0f, 2.0f, 0.5f};
    dev().copy_from_host(x.buffer, x.host.data(), 12);
    operand out({3}, {1}, 3, "out", 0.0f);
    dev().sync();
    auto const before = dev().counters();
    sy::reduce(gpu_f32{}, out.gpu, sy::dims{1}, sy::sum, x.gpu);
    CHECK(dev().counters().dispatches == before.dispatches + 3);
    std::vector<float> const got = out.read();
    for (std::size_t r = 0; r < 3; ++r) CHECK(std::fabs(got[r] / (double(x.host[r]) * double(length)) - 1) < 1e-6);
}

TEST_CASE("webgpu reductions record without submitting and free their partials", "[webgpu][reduce]") {
    operand x({5, 70000}, {70000, 1}, 350000, "x", 0.5f);
    operand out({5}, {1}, 5, "out", 0.0f);
    dev().sync();
    auto const before = dev().counters();
    sy::reduce(gpu_f32{}, out.gpu, sy::dims{1}, sy::sum, x.gpu);
    auto const after = dev().counters();
    CHECK(after.submits == before.submits);
    CHECK(after.dispatches == before.dispatches + 2);  // blocks, then the partials
    CHECK(after.live_bytes == before.live_bytes);
}

TEST_CASE("webgpu reductions with every combine, i32 and f16", "[webgpu][reduce]") {
    operand x({64, 33}, {33, 1}, 64 * 33, "x", 0.25f);
    operand out({64}, {1}, 64, "out", 0.0f);
    auto const check_rows = [&](auto combine, auto reference, char const* what) {
        INFO(what);
        sy::reduce(gpu_f32{}, out.gpu, sy::dims{1}, combine, x.gpu);
        std::vector<float> const got = out.read();
        for (std::size_t r = 0; r < 64; ++r) {
            double want = reference(x.host[r * 33]);
            for (std::size_t c = 1; c < 33; ++c) want = reference(want, x.host[r * 33 + c]);
            CHECK(std::fabs(got[r] - want) <= 1e-5 * std::max(1.0, std::fabs(want)));
        }
    };
    struct fold {
        int kind;
        double operator()(double a) const { return a; }
        double operator()(double a, double b) const {
            return kind == 0 ? a * b : kind == 1 ? std::max(a, b) : kind == 2 ? std::min(a, b) : std::max(a, b);
        }
    };
    for (std::size_t i = 0; i < x.host.size(); ++i)
        x.host[i] = 0.9f + 0.2f * std::sin(float(i));  // products stay near 1
    dev().copy_from_host(x.buffer, x.host.data(), x.host.size() * 4);
    check_rows(sy::prod, fold{0}, "prod");
    check_rows(sy::amax, fold{1}, "amax");
    check_rows(sy::amin, fold{2}, "amin");
    using C = sy::compute_t<gpu_f32>;
    auto const user_max = sy::combine([](C a, C b) { return sy::max(a, b); }, -std::numeric_limits<float>::infinity());
    check_rows(user_max, fold{3}, "a user's combine");

    SECTION("i32 sums of a map") {
        std::vector<std::int32_t> host(1000);
        for (std::size_t i = 0; i < host.size(); ++i) host[i] = std::int32_t(i * 7919 % 2001) - 1000;
        void* buffer = dev().alloc(host.size() * 4);
        void* result = dev().alloc(4);
        dev().copy_from_host(buffer, host.data(), host.size() * 4);
        std::int64_t const sizes[] = {1000}, strides[] = {1};
        auto const in = sy::strided_ref::make(buffer, dtype::i32, device_kind::webgpu, sizes, strides, 1, "x");
        auto const o = sy::strided_ref::make(result, dtype::i32, device_kind::webgpu, sizes, strides, 0, "out");
        using C32 = sy::compute_t<sy::tag<device_kind::webgpu, dtype::i32>>;
        sy::transform_reduce(
            sy::tag<device_kind::webgpu, dtype::i32>{}, o, sy::all_dims, sy::sum, [](C32 v) { return v * 3; }, in);
        std::int32_t got = 0;
        dev().copy_to_host(&got, result, 4);
        std::int64_t want = 0;
        for (auto v : host) want += 3 * v;
        CHECK(got == std::int32_t(want));
        dev().free(buffer);
        dev().free(result);
    }
    SECTION("f16 accumulates in f32, across passes too") {
        if (!dev().has_f16()) {
            SUCCEED("the adapter has no shader-f16");
            return;
        }
        // Rows of 4096 (one pass) and of 9000 (two: the partials are f32).
        for (std::int64_t const length : {4096, 9000}) {
            INFO("rows of " << length);
            std::vector<sy::half> host(static_cast<std::size_t>(3 * length), sy::half(0.1f));
            void* buffer = dev().alloc(host.size() * 2);
            void* result = dev().alloc(8);
            dev().copy_from_host(buffer, host.data(), host.size() * 2);
            std::int64_t const sizes[] = {3, length}, strides[] = {length, 1};
            auto const in = sy::strided_ref::make(buffer, dtype::f16, device_kind::webgpu, sizes, strides, 2, "x");
            auto const o = sy::strided_ref::make(result, dtype::f16, device_kind::webgpu, sizes, strides + 1, 1, "out");
            sy::reduce(sy::tag<device_kind::webgpu, dtype::f16>{}, o, sy::dims{1}, sy::sum, in);
            sy::half got[4] = {};
            dev().copy_to_host(got, result, 8);
            // An f16 accumulator stalls at 256; f32 gets length * 0.0999755859375.
            float const want = float(sy::half(float(length) * float(sy::half(0.1f))));
            for (int r = 0; r < 3; ++r) CHECK(float(got[r]) == want);
            dev().free(buffer);
            dev().free(result);
        }
    }
}

TEST_CASE("webgpu reductions read one buffer twice and refuse what they cannot run", "[webgpu][reduce]") {
    operand x({1000}, {1}, 1000, "x", 0.5f);
    operand out({}, {}, 1, "out", 0.0f);
    using C = sy::compute_t<gpu_f32>;
    sy::transform_reduce(
        gpu_f32{}, out.gpu, sy::all_dims, sy::sum, [](C a, C b) { return a * b; }, x.gpu, x.gpu);
    double want = 0;
    for (float v : x.host) want += double(v) * v;
    CHECK(std::fabs(out.read()[0] - want) < 1e-5 * want);

    std::int64_t const sizes[] = {1000}, strides[] = {1};
    auto const f64 = sy::strided_ref::make(x.buffer, dtype::f64, device_kind::webgpu, sizes, strides, 1, "x");
    auto const f64_out = sy::strided_ref::make(out.buffer, dtype::f64, device_kind::webgpu, sizes, strides, 0, "out");
    CHECK_THROWS_WITH(sy::reduce(sy::tag<device_kind::webgpu, dtype::f64>{}, f64_out, sy::all_dims, sy::sum, f64),
                      Catch::Contains("reduce on webgpu: dtype f64 is not supported"));
    float host_data[4] = {};
    std::int64_t const four[] = {4};
    auto const stray = sy::strided_ref::make(host_data, dtype::f32, device_kind::webgpu, four, strides, 1, "stray");
    CHECK_THROWS_WITH(sy::reduce(gpu_f32{}, out.gpu, sy::all_dims, sy::sum, stray),
                      Catch::Contains("input 'stray' is not a live buffer of the current webgpu device"));
    std::int64_t const none[] = {0};
    auto const empty = sy::strided_ref::make(x.buffer, dtype::f32, device_kind::webgpu, none, strides, 1, "x");
    CHECK_THROWS_WITH(sy::reduce(gpu_f32{}, out.gpu, sy::all_dims, sy::amax, empty),
                      Catch::Contains("amax over zero elements"));
}

TEST_CASE("webgpu lazy reductions: dot and a chain's row sums in one dispatch each", "[webgpu][reduce][lazy]") {
    operand x({300, 70}, {70, 1}, 21000, "x", 0.5f);
    operand y({70}, {1}, 70, "y", 1.5f);
    dev().sync();
    dev().reset_counters();
    auto const rows = sy::lazy(x.gpu).relu().mul(2.0f).add(y.gpu).sum(sy::dims{-1});
    sy::lazy_result const sums = rows.compute();
    CHECK(dev().counters().dispatches == 1);  // the chain is the reduction's map
    CHECK(dev().counters().submits == 0);
    std::vector<float> const got = sums.to_host<float>();
    std::vector<float> const want = sy::lazy(x.cpu).relu().mul(2.0f).add(y.cpu).sum(sy::dims{-1}).to_host<float>();
    REQUIRE(got.size() == 300);
    CHECK(worst_relative(got, want, 70 * 20.0) < 1e-6);

    operand z({300, 70}, {70, 1}, 21000, "z", 2.5f);
    double exact = 0;
    for (std::size_t i = 0; i < x.host.size(); ++i) exact += double(x.host[i]) * z.host[i];
    CHECK(std::fabs(sy::dot(x.gpu, z.gpu).item<float>() - exact) < 1e-5 * 21000 * 16);
}

TEST_CASE("webgpu f32 reductions whose map computes in f16 enable f16", "[webgpu][reduce]") {
    if (!dev().has_f16()) {
        SUCCEED("the adapter has no shader-f16");
        return;
    }
    operand x({1000}, {1}, 1000, "x", 0.5f);
    operand out({}, {}, 1, "out", 0.0f);
    using C = sy::compute_t<gpu_f32>;
    using H = sy::storage_t<sy::tag<device_kind::webgpu, dtype::f16>>;
    sy::transform_reduce(
        gpu_f32{}, out.gpu, sy::all_dims, sy::sum, [](C v) { return static_cast<C>(static_cast<H>(v)); }, x.gpu);
    // WGSL lets an f32 -> f16 conversion round either way: allow an f16 ulp
    // per value (NVIDIA's Vulkan differs from round-to-nearest here).
    double want = 0, ulps_of_f16 = 0;
    for (float v : x.host) {
        want += float(sy::half(v));
        ulps_of_f16 += std::ldexp(1.0, std::ilogb(std::max(std::fabs(v), 6.2e-5f)) - 10);
    }
    CHECK(std::fabs(out.read()[0] - want) <= ulps_of_f16 + 1e-4);
}

TEST_CASE("webgpu transform_rows (separate calls) matches the CPU's fused rows", "[webgpu][reduce][rows]") {
    struct rows_case {
        char const* what;
        std::vector<std::int64_t> sizes, strides;
        std::int64_t elements;
    };
    std::vector<rows_case> const cases = {
        {"rows", {37, 300}, {300, 1}, 11100},
        {"transposed", {40, 30}, {1, 40}, 1200},
        {"rank 0", {}, {}, 1},
        {"empty rows", {4, 0}, {0, 1}, 1},
    };
    for (auto const& c : cases) {
        INFO(c.what);
        std::int64_t const n = c.sizes.empty() ? 1 : c.sizes.back();
        std::vector<std::int64_t> const gain_sizes = c.sizes.empty() ? std::vector<std::int64_t>{} : std::vector{n};
        std::vector<std::int64_t> const gain_strides =
            c.sizes.empty() ? std::vector<std::int64_t>{} : std::vector{std::int64_t{1}};
        operand x(c.sizes, c.strides, c.elements, "x", 0.5f);
        operand gain(gain_sizes, gain_strides, std::max<std::int64_t>(n, 1), "gain", 2.5f);
        std::vector<std::int64_t> out_strides = row_major(c.sizes);
        for (auto& stride : out_strides) stride = std::max<std::int64_t>(stride, 1);  // empty rows: no stride 0
        operand out(c.sizes, out_strides, std::max<std::int64_t>(count(c.sizes), 1), "out", 7.0f);
        auto const run = [&](auto tag, sy::strided_ref const& o, sy::strided_ref const& xs, sy::strided_ref const& g,
                             int which) {
            using C = sy::compute_t<decltype(tag)>;
            auto const shifted_exp = [](C v, C max) { return sy::exp(v - max); };
            if (which == 0) {
                auto const normalized = [](C v, C max, C sum) { return sy::exp(v - max) / sum; };
                sy::transform_rows(tag, o, sy::row_stats(sy::amax, sy::row_stat(sy::sum, shifted_exp)), normalized, xs);
            } else if (which == 2) {  // the sum's values handed to f (computed again on WebGPU)
                auto const normalized = [](C, C e, C, C sum) { return e / sum; };
                sy::transform_rows(tag, o, sy::row_stats(sy::amax, sy::row_stat(sy::sum, shifted_exp).with_values()),
                                   normalized, xs);
            } else {
                float const inv_n = 1.0f / float(n);
                auto const mean_term = [inv_n](C v, C) { return v * inv_n; };
                auto const variance_term = [inv_n](C v, C, C mean) { return (v - mean) * (v - mean) * inv_n; };
                auto const normalize = [](C v, C g, C mean, C variance) {
                    return (v - mean) / sy::sqrt(variance + 1e-5f) * g;
                };
                sy::transform_rows(
                    tag, o, sy::row_stats(sy::row_stat(sy::sum, mean_term), sy::row_stat(sy::sum, variance_term)),
                    normalize, xs, g);
            }
        };
        for (int which = 0; which < 3; ++which) {
            run(gpu_f32{}, out.gpu, x.gpu, gain.gpu, which);
            run(cpu_f32{}, out.cpu, x.cpu, gain.cpu, which);
            std::vector<float> const got = out.read();
            double worst = 0;
            for (std::size_t i = 0; i < got.size(); ++i)
                worst = std::max(worst, std::fabs(double(got[i]) - double(out.host[i])) /
                                            (std::fabs(double(out.host[i])) + (which == 1 ? 1.0 : 1e-6)));
            CHECK(worst < 1e-4);
        }
    }
    // In place: out is x.
    operand x({5, 64}, {64, 1}, 320, "x", 0.5f);
    std::vector<float> const before = x.host;
    auto const centered = [](auto v, auto max) { return v - max; };
    sy::transform_rows(gpu_f32{}, x.gpu, sy::row_stats(sy::amax), centered, x.gpu);
    sy::transform_rows(cpu_f32{}, x.cpu, sy::row_stats(sy::amax), centered, x.cpu);
    CHECK(x.read() == x.host);
    CHECK(x.host != before);
}
