// switchyard on CUDA without PyTorch: a cuda_device for memory, and the same
// softplus op as on the CPU (softplus_op.h, whose table nvcc extends to CUDA)
// over device buffers, plus a broadcast operand.
// Build: nvcc -std=c++20 --extended-lambda -I include standalone_cuda.cu
#include <switchyard/device/cuda.h>
#include <switchyard/switchyard.h>

#include "softplus_op.h"

#include <cstdint>
#include <cstdio>
#include <vector>

namespace sy = switchyard;

int main() {
    std::int64_t const rows = 1024, cols = 1024, n = rows * cols;
    std::vector<float> host(n);
    for (std::int64_t i = 0; i < n; ++i) host[i] = static_cast<float>(i % 200) * 0.1f - 10.0f;

    sy::cuda_device dev{0};
    void* x = dev.alloc(n * sizeof(float));
    void* y = dev.alloc(n * sizeof(float));
    void* bias = dev.alloc(cols * sizeof(float));
    dev.copy_from_host(x, host.data(), n * sizeof(float));
    auto const xr = sy::strided_ref::contiguous(x, sy::dtype::f32, sy::device_kind::cuda, {rows, cols}, "x");
    auto const yr = sy::strided_ref::contiguous(y, sy::dtype::f32, sy::device_kind::cuda, {rows, cols}, "y");
    softplus_example::softplus(xr, yr, 2.0);              // the CPU's op and table, on the current stream
    dev.copy_to_host(host.data(), y, n * sizeof(float));  // waits for the kernel
    std::printf("softplus on %s: y[0] = %g (x = -10), y[100] = %g (x = 0)\n", std::string(dev.name()).c_str(), host[0],
                host[100]);

    // y = y + bias, the bias [cols] broadcast over the rows.
    std::vector<float> b(cols, 0.5f);
    dev.copy_from_host(bias, b.data(), cols * sizeof(float));
    auto const br = sy::strided_ref::contiguous(bias, sy::dtype::f32, sy::device_kind::cuda, {cols}, "bias");
    using cuda_f32 = sy::tag<sy::device_kind::cuda, sy::dtype::f32>;
    sy::transform(
        cuda_f32{}, yr, [] SWITCHYARD_HOST_DEVICE(float v, float c) { return v + c; }, yr, br);
    dev.copy_to_host(host.data(), y, n * sizeof(float));
    std::printf("plus a broadcast bias: y[100] = %g\n", host[100]);
    dev.free(x);
    dev.free(y);
    dev.free(bias);
    return 0;
}
