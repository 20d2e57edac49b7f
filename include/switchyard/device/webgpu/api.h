// The webgpu.h C API, from wgpu-native (the `wgpu` PyPI wheel ships webgpu.h
// and wgpu.h side by side; its releases put them under webgpu/) or Dawn
// (webgpu/webgpu.h), and webgpu_wait: the one place that waits for the GPU.
// wgpu-native does not implement wgpuInstanceWaitAny, so waiting polls the
// device (wgpuDevicePoll) there and processes instance events elsewhere.
#pragma once

#if __has_include(<webgpu/webgpu.h>)
#include <webgpu/webgpu.h>
#else
#include <webgpu.h>
#endif
#if __has_include(<webgpu/wgpu.h>)
#include <webgpu/wgpu.h>
#define SWITCHYARD_WEBGPU_NATIVE 1
#elif __has_include(<wgpu.h>)
#include <wgpu.h>
#define SWITCHYARD_WEBGPU_NATIVE 1
#endif

#include <string>
#include <string_view>

namespace switchyard::detail {

inline WGPUStringView webgpu_string(std::string_view s) noexcept { return WGPUStringView{s.data(), s.size()}; }

inline std::string webgpu_string(WGPUStringView s) {
    if (!s.data) return {};
    if (s.length == WGPU_STRLEN) return std::string(s.data);
    return std::string(s.data, s.length);
}

// Runs the implementation's callbacks until done() is true. Work already
// submitted makes progress meanwhile; wait = true blocks in the driver
// rather than spinning.
template <typename Done>
void webgpu_wait(WGPUInstance instance, WGPUDevice device, Done&& done) {
    while (!done()) {
#if defined(SWITCHYARD_WEBGPU_NATIVE)
        (void)instance;
        if (device) {
            wgpuDevicePoll(device, true, nullptr);
        } else {
            wgpuInstanceProcessEvents(instance);
        }
#else
        (void)device;
        wgpuInstanceProcessEvents(instance);
#endif
    }
}

}  // namespace switchyard::detail
