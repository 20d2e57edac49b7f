// for_each on WebGPU (lavapipe in CI), checked against the same kernels on
// the CPU: softplus (the torch example's scalar function, unchanged), relu,
// strided and f16 views, sizes that are not multiples of the workgroup and
// beyond 65535 workgroups, and the errors a kernel or its data can cause.
#include <catch2/catch.hpp>

#include <switchyard/switchyard.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "operands.h"
#include "torch/softplus_math.h"

namespace sy = switchyard;
using sy::contiguity;
using sy::device_kind;
using sy::dtype;

namespace {

using test_webgpu::dev;
using test_webgpu::device_array;
using test_webgpu::test_inputs;

// The torch example's softplus kernel, as an op over any device, dtype and
// contiguity: what a user writes once.
template <typename Tag>
void softplus(Tag tag, sy::strided_ref const& x, sy::strided_ref const& y, double beta, double threshold) {
    constexpr auto device = sy::tag_get<device_kind>(Tag{});
    constexpr auto type = sy::tag_get<dtype>(Tag{});
    constexpr auto contig = sy::tag_get<contiguity>(Tag{});
    using storage = sy::storage_t<Tag>;
    using compute = sy::compute_t<Tag>;
    auto const order = sy::iteration_order_of(y, x);
    sy::flat_in<device, type, contig> const in(x, order);
    sy::flat_out<device, type, contig> const out(y, order);
    auto const b = static_cast<compute>(beta), inv_b = static_cast<compute>(1.0 / beta),
               t = static_cast<compute>(threshold);
    sy::for_each(tag, out.size(), [=](Tag, std::int64_t i) {
        out[i] = static_cast<storage>(
            switchyard_examples::softplus_scalar<storage>(static_cast<compute>(in[i]), b, inv_b, t));
    });
}

template <auto Device, auto Type, auto Contig>
using tag_of = sy::tag<Device, Type, Contig>;

// Distance in units of b's last place. Results below FLT_MIN count as equal:
// WGSL lets a GPU flush subnormals to zero (NVIDIA's Vulkan driver does).
double ulp_distance(float a, float b) {
    if (a == b) return 0;
    if (std::fabs(a) < FLT_MIN && std::fabs(b) < FLT_MIN) return 0;
    double const ulp = std::nextafter(std::fabs(b), INFINITY) - std::fabs(b);
    return std::fabs(static_cast<double>(a) - b) / ulp;
}

}  // namespace

TEST_CASE("webgpu for_each: softplus matches the CPU for sizes around the workgroup", "[webgpu][for_each]") {
    for (std::size_t n : {std::size_t{1}, std::size_t{255}, std::size_t{256}, std::size_t{257}, std::size_t{100003}}) {
        for (double beta : {1.0, 2.5}) {
            INFO("n = " << n << ", beta = " << beta);
            std::vector<float> const host = test_inputs(n);
            std::vector<float> expected(n);
            auto const n64 = static_cast<std::int64_t>(n);
            softplus(
                tag_of<device_kind::cpu, dtype::f32, contiguity::contiguous>{},
                sy::strided_ref::contiguous(const_cast<float*>(host.data()), dtype::f32, device_kind::cpu, {n64}, "x"),
                sy::strided_ref::contiguous(expected.data(), dtype::f32, device_kind::cpu, {n64}, "y"), beta, 20.0);

            device_array const x(host), y(n * sizeof(float));
            softplus(tag_of<device_kind::webgpu, dtype::f32, contiguity::contiguous>{}, x.ref(dtype::f32, {n64}, "x"),
                     y.ref(dtype::f32, {n64}, "y"), beta, 20.0);
            std::vector<float> const got = y.read<float>(n);
            double worst = 0;
            for (std::size_t i = 0; i < n; ++i) worst = std::max(worst, ulp_distance(got[i], expected[i]));
            CHECK(worst <= 4.0);
        }
    }
}

