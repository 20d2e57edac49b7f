// One C++ kernel on the CPU and on WebGPU, without PyTorch: softplus_op.h's
// impl computes with storage_t<Tag> / compute_t<Tag>, which are plain floats
// on the CPU and symbolic values on WebGPU, where for_each traces it into a
// WGSL shader. Then a lazy chain, fused into one shader and submitted once.
// Build: link the switchyard::webgpu CMake target (defines SWITCHYARD_WITH_WEBGPU).
#include <switchyard/switchyard.h>

#include "softplus_op.h"

#include <cstdint>
#include <cstdio>
#include <vector>

namespace sy = switchyard;

int main() {
    std::int64_t const n = 1000;
    std::vector<float> x(n), on_cpu(n), on_gpu(n);
    for (std::int64_t i = 0; i < n; ++i) x[i] = static_cast<float>(i) * 0.02f - 10.0f;
    softplus_example::softplus(
        sy::strided_ref::contiguous(x.data(), sy::dtype::f32, sy::device_kind::cpu, {n}, "x"),
        sy::strided_ref::contiguous(on_cpu.data(), sy::dtype::f32, sy::device_kind::cpu, {n}, "y"), 2.0);

    sy::webgpu_device& gpu = sy::current_webgpu_device();
    void* xb = gpu.alloc(n * sizeof(float));
    void* yb = gpu.alloc(n * sizeof(float));
    gpu.copy_from_host(xb, x.data(), n * sizeof(float));
    auto const xr = sy::strided_ref::contiguous(xb, sy::dtype::f32, sy::device_kind::webgpu, {n}, "x");
    auto const yr = sy::strided_ref::contiguous(yb, sy::dtype::f32, sy::device_kind::webgpu, {n}, "y");
    softplus_example::softplus(xr, yr, 2.0);                 // the same table; recorded, not yet submitted
    gpu.copy_to_host(on_gpu.data(), yb, n * sizeof(float));  // one submit, then the readback
    std::printf("softplus on %s: cpu %.6f, webgpu %.6f at x = %.2f\n", gpu.adapter_name().c_str(), on_cpu[500],
                on_gpu[500], x[500]);

    // relu, * 2, + y: one fused shader, one submit, one readback.
    gpu.reset_counters();
    std::vector<float> const chained = sy::lazy(xr).relu().mul(2.0).add(yr).to_host<float>();
    auto const c = gpu.counters();
    std::printf("lazy chain: %g at x = %.2f; %llu dispatch, %llu submit\n", chained[900], x[900],
                static_cast<unsigned long long>(c.dispatches), static_cast<unsigned long long>(c.submits));
    gpu.free(xb);
    gpu.free(yb);
    return 0;
}
