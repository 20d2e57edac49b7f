// Lazy chains on WebGPU (lavapipe in CI): batching and fusion counters, the
// 100-step chain's buffer peak, and chains with more arrays than a shader
// binds, checked against the same chains on the CPU.
#include <catch2/catch.hpp>

#include <switchyard/switchyard.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <vector>

#include "../lazy_chains.h"
#include "operands.h"

namespace sy = switchyard;
using sy::device_kind;
using sy::dtype;
using test_webgpu::dev;
using test_webgpu::device_array;
using test_webgpu::test_inputs;

namespace {

// 100 steps of scalar arithmetic and relu, built at compile time.
template <int N, typename Chain>
auto long_chain(Chain const& chain) {
    if constexpr (N == 0)
        return chain;
    else if constexpr (N % 4 == 0)
        return long_chain<N - 1>(chain.relu());
    else if constexpr (N % 4 == 1)
        return long_chain<N - 1>(chain.mul(1.25));
    else if constexpr (N % 4 == 2)
        return long_chain<N - 1>(chain.add(-0.5));
    else
        return long_chain<N - 1>(chain.div(1.125));
}

}  // namespace

TEST_CASE("webgpu lazy: a 3-step chain is 1 submit, 2 transfers and 1 fused dispatch", "[webgpu][lazy]") {
    std::size_t const n = 1 << 16;
    std::vector<float> const hx = test_inputs(n);
    std::vector<float> hy(n);
    for (std::size_t i = 0; i < n; ++i) hy[i] = static_cast<float>(i % 17) * 0.5f;
    device_array const y(hy);  // resident on the device, like a weight
    device_array x(n * 4);
    auto const n64 = static_cast<std::int64_t>(n);

    dev().sync();
    dev().reset_counters();
    dev().copy_from_host(x.buffer, hx.data(), n * 4);
    std::vector<float> const got =
        sy::lazy(x.ref(dtype::f32, {n64}, "x")).relu().mul(2.0f).add(y.ref(dtype::f32, {n64}, "y")).to_host<float>();
    auto const c = dev().counters();
    CHECK(c.submits == 1);
    CHECK(c.transfers() == 2);
    CHECK(c.dispatches == 1);

    auto const cx =
        sy::strided_ref::contiguous(const_cast<float*>(hx.data()), dtype::f32, device_kind::cpu, {n64}, "x");
    auto const cy = sy::strided_ref::contiguous(hy.data(), dtype::f32, device_kind::cpu, {n64}, "y");
    CHECK(got == sy::lazy(cx).relu().mul(2.0f).add(cy).to_host<float>());

    // Unfused, the same chain is 3 dispatches, still one submit.
    dev().reset_counters();
    std::vector<float> const per_step = sy::lazy(x.ref(dtype::f32, {n64}, "x"))
                                            .relu()
                                            .mul(2.0f)
                                            .add(y.ref(dtype::f32, {n64}, "y"))
                                            .to_host<float>(sy::fusion::per_step);
    CHECK(dev().counters().dispatches == 3);
    CHECK(dev().counters().submits == 1);
    CHECK(per_step == got);

    // compute() keeps the values on the device for the next chain.
    dev().reset_counters();
    std::uint64_t const live = dev().live_buffers();
    {
        sy::lazy_result const relu_x = sy::lazy(x.ref(dtype::f32, {n64}, "x")).relu().compute();
        CHECK(dev().live_buffers() == live + 1);
        std::vector<float> const again =
            sy::lazy(relu_x.ref()).mul(2.0f).add(y.ref(dtype::f32, {n64}, "y")).to_host<float>();
        CHECK(again == got);
        CHECK(dev().counters().submits == 1);
        CHECK(dev().counters().transfers() == 1);
    }
    CHECK(dev().live_buffers() == live);
}

TEST_CASE("webgpu lazy: 100 steps peak at 3 live buffers", "[webgpu][lazy]") {
    std::size_t const n = 4099;
    std::vector<float> const hx = test_inputs(n);
    auto const n64 = static_cast<std::int64_t>(n);
    dev().sync();
    std::uint64_t const live_before = dev().live_buffers();
    dev().reset_counters();
    std::vector<float> got;
    {
        device_array const x(hx);
        auto const chain = long_chain<100>(sy::lazy(x.ref(dtype::f32, {n64}, "x")));
        STATIC_REQUIRE(decltype(chain)::steps == 100);
        got = chain.to_host<float>();
        CHECK(dev().counters().dispatches == 1);
        got = chain.to_host<float>(sy::fusion::per_step);  // 100 dispatches through two ping-pong buffers
        CHECK(dev().counters().dispatches == 101);
    }
    CHECK(dev().peak_live_buffers() - live_before <= 3);

    auto const cx =
        sy::strided_ref::contiguous(const_cast<float*>(hx.data()), dtype::f32, device_kind::cpu, {n64}, "x");
    std::vector<float> const expected = long_chain<100>(sy::lazy(cx)).to_host<float>();
    double worst = 0;
    for (std::size_t i = 0; i < n; ++i)
        worst = std::max(worst,
                         static_cast<double>(std::fabs(got[i] - expected[i]) / std::max(1.0f, std::fabs(expected[i]))));
    CHECK(worst < 1e-4);  // 100 roundings, which a GPU may contract into FMAs
}

TEST_CASE("webgpu lazy: a chain with more arrays than one shader binds runs in segments", "[webgpu][lazy]") {
    constexpr std::size_t arrays = 40;
    std::size_t const n = 3000;
    auto const n64 = static_cast<std::int64_t>(n);
    std::vector<float> const hx = test_inputs(n);
    std::vector<std::unique_ptr<device_array>> buffers;
    std::vector<sy::strided_ref> ys;
    for (std::size_t k = 0; k < arrays; ++k) {
        buffers.push_back(std::make_unique<device_array>(std::vector<float>(n, static_cast<float>(k + 1))));
        ys.push_back(buffers.back()->ref(dtype::f32, {n64}, "y"));
    }
    device_array const x(hx);
    auto const chain = switchyard_tests::add_all<arrays>(sy::lazy(x.ref(dtype::f32, {n64}, "x")), ys);
    dev().sync();
    dev().reset_counters();
    std::vector<float> const got = chain.to_host<float>();
    std::uint64_t const per_shader = dev().limits().maxStorageBuffersPerShaderStage;
    INFO("storage buffers per shader stage: " << per_shader);
    // A kernel reads 14 arrays where the stage binds 16 buffers or more, else 6.
    std::size_t const per_kernel = per_shader >= 16 ? 14 : 6;
    CHECK(dev().counters().dispatches == (arrays + per_kernel - 1) / per_kernel);
    CHECK(dev().counters().submits == 1);
    for (std::size_t i = 0; i < n; ++i) {
        float expected = hx[i];
        for (std::size_t k = 0; k < arrays; ++k) expected += static_cast<float>(k + 1);
        REQUIRE(got[i] == expected);
    }
}
