// require_current_device: the CUDA runners' check that the operands' device
// is the current one, since kernels launch on the current device's stream.
#pragma once

#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

#include "switchyard/device/cuda/error.h"

namespace switchyard::detail {

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

}  // namespace switchyard::detail
