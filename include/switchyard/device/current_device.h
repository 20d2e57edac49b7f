// current_device<Device>(): the instance of a device class (webgpu_device,
// metal_device) that for_each and the other entry points use on this
// thread: the one a device_guard<Device> names, else a process-wide default
// instance created on first use with Device's default constructor. Tags name
// the device kind, not an instance; this is how an instance is chosen, as
// CUDA's current device is.
//
//     switchyard::webgpu_device dev;
//     switchyard::webgpu_device_guard use(dev);   // device_guard<webgpu_device>: dev until `use` ends
#pragma once

#include "switchyard/core/config.h"

namespace switchyard {

namespace detail {
template <typename Device>
SWITCHYARD_PROCESS_STATE inline Device*& device_override() noexcept {
    thread_local Device* device = nullptr;
    return device;
}
}  // namespace detail

// The process-wide default instance (never destroyed: buffers and pipelines
// may outlive static destruction order).
template <typename Device>
SWITCHYARD_PROCESS_STATE inline Device& default_device() {
    static Device* const device = new Device();
    return *device;
}

template <typename Device>
Device& current_device() {
    Device* d = detail::device_override<Device>();
    return d ? *d : default_device<Device>();
}

// Makes `device` this thread's current instance of its class while the guard lives.
template <typename Device>
class device_guard {
public:
    explicit device_guard(Device& device) : previous_(detail::device_override<Device>()) {
        detail::device_override<Device>() = &device;
    }
    ~device_guard() { detail::device_override<Device>() = previous_; }
    device_guard(device_guard const&) = delete;
    device_guard& operator=(device_guard const&) = delete;

private:
    Device* previous_;
};

}  // namespace switchyard
