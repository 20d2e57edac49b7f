// device_counters: what a shader device (WebGPU, Metal) has done, for tests
// and benchmarks that check batching (two transfers for a chain that uploads
// once and reads back once) and memory use (peak live buffer bytes). Each
// device adds its own figures (webgpu_counters, metal_counters).
#pragma once

#include <cstdint>

namespace switchyard {

struct device_counters {
    std::uint64_t dispatches = 0;  // compute dispatches recorded
    std::uint64_t uploads = 0;     // host -> device copies
    std::uint64_t readbacks = 0;   // device -> host copies
    std::uint64_t live_bytes = 0;  // bytes of buffers handed out by alloc and not yet freed
    std::uint64_t peak_live_bytes = 0;
    std::uint64_t buffers_created = 0;  // real buffer creations (the pool's misses)

    std::uint64_t transfers() const noexcept { return uploads + readbacks; }
};

}  // namespace switchyard
