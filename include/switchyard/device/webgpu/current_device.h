// The WebGPU device that for_each and lazy chains use on this thread
// (device/current_device.h): the one a webgpu_device_guard names, else a
// process-wide default device created on first use (the first adapter).
//
//     switchyard::webgpu_device dev;
//     switchyard::webgpu_device_guard use(dev);   // for_each on webgpu runs on dev until `use` ends
#pragma once

#include "switchyard/device/current_device.h"
#include "switchyard/device/webgpu.h"

namespace switchyard {

using webgpu_device_guard = device_guard<webgpu_device>;

inline webgpu_device& default_webgpu_device() { return default_device<webgpu_device>(); }
inline webgpu_device& current_webgpu_device() { return current_device<webgpu_device>(); }

}  // namespace switchyard
