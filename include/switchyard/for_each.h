// for_each(tag, count, f): calls f(tag, i) once for every i in [0, count) on
// the device the tag names. The one entry point for elementwise kernels:
//
//     for_each(tag, out.size(), [=] SWITCHYARD_HOST_DEVICE (Tag, std::int64_t i) {
//         out[i] = switchyard::max(in[i], 0.0f);
//     });
//
// (Name the tag's type in the functor's parameters: nvcc rejects generic
// `auto` parameters in __host__ __device__ lambdas.)
//
// The tag's device value (device_kind, or any enum with a device_enum
// mapping such as torch::DeviceType) picks the implementation; each lives in
// device/<name>/for_each.h. The functor and the views it captures are the
// same on every device: nothing in an op is device-, contiguity- or
// rank-specific.
//
// CPU: chunks of the range run on the default thread pool (or a pool passed
// explicitly), each as a plain loop that g++ and clang vectorize when the
// views are contiguous and the kernel is branch-free (math.h). A tag that
// holds scheduling::uniform uses a broadcast pool instead of work stealing.
// The first exception a kernel throws is rethrown here.
//
// CUDA (when this file is compiled by nvcc): a kernel with one block per tile
// on the calling thread's current stream and device; see device/cuda/for_each.h.
// The functor must be __host__ __device__ (SWITCHYARD_HOST_DEVICE), which
// needs nvcc's --extended-lambda.
//
// WebGPU (when SWITCHYARD_WITH_WEBGPU is defined, as the switchyard::webgpu
// CMake target does): the functor is traced once with symbolic views and
// scalars and runs as a generated WGSL shader, recorded into the current
// webgpu device's command encoder; see device/webgpu/for_each.h. Kernels
// compute with storage_t<Tag> / compute_t<Tag> (kernel_types.h) and write
// conditions with select, not `if`.
//
// Metal (when SWITCHYARD_WITH_METAL is defined, as the switchyard::metal
// CMake target does): the same tracing, emitted as MSL and recorded into the
// current metal device's command buffer; see device/metal/for_each.h and
// docs/metal.md.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "switchyard/core/enums.h"
#include "switchyard/core/tag.h"
#include "switchyard/core/tag_device.h"
#include "switchyard/device/cpu/for_each.h"
#if defined(__CUDACC__)
#include "switchyard/device/cuda/for_each.h"
#endif
#if defined(SWITCHYARD_WITH_WEBGPU)
#include "switchyard/device/webgpu/for_each.h"
#endif
#if defined(SWITCHYARD_WITH_METAL)
#include "switchyard/device/metal/for_each.h"
#endif

namespace switchyard {

namespace detail {

inline void check_count(std::int64_t count) {
    if (count < 0) throw std::invalid_argument("for_each: count is " + std::to_string(count) + "; it must be >= 0");
}

}  // namespace detail

template <any_tag Tag, typename F>
void for_each(Tag tag, std::int64_t count, F const& f) {
    detail::check_count(count);
    constexpr device_kind device = tag_device_v<Tag>;
    if constexpr (device == device_kind::cpu) {
        detail::cpu_for_each(tag, count, f);
    } else if constexpr (device == device_kind::cuda) {
#if defined(__CUDACC__) && defined(SWITCHYARD_HAS_CUDA_FOR_EACH)
        detail::cuda_for_each(tag, count, f);
#else
        static_assert(device != device_kind::cuda,
                      "for_each: the tag names device cuda, which needs this file compiled by nvcc");
#endif
    } else if constexpr (device == device_kind::webgpu) {
#if defined(SWITCHYARD_HAS_WEBGPU_FOR_EACH)
        detail::webgpu_for_each(tag, count, f);
#else
        static_assert(device != device_kind::webgpu,
                      "for_each: the tag names device webgpu, which needs SWITCHYARD_WITH_WEBGPU defined (link "
                      "the switchyard::webgpu CMake target)");
#endif
    } else {
#if defined(SWITCHYARD_HAS_METAL_FOR_EACH)
        detail::metal_for_each(tag, count, f);
#else
        static_assert(device != device_kind::metal,
                      "for_each: the tag names device metal, which needs SWITCHYARD_WITH_METAL defined (link the "
                      "switchyard::metal CMake target)");
#endif
    }
}

// CPU only: runs on `pool` instead of the default pool (to size or isolate
// the threads an op uses).
template <scheduling S, any_tag Tag, typename F>
void for_each(thread_pool<S>& pool, Tag tag, std::int64_t count, F const& f) {
    static_assert(tag_device_v<Tag> == device_kind::cpu,
                  "for_each(pool, tag, ...): a thread pool runs CPU work, but the tag names another device");
    detail::check_count(count);
    detail::cpu_for_each_on(pool, tag, count, f);
}

}  // namespace switchyard
