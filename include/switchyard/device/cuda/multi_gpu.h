// for_each over several CUDA devices (the specification's PrivateUse1
// pattern): [0, count) is cut into one contiguous slice per listed device.
//
//     int const gpus[] = {0, 1};
//     for_each_on_cuda_devices(gpus, tag, n, kernel);   // returns at once
//
// Every slice is launched without a host wait. Each device records an event
// after its slice, and the caller's current stream (on the caller's current
// device) waits for all of them, so work queued there afterwards sees every
// slice done; nothing blocks the host. The caller's current device is
// restored. The functor's memory must be reachable from every listed device
// (managed memory, or peer access enabled by the caller). Slices run on the
// legacy default stream of devices other than the caller's; the caller's own
// device uses the current stream. Listing a device twice is allowed (its
// slices run one after the other).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>

#include "switchyard/device/cuda/current_stream.h"
#include "switchyard/device/cuda/device_guard.h"
#include "switchyard/device/cuda/error.h"
#include "switchyard/device/cuda/for_each.h"

namespace switchyard {

template <any_tag Tag, typename F>
void for_each_on_cuda_devices(std::span<int const> devices, Tag tag, std::int64_t count, F const& f) {
    if (count < 0)
        throw std::invalid_argument("for_each_on_cuda_devices: count is " + std::to_string(count) +
                                    "; it must be >= 0");
    if (devices.empty()) throw std::invalid_argument("for_each_on_cuda_devices: the device list is empty");
    int visible = 0;
    cuda_check(cudaGetDeviceCount(&visible), "cudaGetDeviceCount");
    for (int d : devices)
        if (d < 0 || d >= visible)
            throw std::invalid_argument("for_each_on_cuda_devices: device " + std::to_string(d) +
                                        " is not one of the " + std::to_string(visible) + " visible CUDA device(s)");
    if (count == 0) return;

    int caller = 0;
    cuda_check(cudaGetDevice(&caller), "cudaGetDevice");
    auto const caller_stream = static_cast<cudaStream_t>(cuda_current_stream_handle());
    cuda_device_guard const restore(caller);
    auto const parts = static_cast<std::int64_t>(devices.size());
    // Parts start on multiples of 16 indices, so each device's part starts
    // on the same alignment as the whole.
    auto const split = [&](std::int64_t q) { return q == parts ? count : count * q / parts / 16 * 16; };
    for (std::int64_t p = 0; p < parts; ++p) {
        std::int64_t const begin = split(p), end = split(p + 1);
        if (begin == end) continue;
        int const d = devices[static_cast<std::size_t>(p)];
        cuda_check(cudaSetDevice(d), "cudaSetDevice", "cuda:" + std::to_string(d));
        cudaStream_t const stream = d == caller ? caller_stream : nullptr;
        detail::cuda_for_each_launch(tag, begin, end - begin, f, d, stream);
        if (d == caller) continue;  // same stream as the caller's: already ordered
        cudaEvent_t done = nullptr;
        cuda_check(cudaEventCreateWithFlags(&done, cudaEventDisableTiming), "cudaEventCreateWithFlags");
        cuda_check(cudaEventRecord(done, stream), "cudaEventRecord", "cuda:" + std::to_string(d));
        cuda_check(cudaSetDevice(caller), "cudaSetDevice");
        cuda_check(cudaStreamWaitEvent(caller_stream, done, 0), "cudaStreamWaitEvent");
        cuda_check(cudaEventDestroy(done), "cudaEventDestroy");  // released once it has completed
    }
}

}  // namespace switchyard
