// webgpu_counters: what a WebGPU device has done, for tests and benchmarks
// that check batching (one submit per sync, two transfers for a chain that
// uploads once and reads back once) and memory use (peak live buffer bytes).
#pragma once

#include <cstdint>

namespace switchyard {

struct webgpu_counters {
    std::uint64_t submits = 0;     // queue submissions
    std::uint64_t dispatches = 0;  // compute dispatches recorded
    std::uint64_t uploads = 0;     // host -> device copies
    std::uint64_t readbacks = 0;   // device -> host copies
    std::uint64_t live_bytes = 0;  // bytes of buffers handed out by alloc and not yet freed
    std::uint64_t peak_live_bytes = 0;
    std::uint64_t buffers_created = 0;  // real buffer creations (the pool's misses)

    std::uint64_t transfers() const noexcept { return uploads + readbacks; }
};

}  // namespace switchyard
