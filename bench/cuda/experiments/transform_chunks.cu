// Experiment behind docs/benchmarks.md's choice of 16-byte chunks per thread
// in transform's vector kernel (cuda_vector_chunks): softplus (as the
// example computes it), relu and x * sigmoid(g) with g per row and per
// column, over [65536, 4096] through sy::transform, as % of the same run's
// device-to-device copy of x's bytes. Build it against trees that differ in
// cuda_vector_chunks to compare them in one call:
//   nvcc -std=c++20 -O3 --extended-lambda --expt-relaxed-constexpr -arch=sm_90 -Iinclude \
//       bench/cuda/experiments/transform_chunks.cu -o /tmp/chunks && /tmp/chunks
#include <switchyard/switchyard.h>
#include <switchyard/transform.h>

#include <cstdio>

#include "median_ms.h"

namespace sy = switchyard;

template <sy::dtype D>
void run(char const* label) {
    using Tag = sy::tag<sy::device_kind::cuda, D>;
    using S = sy::storage_t<Tag>;
    using C = sy::compute_t<Tag>;
    std::int64_t const rows = 65536, cols = 4096, n = rows * cols;
    sy::cuda_device dev{0};
    void* x = dev.alloc(n * sizeof(S));
    void* out = dev.alloc(n * sizeof(S));
    void* g = dev.alloc(rows * sizeof(S));
    cudaMemset(x, 0, n * sizeof(S));
    cudaMemset(g, 0, rows * sizeof(S));
    float const copy = median_ms([&] { cudaMemcpyAsync(out, x, n * sizeof(S), cudaMemcpyDeviceToDevice); });
    auto const xr = sy::strided_ref::contiguous(x, D, sy::device_kind::cuda, {rows, cols}, "x");
    auto const o = sy::strided_ref::contiguous(out, D, sy::device_kind::cuda, {rows, cols}, "out");
    auto const per_column = sy::strided_ref::contiguous(g, D, sy::device_kind::cuda, {cols}, "g");
    auto const per_row = sy::strided_ref::contiguous(g, D, sy::device_kind::cuda, {rows, 1}, "g");
    auto const softplus = [] SWITCHYARD_HOST_DEVICE(C v) { return sy::select(v > C(20), v, sy::softplus_to<S>(v)); };
    auto const relu = [] SWITCHYARD_HOST_DEVICE(C v) { return sy::max(v, C(0)); };
    auto const gated = [] SWITCHYARD_HOST_DEVICE(C v, C gate) { return v * sy::sigmoid(gate); };
    auto const report = [&](char const* what, float ms) {
        std::printf("%s %-20s: %.1f us, %.1f%% of copy\n", label, what, ms * 1e3, 100.0 * copy / ms);
    };
    report("softplus", median_ms([&] { sy::transform(Tag{}, o, softplus, xr); }));
    report("relu", median_ms([&] { sy::transform(Tag{}, o, relu, xr); }));
    if constexpr (sizeof(S) < 8) {
        report("gate per column", median_ms([&] { sy::transform(Tag{}, o, gated, xr, per_column); }));
        report("gate per row", median_ms([&] { sy::transform(Tag{}, o, gated, xr, per_row); }));
    }
    dev.free(x);
    dev.free(out);
    dev.free(g);
}

int main() {
    run<sy::dtype::f32>("f32 ");
    run<sy::dtype::bf16>("bf16");
    run<sy::dtype::f16>("f16 ");
    run<sy::dtype::f64>("f64 ");
}
