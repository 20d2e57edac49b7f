// cuda_device_guard: makes a CUDA device current for a scope and restores the
// caller's device afterwards (also when an exception leaves the scope).
#pragma once

#include <cuda_runtime.h>

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

}  // namespace switchyard