namespace {

// out[i] = f(in[i]) on WebGPU; f is written once for float and shader values.
template <typename F>
std::vector<float> on_webgpu(std::vector<float> const& host, F f) {
    using webgpu_f32 = tag_of<device_kind::webgpu, dtype::f32, contiguity::contiguous>;
    auto const n = static_cast<std::int64_t>(host.size());
    device_array const x(host), y(host.size() * sizeof(float));
    sy::flat_in<device_kind::webgpu, dtype::f32, contiguity::contiguous> const in(x.ref(dtype::f32, {n}, "x"));
    sy::flat_out<device_kind::webgpu, dtype::f32, contiguity::contiguous> const out(y.ref(dtype::f32, {n}, "y"));
    sy::for_each(webgpu_f32{}, n, [=](webgpu_f32, std::int64_t i) { out[i] = f(in[i]); });
    return y.read<float>(host.size());
}

}  // namespace

TEST_CASE("webgpu for_each: every math function agrees with switchyard/math.h", "[webgpu][math]") {
    // Inputs whose results are normal floats (GPUs may flush subnormals).
    std::vector<float> wide, positive, unit;
    for (int k = -4000; k <= 4000; ++k) wide.push_back(static_cast<float>(k) * 0.02173f);
    for (int k = 1; k <= 8000; ++k)
        positive.push_back(std::ldexp(1.0f + static_cast<float>(k % 97) / 97.0f, k % 120 - 60));
    for (int k = -3999; k <= 4000; ++k) unit.push_back(static_cast<float>(k) / 4001.0f);
    auto check = [](char const* name, std::vector<float> const& x, std::vector<float> const& got, auto reference,
                    double max_ulp) {
        double worst = 0;
        float worst_x = 0;
        for (std::size_t i = 0; i < x.size(); ++i) {
            double const d = ulp_distance(got[i], reference(x[i]));
            if (d > worst) worst = d, worst_x = x[i];
        }
        INFO(name << ": worst " << worst << " ulp at x = " << worst_x);
        CHECK(worst <= max_ulp);
    };
    check(
        "exp", wide, on_webgpu(wide, [](auto v) { return sy::exp(v); }), [](float v) { return sy::exp(v); }, 2);
    check(
        "expm1", wide, on_webgpu(wide, [](auto v) { return sy::expm1(v); }), [](float v) { return sy::expm1(v); }, 2);
    check(
        "log", positive, on_webgpu(positive, [](auto v) { return sy::log(v); }), [](float v) { return sy::log(v); }, 2);
    check(
        "log1p", unit, on_webgpu(unit, [](auto v) { return sy::log1p(v); }), [](float v) { return sy::log1p(v); }, 2);
    check(
        "tanh", wide, on_webgpu(wide, [](auto v) { return sy::tanh(v); }), [](float v) { return sy::tanh(v); }, 2);
    check(
        "sigmoid", wide, on_webgpu(wide, [](auto v) { return sy::sigmoid(v); }), [](float v) { return sy::sigmoid(v); },
        2);
    check(
        "softplus", wide, on_webgpu(wide, [](auto v) { return sy::softplus(v); }),
        [](float v) { return sy::softplus(v); }, 2);
    check(
        "sqrt", positive, on_webgpu(positive, [](auto v) { return sy::sqrt(v); }), [](float v) { return sy::sqrt(v); },
        1);
    check(
        "abs, min, max", wide, on_webgpu(wide, [](auto v) { return sy::max(sy::min(sy::abs(v), 3.0f), 0.5f); }),
        [](float v) { return sy::max(sy::min(sy::abs(v), 3.0f), 0.5f); }, 0);
}

