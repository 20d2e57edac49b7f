// transform on WebGPU (lavapipe in CI) against the same kernel on the CPU:
// broadcast over rows, columns and a scalar, transposed and sliced inputs,
// several outputs, f16 where the adapter has it, and the stage limit.
#include <catch2/catch.hpp>

#include <switchyard/switchyard.h>

#include "operands.h"

#include <cfloat>
#include <cmath>
#include <cstdint>
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

// out = softplus(x) * sigmoid(y) + 1 (positive terms: no cancellation to
// magnify rounding differences): one kernel for both devices.
template <typename Tag>
void gate(Tag tag, sy::strided_ref const& out, sy::strided_ref const& x, sy::strided_ref const& y) {
    using C = sy::compute_t<Tag>;
    sy::transform(
        tag, out, [](C a, C b) { return sy::softplus(a) * sy::sigmoid(b) + C(1); }, x, y);
}

}  // namespace

TEST_CASE("webgpu transform matches the CPU for broadcast and strided operands", "[webgpu][transform]") {
    struct shape_case {
        char const* what;
        std::vector<std::int64_t> x_sizes, x_strides;
        std::int64_t x_elements;
        std::vector<std::int64_t> y_sizes, y_strides;
        std::int64_t y_elements;
    };
    std::vector<shape_case> const cases = {
        {"y per column", {300, 70}, {70, 1}, 21000, {70}, {1}, 70},
        {"y per row", {300, 70}, {70, 1}, 21000, {300, 1}, {1, 1}, 300},
        {"y scalar", {1001}, {1}, 1001, {}, {}, 1},
        {"x transposed", {70, 300}, {1, 70}, 21000, {300}, {1}, 300},
        {"x sliced", {50, 40}, {100, 2}, 5000, {50, 40}, {40, 1}, 2000},
        {"beyond 65535 workgroups", {65537 * 256 + 3}, {1}, 65537 * 256 + 3, {1}, {1}, 1},
    };
    for (auto const& c : cases) {
        INFO(c.what);
        operand x(c.x_sizes, c.x_strides, c.x_elements, "x", 0.5f);
        operand y(c.y_sizes, c.y_strides, c.y_elements, "y", 1.5f);
        std::int64_t n = 1;
        for (auto s : c.x_sizes) n *= s;
        std::vector<std::int64_t> out_strides(c.x_sizes.size());
        std::int64_t stride = 1;
        for (std::size_t d = c.x_sizes.size(); d-- > 0;) {
            out_strides[d] = stride;
            stride *= c.x_sizes[d];
        }
        operand out(c.x_sizes, out_strides, n, "out", 0.0f);
        gate(sy::tag<device_kind::webgpu, dtype::f32>{}, out.gpu, x.gpu, y.gpu);
        gate(sy::tag<device_kind::cpu, dtype::f32>{}, out.cpu, x.cpu, y.cpu);
        std::vector<float> const got = out.read();
        double worst = 0;
        for (std::size_t i = 0; i < got.size(); ++i) worst = std::max(worst, ulps(got[i], out.host[i]));
        CHECK(worst <= 8);
    }
}

TEST_CASE("webgpu transform with two outputs and in place", "[webgpu][transform]") {
    using Tag = sy::tag<device_kind::webgpu, dtype::f32>;
    operand x({4099}, {1}, 4099, "x", 0.25f);
    operand lo({4099}, {1}, 4099, "lo", 0.0f), hi({4099}, {1}, 4099, "hi", 0.0f);
    sy::transform(
        Tag{}, sy::outputs(lo.gpu, hi.gpu),
        [](sy::compute_t<Tag> v) {
            return sy::results{v - 1.0f, v * 2.0f};
        },
        x.gpu);
    sy::transform(
        Tag{}, x.gpu, [](sy::compute_t<Tag> v) { return v + 1.0f; }, x.gpu);
    std::vector<float> const l = lo.read(), h = hi.read(), after = x.read();
    for (std::size_t i = 0; i < x.host.size(); ++i) {
        CHECK(l[i] == x.host[i] - 1.0f);
        CHECK(h[i] == x.host[i] * 2.0f);
        CHECK(after[i] == x.host[i] + 1.0f);
    }
}

