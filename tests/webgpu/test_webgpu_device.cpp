// webgpu_device on whatever adapter the machine has (lavapipe in CI): buffers,
// transfers, the size-class pool, dispatches over more than 65535 workgroups,
// batching counters and errors.
#include <catch2/catch.hpp>

#include <switchyard/device/webgpu.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

namespace sy = switchyard;

namespace {

sy::webgpu_device& gpu() {
    static sy::webgpu_device dev;
    return dev;
}

// y[i] = 2 x[i] + 1 for i < n (n in a uniform); workgroups fold (x, y).
constexpr char const* affine_wgsl = R"(
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;
struct params { n: u32, stride_x: u32 }
@group(0) @binding(2) var<uniform> p: params;
@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) lane: u32) {
    let i = (wg.y * p.stride_x + wg.x) * 256u + lane;
    if (i < p.n) { y[i] = 2.0 * x[i] + 1.0; }
}
)";

// {1, 2, 3, 4} through a 16-byte buffer of dev and back.
std::array<float, 4> round_trip(sy::webgpu_device& dev, void* buffer) {
    float const v[4] = {1, 2, 3, 4};
    std::array<float, 4> w{};
    dev.copy_from_host(buffer, v, 16);
    dev.copy_to_host(w.data(), buffer, 16);
    return w;
}

}  // namespace

TEST_CASE("webgpu: device round trip and pool reuse", "[webgpu]") {
    auto& dev = gpu();
    INFO("adapter: " << dev.adapter_name());
    CHECK(dev.name() == "webgpu");
    std::vector<std::uint8_t> host(1001);
    std::iota(host.begin(), host.end(), std::uint8_t{3});
    void* buf = dev.alloc(host.size());
    REQUIRE(buf != nullptr);
    dev.copy_from_host(buf, host.data(), host.size());  // 1001: not a multiple of 4
    std::vector<std::uint8_t> back(host.size());
    dev.copy_to_host(back.data(), buf, back.size());
    CHECK(back == host);
    dev.free(buf);

    auto const created = dev.counters().buffers_created;
    void* again = dev.alloc(900);  // same size class (1024): reused
    CHECK(dev.counters().buffers_created == created);
    dev.free(again);
    CHECK(dev.alloc(0) == nullptr);
    dev.free(nullptr);

    // Releasing the cache: the next allocation of that class creates a buffer,
    // which works like the first.
    CHECK(dev.cached_buffer_bytes() >= 1024);
    dev.release_cached_buffers();
    CHECK(dev.cached_buffer_bytes() == 0);
    void* fresh = dev.alloc(900);
    CHECK(dev.counters().buffers_created == created + 1);
    dev.copy_from_host(fresh, host.data(), 900);
    std::vector<std::uint8_t> fresh_back(900);
    dev.copy_to_host(fresh_back.data(), fresh, 900);
    CHECK(std::equal(fresh_back.begin(), fresh_back.end(), host.begin()));
    dev.free(fresh);
}

TEST_CASE("webgpu: a dispatch beyond 65535 workgroups, batched into one submit", "[webgpu]") {
    auto& dev = gpu();
    std::uint32_t const n = 65535u * 256u + 1000u;  // needs a second row of workgroups
    std::vector<float> x(n);
    for (std::uint32_t i = 0; i < n; ++i) x[i] = static_cast<float>(i % 1000) - 500.0f;
    void* xb = dev.alloc(n * 4);
    void* yb = dev.alloc(n * 4);
    dev.sync();
    dev.reset_counters();
    dev.copy_from_host(xb, x.data(), n * 4);
    auto pipeline = dev.create_compute_pipeline(affine_wgsl);
    std::uint64_t const groups = (n + 255) / 256;
    std::uint32_t const max_x = dev.limits().maxComputeWorkgroupsPerDimension;
    std::uint32_t params[2] = {n, static_cast<std::uint32_t>(groups < max_x ? groups : max_x)};
    sy::webgpu_binding const bindings[] = {{xb, n * 4ull}, {yb, n * 4ull}};
    dev.dispatch(pipeline, bindings, std::as_bytes(std::span(params)), groups);
    CHECK(dev.counters().submits == 0);  // recorded, not submitted
    std::vector<float> y(n);
    dev.copy_to_host(y.data(), yb, n * 4);
    auto const c = dev.counters();
    CHECK(c.submits == 1);
    CHECK(c.dispatches == 1);
    CHECK(c.transfers() == 2);
    std::uint32_t bad = 0;
    for (std::uint32_t i = 0; i < n; ++i) bad += y[i] != 2.0f * x[i] + 1.0f;
    CHECK(bad == 0);
    dev.free(xb);
    dev.free(yb);
}

