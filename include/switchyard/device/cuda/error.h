// CUDA runtime errors as exceptions: cuda_check(status, "cudaMallocAsync")
// throws device_error naming the call, the error's name and CUDA's message.
#pragma once

#include <cuda_runtime.h>

#include <string>

#include "switchyard/device/device.h"

namespace switchyard {

// A CUDA call failed; out-of-memory is reported as this type too.
class cuda_error : public device_error {
public:
    cuda_error(std::string const& message, cudaError_t code) : device_error(message), code_(code) {}
    cudaError_t code() const noexcept { return code_; }

private:
    cudaError_t code_;
};

namespace detail {

[[noreturn]] inline void throw_cuda_error(cudaError_t status, char const* call, std::string const& context) {
    std::string message = std::string(call) + " failed";
    if (!context.empty()) message += " (" + context + ")";
    message += ": " + std::string(cudaGetErrorName(status)) + ": " + cudaGetErrorString(status);
    throw cuda_error(message, status);
}

}  // namespace detail

// Throws cuda_error unless status is cudaSuccess. `context` says what the call
// was for (device, sizes) and is added to the message.
inline void cuda_check(cudaError_t status, char const* call, std::string const& context = {}) {
    if (status != cudaSuccess) detail::throw_cuda_error(status, call, context);
}

}  // namespace switchyard
