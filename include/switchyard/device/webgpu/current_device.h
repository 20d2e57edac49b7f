// The WebGPU device that for_each and lazy chains use on this thread: the one
// a webgpu_device_guard names, else a process-wide default device created on
// first use (the first adapter). Tags name the device kind, not an instance;
// this is how an instance is chosen, as CUDA's current device is.
//
//     switchyard::webgpu_device dev;
//     switchyard::webgpu_device_guard use(dev);   // for_each on webgpu runs on dev until `use` ends
#pragma once

#include "switchyard/core/config.h"
#include "switchyard/device/webgpu.h"

namespace switchyard {

namespace detail {
SWITCHYARD_PROCESS_STATE inline webgpu_device*& webgpu_device_override() noexcept {
    thread_local webgpu_device* device = nullptr;
    return device;
}
}  // namespace detail

// The process-wide default device (never destroyed: buffers and pipelines
// may outlive static destruction order).
SWITCHYARD_PROCESS_STATE inline webgpu_device& default_webgpu_device() {
    static webgpu_device* const device = new webgpu_device();
    return *device;
}

inline webgpu_device& current_webgpu_device() {
    webgpu_device* d = detail::webgpu_device_override();
    return d ? *d : default_webgpu_device();
}

// Makes `device` this thread's current WebGPU device while the guard lives.
class webgpu_device_guard {
public:
    explicit webgpu_device_guard(webgpu_device& device) : previous_(detail::webgpu_device_override()) {
        detail::webgpu_device_override() = &device;
    }
    ~webgpu_device_guard() { detail::webgpu_device_override() = previous_; }
    webgpu_device_guard(webgpu_device_guard const&) = delete;
    webgpu_device_guard& operator=(webgpu_device_guard const&) = delete;

private:
    webgpu_device* previous_;
};

}  // namespace switchyard
