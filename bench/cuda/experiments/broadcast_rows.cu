// Experiment behind docs/benchmarks.md's broadcast rows: x * g over
// [65536, 4096] (f32, bf16, f16) through transform, as % of same-run
// device-to-device copy bandwidth (bytes actually moved: x read, out
// written; the gate is 4096 or 65536 elements). Gate same-shape (rank 1,
// 3 streams), per column and per row (the rank-2 vector kernel), and a
// per-column gate through sy::mapped (its map hoisted into stream-ordered
// memory), with the default memory pool as CUDA leaves it and with the pool
// keeping freed memory (release threshold raised). Storage is switchyard's
// own half/bfloat16 (no torch):
//   nvcc -std=c++20 -O3 --extended-lambda --expt-relaxed-constexpr -arch=sm_90 -Iinclude \
//       bench/cuda/experiments/broadcast_rows.cu -o /tmp/rows && /tmp/rows
#include <switchyard/switchyard.h>
#include <switchyard/transform.h>

#include <algorithm>
#include <cstdio>
#include <vector>

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
    void* g = dev.alloc(n * sizeof(S));
    cudaMemset(x, 0, n * sizeof(S));
    cudaMemset(g, 0, n * sizeof(S));
    float const copy = median_ms([&] { cudaMemcpyAsync(out, x, n * sizeof(S), cudaMemcpyDeviceToDevice); });
    auto const mul = [] SWITCHYARD_HOST_DEVICE(C a, C b) { return a * b; };
    auto const xr = sy::strided_ref::contiguous(x, D, sy::device_kind::cuda, {rows, cols}, "x");
    auto const o = sy::strided_ref::contiguous(out, D, sy::device_kind::cuda, {rows, cols}, "out");
    struct gate_case {
        char const* what;
        sy::strided_ref ref;
        double bytes_per_copy;  // bytes moved relative to the copy's
    } const cases[] = {
        {"same shape", sy::strided_ref::contiguous(g, D, sy::device_kind::cuda, {rows, cols}, "g"), 1.5},
        {"per column", sy::strided_ref::contiguous(g, D, sy::device_kind::cuda, {cols}, "g"), 1.0},
        {"per row", sy::strided_ref::contiguous(g, D, sy::device_kind::cuda, {rows, 1}, "g"), 1.0},
    };
    for (auto const& c : cases) {
        float const ms = median_ms([&] { sy::transform(Tag{}, o, mul, xr, c.ref); });
        std::printf("%s %-24s: %.1f us, %.1f%% of copy (copy %.1f us)\n", label, c.what, ms * 1e3,
                    100.0 * c.bytes_per_copy * copy / ms, copy * 1e3);
    }
    auto const sigmoid = [] SWITCHYARD_HOST_DEVICE(C v) { return sy::sigmoid(v); };
    for (bool const keep : {false, true}) {
        cudaMemPool_t pool;
        cudaDeviceGetDefaultMemPool(&pool, 0);
        std::uint64_t threshold = keep ? UINT64_MAX : 0;
        cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &threshold);
        float const ms = median_ms([&] { sy::transform(Tag{}, o, mul, xr, sy::mapped(cases[1].ref, sigmoid)); });
        std::printf("%s %-24s: %.1f us, %.1f%% of copy\n", label, keep ? "mapped, pool keeps" : "mapped, pool releases",
                    ms * 1e3, 100.0 * copy / ms);
    }
    dev.free(x);
    dev.free(out);
    dev.free(g);
}

int main() {
    run<sy::dtype::f32>("f32 ");
    run<sy::dtype::bf16>("bf16");
    run<sy::dtype::f16>("f16 ");
}