TEST_CASE("webgpu for_each: NaN and infinities through every math function, as on the CPU", "[webgpu][math]") {
    // WGSL's clamp may turn NaN into a bound, so the helpers pass NaN on
    // explicitly (found by the MSL tests, tests/test_msl.cpp).
    std::vector<float> const x = {NAN, INFINITY, -INFINITY, 0.0f, -0.0f, 1.0f};
    auto check = [&](char const* name, std::vector<float> const& got, auto reference) {
        for (std::size_t k = 0; k < x.size(); ++k) {
            float const want = reference(x[k]);
            INFO(name << "(" << x[k] << "): got " << got[k] << ", expected " << want);
            CHECK((std::isnan(want) ? std::isnan(got[k]) : ulp_distance(got[k], want) <= 2));
        }
    };
    check("exp", on_webgpu(x, [](auto v) { return sy::exp(v); }), [](float v) { return sy::exp(v); });
    check("expm1", on_webgpu(x, [](auto v) { return sy::expm1(v); }), [](float v) { return sy::expm1(v); });
    check("tanh", on_webgpu(x, [](auto v) { return sy::tanh(v); }), [](float v) { return sy::tanh(v); });
    check("sigmoid", on_webgpu(x, [](auto v) { return sy::sigmoid(v); }), [](float v) { return sy::sigmoid(v); });
    check("softplus", on_webgpu(x, [](auto v) { return sy::softplus(v); }), [](float v) { return sy::softplus(v); });
}

TEST_CASE("webgpu for_each: 4 indices per invocation (vec4) give the scalar shader's results", "[webgpu][for_each]") {
    // A count that is a multiple of 4 runs the vec4 form; one element fewer
    // runs one index per invocation. Mixed types, comparisons, && and ||, a
    // bool converted to float, uniforms and a math helper cover what the
    // vec4 emission changes.
    std::size_t const n = 4096;
    std::vector<float> const host = test_inputs(n);
    std::vector<std::int32_t> kh(n);
    for (std::size_t i = 0; i < n; ++i) kh[i] = static_cast<std::int32_t>(i % 7);
    device_array const x(host), k(kh);
    using webgpu_f32 = tag_of<device_kind::webgpu, dtype::f32, contiguity::contiguous>;
    using fv = sy::shader::value<float>;
    auto run = [&](std::int64_t count) {
        device_array const y(n * sizeof(float));
        sy::flat_in<device_kind::webgpu, dtype::f32, contiguity::contiguous> const in(x.ref(dtype::f32, {count}, "x"));
        sy::flat_in<device_kind::webgpu, dtype::i32, contiguity::contiguous> const kin(k.ref(dtype::i32, {count}, "k"));
        sy::flat_out<device_kind::webgpu, dtype::f32, contiguity::contiguous> const out(
            y.ref(dtype::f32, {count}, "y"));
        std::size_t const pipelines = dev().cached_pipelines();
        sy::for_each(webgpu_f32{}, count, [=](webgpu_f32, std::int64_t i) {
            fv const v = in[i];
            auto const kk = kin[i];
            auto const pick = (v > 0.0f && kk != 3) || v < -2.0f;
            out[i] = sy::select(pick, sy::softplus(v) * static_cast<fv>(kk), sy::max(sy::abs(v), 0.5f)) +
                     static_cast<fv>(v > 1.0f);
        });
        CHECK(dev().cached_pipelines() == pipelines + 1);  // a new kernel text each time
        return y.read<float>(static_cast<std::size_t>(count));
    };
    std::vector<float> const vec = run(static_cast<std::int64_t>(n));
    std::vector<float> const scalar = run(static_cast<std::int64_t>(n) - 1);
    std::size_t differ = 0;
    double worst = 0;
    for (std::size_t i = 0; i < n; ++i) {
        float const v = host[i];
        bool const pick = (v > 0.0f && kh[i] != 3) || v < -2.0f;
        float const want = (pick ? sy::softplus(v) * static_cast<float>(kh[i]) : std::max(std::fabs(v), 0.5f)) +
                           (v > 1.0f ? 1.0f : 0.0f);
        worst = std::max(worst, ulp_distance(vec[i], want));
        if (i + 1 < n) differ += vec[i] != scalar[i];
    }
    CHECK(differ == 0);
    CHECK(worst <= 4.0);
}

