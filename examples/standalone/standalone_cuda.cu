// switchyard on CUDA without PyTorch: a cuda_device for memory, views over
// device buffers, and the same kind of for_each kernel as on the CPU.
// Build: nvcc -std=c++20 --extended-lambda -I include standalone_cuda.cu
#include <switchyard/device/cuda.h>
#include <switchyard/switchyard.h>

#include <cstdint>
#include <cstdio>
#include <vector>

namespace sy = switchyard;
using cuda_f32 = sy::tag<sy::device_kind::cuda, sy::dtype::f32, sy::contiguity::contiguous>;

int main() {
    std::int64_t const n = 1 << 20;
    std::vector<float> host(n);
    for (std::int64_t i = 0; i < n; ++i) host[i] = static_cast<float>(i % 200) * 0.1f - 10.0f;

    sy::cuda_device dev{0};
    auto* x = static_cast<float*>(dev.alloc(n * sizeof(float)));
    auto* y = static_cast<float*>(dev.alloc(n * sizeof(float)));
    dev.copy_from_host(x, host.data(), n * sizeof(float));

    sy::flat_in<sy::device_kind::cuda, sy::dtype::f32, sy::contiguity::contiguous> const in(
        sy::strided_ref::contiguous(x, sy::dtype::f32, sy::device_kind::cuda, {n}, "x"));
    sy::flat_out<sy::device_kind::cuda, sy::dtype::f32, sy::contiguity::contiguous> const out(
        sy::strided_ref::contiguous(y, sy::dtype::f32, sy::device_kind::cuda, {n}, "y"));
    float const beta = 2.0f, threshold = 20.0f;
    sy::for_each(cuda_f32{}, n, [=] SWITCHYARD_HOST_DEVICE(cuda_f32, std::int64_t i) {
        float const bx = beta * in[i];
        out[i] = sy::select(bx > threshold, in[i], sy::softplus(bx) / beta);
    });

    dev.copy_to_host(host.data(), y, n * sizeof(float));  // waits for the kernel
    dev.free(x);
    dev.free(y);
    std::printf("softplus on %s: y[0] = %g (x = -10), y[100] = %g (x = 0)\n", std::string(dev.name()).c_str(), host[0],
                host[100]);
    return 0;
}