TEST_CASE("webgpu transform runs a mapped input's function once per its own element, unsubmitted",
          "[webgpu][transform]") {
    for (bool const broadcast : {true, false}) {
        INFO((broadcast ? "gate per column" : "gate of the output's shape"));
        operand x({300, 70}, {70, 1}, 21000, "x", 0.5f);
        operand g(broadcast ? std::vector<std::int64_t>{70} : std::vector<std::int64_t>{300, 70},
                  broadcast ? std::vector<std::int64_t>{1} : std::vector<std::int64_t>{70, 1}, broadcast ? 70 : 21000,
                  "gate", 1.5f);
        operand out({300, 70}, {70, 1}, 21000, "out", 0.0f);
        auto const mul_sigmoid = [&](auto tag, sy::strided_ref const& o, sy::strided_ref const& a,
                                     sy::strided_ref const& b) {
            using C = sy::compute_t<decltype(tag)>;
            sy::transform(
                tag, o, [](C v, C s) { return v * s; }, a, sy::mapped(b, [](C v) { return sy::sigmoid(v); }));
        };
        dev().sync();
        auto const before = dev().counters();
        mul_sigmoid(sy::tag<device_kind::webgpu, dtype::f32>{}, out.gpu, x.gpu, g.gpu);
        auto const after = dev().counters();
        CHECK(after.submits == before.submits);
        CHECK(after.dispatches == before.dispatches + 2);  // the gate's sigmoid, then the product
        CHECK(after.live_bytes == before.live_bytes);      // the hoisted values are freed (to the pool)
        mul_sigmoid(sy::tag<device_kind::cpu, dtype::f32>{}, out.cpu, x.cpu, g.cpu);
        std::vector<float> const got = out.read();
        double worst = 0;
        for (std::size_t i = 0; i < got.size(); ++i) worst = std::max(worst, ulps(got[i], out.host[i]));
        CHECK(worst <= 8);
    }
}

TEST_CASE("webgpu transform refuses more operands than a shader stage binds", "[webgpu][transform]") {
    using Tag = sy::tag<device_kind::webgpu, dtype::f32>;
    using C = sy::compute_t<Tag>;
    std::vector<std::unique_ptr<operand>> in;
    for (int k = 0; k < 12; ++k)
        in.push_back(
            std::make_unique<operand>(std::vector<std::int64_t>{64}, std::vector<std::int64_t>{1}, 64, "in", 0.0f));
    operand out({64}, {1}, 64, "out", 0.0f);
    auto const sum = [](C a, C b, C c, C d, C e, C f, C g, C h, C i, C j, C k, C l) {
        return a + b + c + d + e + f + g + h + i + j + k + l;
    };
    std::uint32_t const limit = dev().limits().maxStorageBuffersPerShaderStage;
    if (limit >= 13)
        SUCCEED("the adapter binds " << limit << " storage buffers per stage");
    else
        CHECK_THROWS_WITH(
            sy::transform(Tag{}, out.gpu, sum, in[0]->gpu, in[1]->gpu, in[2]->gpu, in[3]->gpu, in[4]->gpu, in[5]->gpu,
                          in[6]->gpu, in[7]->gpu, in[8]->gpu, in[9]->gpu, in[10]->gpu, in[11]->gpu),
            Catch::Contains("storage buffers; the adapter allows"));
}

TEST_CASE("transform_coverage adds WebGPU with the float dtypes it stores", "[webgpu][transform]") {
    static_assert(sy::transform_runs_on(device_kind::webgpu));
    static_assert(
        std::is_same_v<sy::transform_coverage<sy::float_dtype_axis>,
                       sy::coverage<sy::axes<sy::axis<device_kind::cpu>, sy::float_dtype_axis>,
                                    sy::axes<sy::axis<device_kind::webgpu>, sy::axis<dtype::f16, dtype::f32>>>>);
    SUCCEED("checked at compile time");
}