TEST_CASE("webgpu for_each: tensor views with constant, index and gathered coordinates", "[webgpu][for_each]") {
    std::int64_t const n = 1000;
    // ijk: [n, 3] i32, read through a transpose of a [3, n] buffer.
    std::vector<std::int32_t> columns(3 * n);
    for (std::int64_t k = 0; k < 3 * n; ++k)
        columns[static_cast<std::size_t>(k)] = static_cast<std::int32_t>(k % 3 + k / 7 % 3);
    device_array const ijk_buf(columns), codes_buf(static_cast<std::size_t>(n) * 4);
    auto const ijk_ref = sy::strided_ref::make(ijk_buf.buffer, dtype::i32, device_kind::webgpu, {n, 3}, {1, n}, "ijk");
    using webgpu_i32 = tag_of<device_kind::webgpu, dtype::i32, contiguity::strided>;
    sy::tensor_in<device_kind::webgpu, dtype::i32, 2, contiguity::strided> const ijk(ijk_ref);
    sy::tensor_out<device_kind::webgpu, dtype::i32, 1, contiguity::contiguous> const codes(
        codes_buf.ref(dtype::i32, {n}, "codes"));
    sy::for_each(webgpu_i32{}, n,
                 [=](webgpu_i32, std::int64_t i) { codes(i) = ijk(i, 0) * 9 + ijk(i, 1) * 3 + ijk(i, 2); });
    std::vector<std::int32_t> const got_codes = codes_buf.read<std::int32_t>(static_cast<std::size_t>(n));
    std::size_t wrong = 0;
    for (std::int64_t r = 0; r < n; ++r) {
        auto at = [&](std::int64_t c) { return columns[static_cast<std::size_t>(c * n + r)]; };
        wrong += got_codes[static_cast<std::size_t>(r)] != at(0) * 9 + at(1) * 3 + at(2);
    }
    CHECK(wrong == 0);

    // Gather and scatter through coordinates read from another view.
    std::vector<float> table(7);
    for (std::size_t k = 0; k < table.size(); ++k) table[k] = 1.5f * static_cast<float>(k) - 2.0f;
    std::vector<std::int32_t> index(static_cast<std::size_t>(n)), permutation(static_cast<std::size_t>(n));
    for (std::int64_t k = 0; k < n; ++k) {
        index[static_cast<std::size_t>(k)] = static_cast<std::int32_t>((k * 5) % 7);
        permutation[static_cast<std::size_t>(k)] = static_cast<std::int32_t>((k * 7) % n);  // 7 and 1000 coprime
    }
    device_array const table_buf(table), index_buf(index), perm_buf(permutation),
        gathered_buf(static_cast<std::size_t>(n) * 4), scattered_buf(static_cast<std::size_t>(n) * 4);
    using webgpu_f32 = tag_of<device_kind::webgpu, dtype::f32, contiguity::contiguous>;
    sy::tensor_in<device_kind::webgpu, dtype::f32, 1, contiguity::contiguous> const lookup(
        table_buf.ref(dtype::f32, {7}, "table"));
    sy::flat_in<device_kind::webgpu, dtype::i32, contiguity::contiguous> const idx(
        index_buf.ref(dtype::i32, {n}, "index"));
    sy::flat_in<device_kind::webgpu, dtype::i32, contiguity::contiguous> const perm(
        perm_buf.ref(dtype::i32, {n}, "perm"));
    sy::flat_out<device_kind::webgpu, dtype::f32, contiguity::contiguous> const gathered(
        gathered_buf.ref(dtype::f32, {n}, "gathered"));
    sy::tensor_out<device_kind::webgpu, dtype::f32, 1, contiguity::contiguous> const scattered(
        scattered_buf.ref(dtype::f32, {n}, "scattered"));
    sy::for_each(webgpu_f32{}, n, [=](webgpu_f32, std::int64_t i) {
        auto const v = lookup(idx[i]);
        gathered[i] = v;
        scattered(perm[i]) = v * 2.0f;
    });
    std::vector<float> const g = gathered_buf.read<float>(static_cast<std::size_t>(n));
    std::vector<float> const sc = scattered_buf.read<float>(static_cast<std::size_t>(n));
    wrong = 0;
    for (std::size_t k = 0; k < static_cast<std::size_t>(n); ++k) {
        float const want = table[static_cast<std::size_t>(index[k])];
        wrong += g[k] != want;
        wrong += sc[static_cast<std::size_t>(permutation[k])] != want * 2.0f;
    }
    CHECK(wrong == 0);

    // Host arithmetic on the index is refused, not run wrongly.
    CHECK_THROWS_WITH(sy::for_each(webgpu_i32{}, n, [=](webgpu_i32, std::int64_t i) { codes(i) = ijk(i / 2, 0); }),
                      Catch::Contains("coordinate 0"));
}

