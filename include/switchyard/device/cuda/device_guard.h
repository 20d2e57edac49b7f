// cuda_device_guard: makes a CUDA device current for a scope and restores the
// caller's device afterwards (also when an exception leaves the scope); and
// detail::require_current_device, the runners' check that the operands'
// device is the current one.
#pragma once

#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

#include "switchyard/device/cuda/error.h"

namespace switchyard {

class cuda_device_guard {
public:
    explicit cuda_device_guard(int ordinal) {
        cuda_check(cudaGetDevice(&previous_), "cudaGetDevice");
        if (ordinal != previous_)
            cuda_check(cudaSetDevice(ordinal), "cudaSetDevice", "cuda:" + std::to_string(ordinal));
    }
    ~cuda_device_guard() {
        int current = previous_;
        if (cudaGetDevice(&current) == cudaSuccess && current != previous_) cudaSetDevice(previous_);
    }
    cuda_device_guard(cuda_device_guard const&) = delete;
    cuda_device_guard& operator=(cuda_device_guard const&) = delete;

    int previous() const noexcept { return previous_; }

private:
    int previous_ = 0;
};

namespace detail {

// The current device, which must be the operands' (`op` names the call).
inline int require_current_device(char const* op, int operands_device) {
    int device = 0;
    cuda_check(cudaGetDevice(&device), "cudaGetDevice", op);
    if (device != operands_device)
        throw std::invalid_argument(std::string(op) + ": the operands are on cuda:" + std::to_string(operands_device) +
                                    " but the current device is cuda:" + std::to_string(device) +
                                    "; make their device current (cudaSetDevice, or a device guard)");
    return device;
}

}  // namespace detail

}  // namespace switchyard
