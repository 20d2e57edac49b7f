// webgpu_counters: what a WebGPU device has done (device/counters.h), and
// its queue submissions: one per sync for batched work.
#pragma once

#include <cstdint>

#include "switchyard/device/counters.h"

namespace switchyard {

struct webgpu_counters : device_counters {
    std::uint64_t submits = 0;  // queue submissions
};

}  // namespace switchyard