TEST_CASE("webgpu for_each: a new beta reuses the compiled pipeline", "[webgpu][for_each]") {
    std::vector<float> const host = test_inputs(1000);
    device_array const x(host), y(host.size() * sizeof(float));
    using webgpu_f32 = tag_of<device_kind::webgpu, dtype::f32, contiguity::contiguous>;
    softplus(webgpu_f32{}, x.ref(dtype::f32, {1000}, "x"), y.ref(dtype::f32, {1000}, "y"), 1.0, 20.0);
    std::size_t const pipelines = dev().cached_pipelines();
    softplus(webgpu_f32{}, x.ref(dtype::f32, {1000}, "x"), y.ref(dtype::f32, {1000}, "y"), 3.0, 5.0);
    CHECK(dev().cached_pipelines() == pipelines);
    std::vector<float> const got = y.read<float>(1000);
    for (std::size_t i = 0; i < host.size(); ++i) {
        float const bx = 3.0f * host[i];
        float const want = bx > 5.0f ? host[i] : std::log1p(std::exp(bx)) / 3.0f;
        REQUIRE(std::fabs(got[i] - want) <= 1e-6f * std::max(1.0f, std::fabs(want)));
    }
}

TEST_CASE("webgpu for_each: relu beyond 65535 workgroups of 256", "[webgpu][for_each]") {
    // Not a multiple of 4, so one index per invocation: more than 65535
    // workgroups, which spill into a second row.
    std::size_t const n = 65535u * 256u + 1001u;
    std::vector<float> host(n);
    for (std::size_t i = 0; i < n; ++i) host[i] = (i % 3 == 0 ? -1.0f : 1.0f) * static_cast<float>(i % 1024);
    device_array const x(host), y(n * sizeof(float));
    using webgpu_f32 = tag_of<device_kind::webgpu, dtype::f32, contiguity::contiguous>;
    auto const n64 = static_cast<std::int64_t>(n);
    sy::flat_in<device_kind::webgpu, dtype::f32, contiguity::contiguous> const in(x.ref(dtype::f32, {n64}, "x"));
    sy::flat_out<device_kind::webgpu, dtype::f32, contiguity::contiguous> const out(y.ref(dtype::f32, {n64}, "y"));
    dev().reset_counters();
    sy::for_each(webgpu_f32{}, n64, [=](webgpu_f32, std::int64_t i) { out[i] = sy::max(in[i], 0.0f); });
    CHECK(dev().counters().submits == 0);  // recorded, not submitted
    std::vector<float> const got = y.read<float>(n);
    CHECK(dev().counters().submits == 1);
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < n; ++i) wrong += got[i] != std::max(host[i], 0.0f);
    CHECK(wrong == 0);
}

