// Experiment behind docs/benchmarks.md's CUDA softmax figures: the softmax
// example's transform_rows (row max, then the sum of e = exp(x - max) with
// its values handed to f, then e * (1 / sum)) over [65536, 4096] f32, bf16
// and f16, as % of the same run's device-to-device copy of x's bytes (x read
// and out written, as the copy reads and writes them), and its backward
// (two inputs). No torch; build it against two trees to compare a change
// with its base in one call:
//   nvcc -std=c++20 -O3 --extended-lambda --expt-relaxed-constexpr -arch=sm_90 -Iinclude \
//       bench/cuda/experiments/softmax_rows.cu -o /tmp/softmax_rows && /tmp/softmax_rows
#include <switchyard/switchyard.h>
#include <switchyard/transform_rows.h>

#include <algorithm>
#include <cstdio>
#include <vector>

#include "median_ms.h"

namespace sy = switchyard;

template <sy::dtype D>
void run(char const* label, std::int64_t rows, std::int64_t cols) {
    using Tag = sy::tag<sy::device_kind::cuda, D>;
    using S = sy::storage_t<Tag>;
    using C = sy::compute_t<Tag>;
    std::int64_t const n = rows * cols;
    sy::cuda_device dev{0};
    void* x = dev.alloc(n * sizeof(S));
    void* out = dev.alloc(n * sizeof(S));
    cudaMemset(x, 0, n * sizeof(S));
    float const copy = median_ms([&] { cudaMemcpyAsync(out, x, n * sizeof(S), cudaMemcpyDeviceToDevice); });
    auto const xr = sy::strided_ref::contiguous(x, D, sy::device_kind::cuda, {rows, cols}, "x");
    auto const o = sy::strided_ref::contiguous(out, D, sy::device_kind::cuda, {rows, cols}, "out");
    auto const shifted_exp = [] SWITCHYARD_HOST_DEVICE(C v, C max) { return sy::exp_to<S>(v - max); };
    auto const normalized = [] SWITCHYARD_HOST_DEVICE(C, C e, C, C sum) { return e * (C(1) / sum); };
    auto const stats = sy::row_stats(sy::amax, sy::row_stat(sy::sum, shifted_exp).with_values());
    float const ms = median_ms([&] { sy::transform_rows(Tag{}, o, stats, normalized, xr); });
    std::printf("softmax %s [%lld, %lld]: %.1f us, %.1f%% of copy (copy %.1f us)\n", label,
                static_cast<long long>(rows), static_cast<long long>(cols), ms * 1e3, 100.0 * copy / ms, copy * 1e3);
    // The example's backward: two inputs (grad, y), 1.5 times the copy's bytes.
    auto const product = [] SWITCHYARD_HOST_DEVICE(C g, C y) { return g * y; };
    auto const gradient = [] SWITCHYARD_HOST_DEVICE(C g, C y, C dot) { return y * (g - dot); };
    void* grad = dev.alloc(n * sizeof(S));
    cudaMemset(grad, 0, n * sizeof(S));
    auto const gr = sy::strided_ref::contiguous(grad, D, sy::device_kind::cuda, {rows, cols}, "grad");
    float const back = median_ms(
        [&] { sy::transform_rows(Tag{}, o, sy::row_stats(sy::row_stat(sy::sum, product)), gradient, gr, xr); });
    dev.free(grad);
    std::printf("softmax backward %s [%lld, %lld]: %.1f us, %.1f%% of copy\n", label, static_cast<long long>(rows),
                static_cast<long long>(cols), back * 1e3, 150.0 * copy / back);
    dev.free(x);
    dev.free(out);
}

int main() {
    run<sy::dtype::f32>("f32 ", 65536, 4096);
    run<sy::dtype::bf16>("bf16", 65536, 4096);
    run<sy::dtype::f16>("f16 ", 65536, 4096);
    run<sy::dtype::bf16>("bf16", 16384, 16384);
}
