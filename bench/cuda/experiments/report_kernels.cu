// The kernels behind bench/cuda_report.py's targets, without torch, on
// random values: the softplus example's scalar function (beta 1, threshold
// 20) over 2^28 values; x * sigmoid(gate) with the gate mapped (as
// examples/torch/mul_sigmoid.cpp does) per column and per row of [65536,
// 4096]; the softmax example's rows over [65536, 4096]; and sums of all of
// 2^28 values. Each as % of the same run's device-to-device copy of the same
// bytes (bytes read and written over time; a sum reads only, so it is its
// bytes read over time against the copy's bytes read and written). Build it
// against two trees to compare a change with its base in one call:
//   nvcc -std=c++20 -O3 --extended-lambda --expt-relaxed-constexpr -arch=sm_90 -Iinclude -Iexamples/torch \
//       bench/cuda/experiments/report_kernels.cu -o /tmp/report_kernels && /tmp/report_kernels
#include <switchyard/reduce.h>
#include <switchyard/switchyard.h>
#include <switchyard/transform_rows.h>

#include <cstdio>

#include "median_ms.h"
#include "softplus_math.h"

namespace sy = switchyard;

// Values in [-8, 8) from a hash of the index: no two neighbours alike, no zeros run.
template <typename S>
__global__ void fill_random(S* p, std::int64_t n, unsigned seed) {
    for (std::int64_t i = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; i < n;
         i += std::int64_t{gridDim.x} * blockDim.x) {
        unsigned h = static_cast<unsigned>(i) * 2654435761u ^ seed;
        h ^= h >> 15;
        h *= 2246822519u;
        h ^= h >> 13;
        p[i] = S(static_cast<float>(h >> 8) * 0x1p-20f - 8.0f);
    }
}

template <sy::dtype D>
void run(char const* label) {
    using Tag = sy::tag<sy::device_kind::cuda, D>;
    using S = sy::storage_t<Tag>;
    using C = sy::compute_t<Tag>;
    constexpr auto cuda = sy::device_kind::cuda;
    std::int64_t const rows = 65536, cols = 4096, n = rows * cols;
    sy::cuda_device dev{0};
    void* x = dev.alloc(n * sizeof(S));
    void* out = dev.alloc(n * sizeof(S));
    void* g = dev.alloc(rows * sizeof(S));
    void* total = dev.alloc(sizeof(S));
    fill_random<<<1024, 256>>>(static_cast<S*>(x), n, 1u);
    fill_random<<<64, 256>>>(static_cast<S*>(g), rows, 2u);
    float const copy = median_ms([&] { cudaMemcpyAsync(out, x, n * sizeof(S), cudaMemcpyDeviceToDevice); });
    auto const xr = sy::strided_ref::contiguous(x, D, cuda, {rows, cols}, "x");
    auto const o = sy::strided_ref::contiguous(out, D, cuda, {rows, cols}, "out");
    auto const per_column = sy::strided_ref::contiguous(g, D, cuda, {cols}, "gate");
    auto const per_row = sy::strided_ref::contiguous(g, D, cuda, {rows, 1}, "gate");
    auto const report = [&](char const* what, float ms, double bytes_over_copy) {
        std::printf("%s %-18s %8.1f us %6.1f%% of copy\n", label, what, ms * 1e3, 100.0 * bytes_over_copy * copy / ms);
    };

    C const beta(1), inv_beta(1), threshold(20);
    auto const softplus = [=] SWITCHYARD_HOST_DEVICE(C v) {
        return switchyard_examples::softplus_scalar<S>(v, beta, inv_beta, threshold);
    };
    report("softplus", median_ms([&] { sy::transform(Tag{}, o, softplus, xr); }), 1.0);
    if constexpr (sizeof(S) < 8) {
        auto const sigmoid = [] SWITCHYARD_HOST_DEVICE(C v) { return sy::sigmoid_to<S>(v); };
        auto const mul = [] SWITCHYARD_HOST_DEVICE(C v, C s) { return v * s; };
        report("gate per column", median_ms([&] { sy::transform(Tag{}, o, mul, xr, sy::mapped(per_column, sigmoid)); }),
               1.0);
        report("gate per row", median_ms([&] { sy::transform(Tag{}, o, mul, xr, sy::mapped(per_row, sigmoid)); }), 1.0);
        auto const shifted_exp = [] SWITCHYARD_HOST_DEVICE(C v, C max) { return sy::exp_to<S>(v - max); };
        auto const normalized = [] SWITCHYARD_HOST_DEVICE(C, C e, C, C sum) { return e * (C(1) / sum); };
        auto const stats = sy::row_stats(sy::amax, sy::row_stat(sy::sum, shifted_exp).with_values());
        report("softmax", median_ms([&] { sy::transform_rows(Tag{}, o, stats, normalized, xr); }), 1.0);
        auto const all = sy::strided_ref::contiguous(x, D, cuda, {n}, "x");
        auto const sum = sy::strided_ref::make(total, D, cuda, nullptr, nullptr, 0, "sum");
        report("sum all", median_ms([&] { sy::reduce(Tag{}, sum, sy::all_dims, sy::sum, all); }), 0.5);
    }
    cudaError_t const e = cudaDeviceSynchronize();
    if (e != cudaSuccess) std::printf("CUDA error: %s\n", cudaGetErrorString(e));
    dev.free(x);
    dev.free(out);
    dev.free(g);
    dev.free(total);
}

int main() {
    for (int round = 0; round < 2; ++round) {
        run<sy::dtype::f32>("f32 ");
        run<sy::dtype::bf16>("bf16");
        run<sy::dtype::f16>("f16 ");
        run<sy::dtype::f64>("f64 ");
    }
}
