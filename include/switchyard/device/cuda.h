// cuda_device: one CUDA GPU and one stream, implementing the device contract
// (device.h). Works without PyTorch:
//
//     cuda_device dev{0};                       // cuda:0, legacy default stream
//     auto* p = static_cast<float*>(dev.alloc(n * sizeof(float)));
//     dev.copy_from_host(p, host, n * sizeof(float));
//     for_each(tag<device_kind::cuda>{}, n, [=] __host__ __device__ (auto, std::int64_t i) { p[i] *= 2; });
//     dev.copy_to_host(host, p, n * sizeof(float));   // waits for the kernel
//     dev.free(p);
//
// Memory is stream-ordered (cudaMallocAsync / cudaFreeAsync on the device's
// stream, so a free is safe right after the last kernel that uses the memory
// was queued on that stream). Copies are synchronous: they return when the
// data has arrived, so host buffers can be reused at once. sync() waits for
// the stream. Every call makes the device current for its duration and then
// restores the caller's device. Errors throw cuda_error (a device_error)
// naming the call, the device and CUDA's message; running out of memory says
// how much was asked for and how much was free.
//
// for_each launches on the calling thread's current stream
// (cuda/current_stream.h), not on a device object's: use
// `cuda_stream_scope scope(dev.stream());` to run kernels on dev's stream.
// Both default to the legacy default stream.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <string>
#include <string_view>

#include "switchyard/device/cuda/current_stream.h"
#include "switchyard/device/cuda/device_guard.h"
#include "switchyard/device/cuda/error.h"
#include "switchyard/device/device.h"

namespace switchyard {

class cuda_device {
public:
    explicit cuda_device(int ordinal = 0, cudaStream_t stream = nullptr) : ordinal_(ordinal), stream_(stream) {
        int count = 0;
        cuda_check(cudaGetDeviceCount(&count), "cudaGetDeviceCount");
        if (ordinal < 0 || ordinal >= count)
            throw device_error("cuda_device: ordinal " + std::to_string(ordinal) + " is out of range; " +
                               std::to_string(count) + " CUDA device(s) are visible");
        name_ = "cuda:" + std::to_string(ordinal);
    }

    // nullptr for 0 bytes.
    void* alloc(std::size_t bytes) {
        if (bytes == 0) return nullptr;
        cuda_device_guard const guard(ordinal_);
        void* p = nullptr;
        cudaError_t const status =
            pool_ ? cudaMallocFromPoolAsync(&p, bytes, pool_, stream_) : cudaMallocAsync(&p, bytes, stream_);
        if (status == cudaErrorMemoryAllocation) {
            cudaGetLastError();  // reset the recorded last error; the device stays usable
            std::size_t free_bytes = 0, total_bytes = 0;
            cudaMemGetInfo(&free_bytes, &total_bytes);
            throw cuda_error(name_ + ": out of memory allocating " + std::to_string(bytes) + " bytes (" +
                                 std::to_string(free_bytes) + " of " + std::to_string(total_bytes) + " bytes free)",
                             status);
        }
        cuda_check(status, "cudaMallocAsync", name_ + ", " + std::to_string(bytes) + " bytes");
        return p;
    }
    void free(void* p) {
        if (p == nullptr) return;
        cuda_device_guard const guard(ordinal_);
        cuda_check(cudaFreeAsync(p, stream_), "cudaFreeAsync", name_);
    }
    void copy_from_host(void* device_dst, void const* host_src, std::size_t bytes) {
        copy(device_dst, host_src, bytes, cudaMemcpyHostToDevice, "copy_from_host");
    }
    void copy_to_host(void* host_dst, void const* device_src, std::size_t bytes) {
        copy(host_dst, device_src, bytes, cudaMemcpyDeviceToHost, "copy_to_host");
    }
    void sync() {
        cuda_device_guard const guard(ordinal_);
        cuda_check(cudaStreamSynchronize(stream_), "cudaStreamSynchronize", name_);
    }
    std::string_view name() const noexcept { return name_; }

    int ordinal() const noexcept { return ordinal_; }
    cudaStream_t stream() const noexcept { return stream_; }
    void set_stream(cudaStream_t stream) noexcept { stream_ = stream; }
    // Allocations from `pool` (a cudaMemPool_t of this device) instead of the
    // device's current pool; nullptr goes back to that.
    void set_pool(cudaMemPool_t pool) noexcept { pool_ = pool; }

private:
    void copy(void* dst, void const* src, std::size_t bytes, cudaMemcpyKind kind, char const* what) {
        if (bytes == 0) return;
        cuda_device_guard const guard(ordinal_);
        std::string const context = name_ + " " + what + ", " + std::to_string(bytes) + " bytes";
        cuda_check(cudaMemcpyAsync(dst, src, bytes, kind, stream_), "cudaMemcpyAsync", context);
        cuda_check(cudaStreamSynchronize(stream_), "cudaStreamSynchronize", context);
    }

    int ordinal_;
    cudaStream_t stream_;
    cudaMemPool_t pool_ = nullptr;
    std::string name_;
};

static_assert(device<cuda_device>);

}  // namespace switchyard