TEST_CASE("webgpu: errors name what was wrong", "[webgpu]") {
    auto& dev = gpu();
    auto const max = dev.limits().maxBufferSize;
    CHECK_THROWS_WITH(dev.alloc(max + 1), Catch::Contains("maxBufferSize"));
    CHECK_THROWS_WITH(dev.create_compute_pipeline("fn main( {"), Catch::Contains("webgpu: create_compute_pipeline"));
    sy::webgpu_binding const huge[] = {{nullptr, dev.limits().maxStorageBufferBindingSize + 4}};
    CHECK_THROWS_WITH(dev.bind_check(huge), Catch::Contains("maxStorageBufferBindingSize"));
    int not_ours = 0;
    CHECK_THROWS_WITH(dev.free(&not_ours), Catch::Contains("did not allocate"));
    // The device still works afterwards.
    void* b = dev.alloc(16);
    CHECK(round_trip(dev, b)[3] == 4.0f);
    dev.free(b);
}

TEST_CASE("webgpu: a moved-from device refuses every call instead of crashing", "[webgpu]") {
    sy::webgpu_device from;
    void* b = from.alloc(16);
    sy::webgpu_device to(std::move(from));
    CHECK(to.owns(b));
    CHECK_FALSE(from.owns(b));  // NOLINT(bugprone-use-after-move): the point of the test
    CHECK_THROWS_WITH(from.alloc(16), Catch::Contains("moved from"));
    CHECK_THROWS_WITH(from.free(b), Catch::Contains("moved from"));
    CHECK_THROWS_WITH(from.sync(), Catch::Contains("moved from"));
    CHECK_THROWS_WITH(from.limits(), Catch::Contains("moved from"));
    CHECK_THROWS_WITH(from.counters(), Catch::Contains("moved from"));
    CHECK_THROWS_WITH(from.release_cached_buffers(), Catch::Contains("moved from"));
    CHECK(round_trip(to, b)[2] == 3.0f);
    to.free(b);
    from = std::move(to);  // and back: the moved-to object works again
    CHECK(from.live_buffers() == 0);
}

TEST_CASE("webgpu: size-class pool", "[webgpu]") {
    using pool = sy::detail::size_class_pool<int*>;
    std::uint64_t const largest = 1ull << 30;
    CHECK(pool::capacity_for(1, largest) == 256);
    CHECK(pool::capacity_for(256, largest) == 256);
    CHECK(pool::capacity_for(257, largest) == 512);
    CHECK(pool::capacity_for(1001, largest) == 1024);
    // Above the largest pooled class: the size rounded up to 4 bytes, unpooled.
    CHECK(pool::capacity_for(largest + 1, largest) == largest + 4);
    pool p;
    int a = 0, b = 0;
    CHECK(p.take(1024) == nullptr);
    CHECK(p.give(&a, 1024));
    CHECK(p.give(&b, 1024));
    CHECK_FALSE(p.give(&a, largest + 4));  // not a class: the caller destroys it
    CHECK(p.free_bytes() == 2048);
    CHECK(p.take(512) == nullptr);
    int* first = p.take(1024);
    int* second = p.take(1024);
    CHECK(((first == &a && second == &b) || (first == &b && second == &a)));
    CHECK(p.take(1024) == nullptr);
    CHECK(p.free_bytes() == 0);
    p.give(&a, 256);
    int destroyed = 0;
    p.clear([&](int*) { ++destroyed; });
    CHECK(destroyed == 1);
    CHECK(p.free_bytes() == 0);
}