TEST_CASE("webgpu for_each: strided (transposed) input", "[webgpu][for_each]") {
    // x is 37 x 53 row-major; the op reads x.T (53 x 37) into a row-major y.
    std::int64_t const rows = 37, cols = 53;
    std::vector<float> const host = test_inputs(static_cast<std::size_t>(rows * cols));
    device_array const x(host), y(host.size() * sizeof(float));
    auto const xt = sy::strided_ref::make(x.buffer, dtype::f32, device_kind::webgpu, {cols, rows}, {1, cols}, "x.T");
    auto const yr = y.ref(dtype::f32, {cols, rows}, "y");
    REQUIRE(sy::combined_contiguity(yr, xt) == contiguity::strided);
    softplus(tag_of<device_kind::webgpu, dtype::f32, contiguity::strided>{}, xt, yr, 1.0, 20.0);
    std::vector<float> const got = y.read<float>(host.size());
    double worst = 0;
    for (std::int64_t r = 0; r < cols; ++r)
        for (std::int64_t c = 0; c < rows; ++c) {
            float const v = host[static_cast<std::size_t>(c * cols + r)];
            worst = std::max(worst, ulp_distance(got[static_cast<std::size_t>(r * rows + c)], sy::softplus(v)));
        }
    CHECK(worst <= 4.0);
}

TEST_CASE("webgpu for_each: f16 storage computes in f32", "[webgpu][for_each][f16]") {
    if (!dev().has_f16()) {
        WARN("adapter lacks shader-f16: f16 is refused instead");
        std::vector<sy::half> const host(10, sy::half(1.0f));
        device_array const x(host), y(host.size() * 2);
        CHECK_THROWS_WITH(softplus(tag_of<device_kind::webgpu, dtype::f16, contiguity::contiguous>{},
                                   x.ref(dtype::f16, {10}, "x"), y.ref(dtype::f16, {10}, "y"), 1.0, 20.0),
                          Catch::Contains("shader-f16"));
        return;
    }
    std::size_t const n = 1001;  // odd: the last half word is padded
    std::vector<float> const values = test_inputs(n);
    std::vector<sy::half> host(n), expected(n);
    for (std::size_t i = 0; i < n; ++i) host[i] = sy::half(values[i] * 0.25f);
    softplus(tag_of<device_kind::cpu, dtype::f16, contiguity::contiguous>{},
             sy::strided_ref::contiguous(host.data(), dtype::f16, device_kind::cpu, {1001}, "x"),
             sy::strided_ref::contiguous(expected.data(), dtype::f16, device_kind::cpu, {1001}, "y"), 1.0, 20.0);
    device_array const x(host), y(n * 2);
    softplus(tag_of<device_kind::webgpu, dtype::f16, contiguity::contiguous>{}, x.ref(dtype::f16, {1001}, "x"),
             y.ref(dtype::f16, {1001}, "y"), 1.0, 20.0);
    std::vector<sy::half> const got = y.read<sy::half>(n);
    std::size_t off_by_more_than_one = 0;
    for (std::size_t i = 0; i < n; ++i) {
        std::uint16_t a = 0, b = 0;
        std::memcpy(&a, &got[i], 2);
        std::memcpy(&b, &expected[i], 2);
        off_by_more_than_one += (a > b ? a - b : b - a) > 1;
    }
    CHECK(off_by_more_than_one == 0);
}

