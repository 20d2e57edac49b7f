// device_array: row-major memory on a device, owned (freed with the array),
// shaped like a strided_ref. What transform's hoisted inputs and lazy
// chains' results live in.
//
//     auto a = sy::make_device_array<sy::device_kind::cpu>(like);   // like's shape, dtype, device
//     sy::transform(tag, a.ref(), f, x);
//     std::vector<float> h = a.to_host<float>();
//
// The device is the one `like` names: the CPU; CUDA device
// like.device_index with allocations ordered on the calling thread's current
// stream, from switchyard's scratch pool (device/cuda/scratch_pool.h; nvcc
// builds); the thread's current WebGPU device
// (SWITCHYARD_WITH_WEBGPU builds). On CUDA the memory is freed on the stream
// that was current when the array was made: work on another stream that
// uses it must finish first. The device kind is a template argument, so a
// translation unit compiled without nvcc never instantiates the CUDA branch.
#pragma once

#include <cstddef>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "switchyard/core/dtype.h"
#include "switchyard/core/enums.h"
#include "switchyard/device/any_device.h"
#include "switchyard/device/buffer.h"
#include "switchyard/device/cpu.h"
#include "switchyard/view/strided_ref.h"
#if defined(__CUDACC__)
#include "switchyard/device/cuda.h"
#include "switchyard/device/cuda/current_stream.h"
#include "switchyard/device/cuda/scratch_pool.h"
#endif
#if defined(SWITCHYARD_WITH_WEBGPU)
#include "switchyard/device/webgpu/current_device.h"
#endif
#if defined(SWITCHYARD_WITH_METAL)
#include "switchyard/device/metal/current_device.h"
#endif

namespace switchyard {

// The device object for memory on device kind D, index `index`.
template <device_kind D>
any_device device_for(std::int32_t index) {
    if constexpr (D == device_kind::cpu) {
        (void)index;
        return cpu_device{};
    } else if constexpr (D == device_kind::cuda) {
#if defined(__CUDACC__)
        cuda_device device(index, static_cast<cudaStream_t>(cuda_current_stream_handle()));
        device.set_pool(cuda_scratch_pool(index));
        return device;
#else
        static_assert(D != device_kind::cuda, "device memory on cuda needs this file compiled by nvcc");
#endif
    } else if constexpr (D == device_kind::webgpu) {
#if defined(SWITCHYARD_WITH_WEBGPU)
        (void)index;
        return device_ref<webgpu_device>(current_webgpu_device());
#else
        static_assert(D != device_kind::webgpu,
                      "device memory on webgpu needs SWITCHYARD_WITH_WEBGPU (the switchyard::webgpu CMake target)");
#endif
    } else if constexpr (D == device_kind::metal) {
#if defined(SWITCHYARD_WITH_METAL)
        (void)index;
        return device_ref<metal_device>(current_metal_device());
#else
        static_assert(D != device_kind::metal,
                      "device memory on metal needs SWITCHYARD_WITH_METAL (the switchyard::metal CMake target)");
#endif
    } else {
        static_assert(D == device_kind::cpu, "device memory: this device is not implemented in this version");
    }
}

class device_array {
public:
    device_array(any_device device, strided_ref const& like, char const* name)
        : memory_(std::move(device), bytes_of(like)) {
        ref_ = strided_ref::contiguous_like(memory_.data(), like, name);
    }

    // The array: `like`'s sizes, dtype, device and index, row-major strides.
    strided_ref const& ref() const noexcept { return ref_; }

    // Copies the values to `host`, which holds exactly numel() Ts of the
    // array's dtype (waits for the device).
    template <typename T>
    void to_host(std::span<T> host) const {
        if (dtype_of_v<T> != ref_.type || host.size_bytes() != memory_.size_bytes())
            throw std::invalid_argument(std::string(ref_.name) + ": to_host into " + std::to_string(host.size()) + " " +
                                        std::string(to_string(dtype_of_v<T>)) + " elements, but the array has " +
                                        std::to_string(ref_.numel()) + " " + std::string(to_string(ref_.type)));
        memory_.copy_to_host(host.data(), host.size_bytes());
    }
    template <typename T>
    std::vector<T> to_host() const {
        std::vector<T> host(static_cast<std::size_t>(ref_.numel()));
        to_host(std::span<T>(host));
        return host;
    }

private:
    static std::size_t bytes_of(strided_ref const& like) {
        std::size_t bytes = 0;
        if (__builtin_mul_overflow(static_cast<std::size_t>(like.numel()), dtype_size(like.type), &bytes))
            throw std::invalid_argument(std::string(like.name) + ": " + std::to_string(like.numel()) +
                                        " elements do not fit in memory");
        return bytes;
    }

    // Mutable: a device handle's calls are not const, and reading the values
    // back does not change them.
    mutable buffer<any_device> memory_;
    strided_ref ref_;
};

// An array shaped like `like` (which is on device kind D), named `name` in errors.
template <device_kind D>
device_array make_device_array(strided_ref const& like, char const* name) {
    return device_array(device_for<D>(like.device_index), like, name);
}

}  // namespace switchyard