TEST_CASE("webgpu for_each: kernels and data a shader cannot run are refused clearly", "[webgpu][errors]") {
    using webgpu_f32 = tag_of<device_kind::webgpu, dtype::f32, contiguity::contiguous>;
    std::vector<float> const host(64, 1.0f);
    device_array const x(host), y(host.size() * 4);
    sy::flat_in<device_kind::webgpu, dtype::f32, contiguity::contiguous> const in(x.ref(dtype::f32, {64}, "x"));
    sy::flat_out<device_kind::webgpu, dtype::f32, contiguity::contiguous> const out(y.ref(dtype::f32, {64}, "y"));

    SECTION("f64 data: dtype and device named") {
        std::vector<double> const doubles(8, 1.0);
        device_array const d(doubles);
        CHECK_THROWS_WITH(
            (sy::flat_in<device_kind::webgpu, dtype::f64, contiguity::contiguous>(d.ref(dtype::f64, {8}, "weights"))),
            Catch::Contains("'weights'") && Catch::Contains("f64") && Catch::Contains("webgpu"));
    }
    SECTION("an `if` on a device value") {
        CHECK_THROWS_WITH(sy::for_each(webgpu_f32{}, 64,
                                       [=](webgpu_f32, std::int64_t i) {
                                           if (in[i] > 0.0f) out[i] = 1.0f;
                                       }),
                          Catch::Contains("switchyard::select"));
    }
    SECTION("a view read at another index") {
        CHECK_THROWS_WITH(sy::for_each(webgpu_f32{}, 63, [=](webgpu_f32, std::int64_t i) { out[i] = in[i + 1]; }),
                          Catch::Contains("for_each index"));
    }
    SECTION("arithmetic on the index") {
        CHECK_THROWS_WITH(
            sy::for_each(webgpu_f32{}, 64, [=](webgpu_f32, std::int64_t i) { out[i] = static_cast<float>(i % 7); }),
            Catch::Contains("computes with its for_each index"));
    }
    SECTION("a test on the index") {
        CHECK_THROWS_WITH(
            sy::for_each(webgpu_f32{}, 64,
                         [=](webgpu_f32, std::int64_t i) { out[i] = in[i] * static_cast<float>((i & 1) == 0); }),
            Catch::Contains("computes with its for_each index"));
    }
    SECTION("a count beyond a view") {
        CHECK_THROWS_WITH(sy::for_each(webgpu_f32{}, 65, [=](webgpu_f32, std::int64_t i) { out[i] = in[i]; }),
                          Catch::Contains("count is 65") && Catch::Contains("64 elements"));
    }
    SECTION("a buffer that is not the device's") {
        float not_a_buffer[4] = {};
        sy::flat_in<device_kind::webgpu, dtype::f32, contiguity::contiguous> const foreign(
            sy::strided_ref::contiguous(not_a_buffer, dtype::f32, device_kind::webgpu, {4}, "host_array"));
        CHECK_THROWS_WITH(sy::for_each(webgpu_f32{}, 4, [=](webgpu_f32, std::int64_t i) { out[i] = foreign[i]; }),
                          Catch::Contains("'host_array'") && Catch::Contains("not a live buffer"));
    }
    SECTION("a binding above maxStorageBufferBindingSize") {
        std::uint64_t const limit = dev().limits().maxStorageBufferBindingSize;
        std::uint64_t const elements = limit / 4 + 1024;
        if (elements * 4 > dev().limits().maxBufferSize) {
            WARN("this adapter's maxBufferSize does not exceed its binding limit: nothing to refuse");
            return;
        }
        device_array const big(static_cast<std::size_t>(elements * 4));
        auto const n = static_cast<std::int64_t>(elements);
        sy::flat_out<device_kind::webgpu, dtype::f32, contiguity::contiguous> const huge(
            big.ref(dtype::f32, {n}, "huge"));
        CHECK_THROWS_WITH(sy::for_each(webgpu_f32{}, n, [=](webgpu_f32, std::int64_t i) { huge[i] = 0.0f; }),
                          Catch::Contains("maxStorageBufferBindingSize"));
    }
    SECTION("more host scalars than a uniform binding holds") {
        std::size_t const words = dev().limits().maxUniformBufferBindingSize / 4 + 16;
        std::vector<float> scalars(words);
        for (std::size_t k = 0; k < words; ++k) scalars[k] = 1.0f + static_cast<float>(k) * 1e-3f;  // distinct
        float const* c = scalars.data();
        CHECK_THROWS_WITH(sy::for_each(webgpu_f32{}, 64,
                                       [=](webgpu_f32, std::int64_t i) {
                                           auto v = in[i] * c[0];
                                           for (std::size_t k = 1; k < words; ++k) v = v + c[k];
                                           out[i] = v;
                                       }),
                          Catch::Contains("host scalars") && Catch::Contains("maxUniformBufferBindingSize"));
    }
    // The device still works after every refusal.
    sy::for_each(webgpu_f32{}, 64, [=](webgpu_f32, std::int64_t i) { out[i] = in[i] * 3.0f; });
    CHECK(y.read<float>(64) == std::vector<float>(64, 3.0f));
}
