// Experiment behind docs/benchmarks.md's CUDA row-reduction figures: sy::reduce
// (sum, argmax) along the last dimension of rows from 32 to 2^20 values and
// over all of 2^28 values, f32, bf16 and f16, as % of the same run's
// device-to-device copy rate (bytes read / time against the copy's bytes read
// and written / time). Random values (argmax's index then varies per row).
// No torch; build it against two trees to compare a change with its base in
// one call:
//   nvcc -std=c++20 -O3 --extended-lambda --expt-relaxed-constexpr -arch=sm_90 -Iinclude \
//       bench/cuda/experiments/reduce_rows.cu -o /tmp/reduce_rows && /tmp/reduce_rows
#include <switchyard/reduce.h>
#include <switchyard/switchyard.h>

#include <cstdio>
#include <random>
#include <utility>
#include <vector>

#include "median_ms.h"

namespace sy = switchyard;

template <sy::dtype D>
void run(char const* label, std::vector<sy::dtype_storage_t<D>> const& host, std::int64_t rows, std::int64_t cols) {
    using Tag = sy::tag<sy::device_kind::cuda, D>;
    using S = sy::storage_t<Tag>;
    std::int64_t const n = rows * cols;
    sy::cuda_device dev{0};
    void* x = dev.alloc(n * sizeof(S));
    void* copy = dev.alloc(n * sizeof(S));
    void* sums = dev.alloc(rows * sizeof(S));
    void* index = dev.alloc(rows * sizeof(std::int64_t));
    dev.copy_from_host(x, host.data(), n * sizeof(S));
    float const copy_ms = median_ms([&] { cudaMemcpyAsync(copy, x, n * sizeof(S), cudaMemcpyDeviceToDevice); });
    bool const all = rows == 1;
    std::vector<std::int64_t> out_sizes = all ? std::vector<std::int64_t>{} : std::vector<std::int64_t>{rows};
    auto const xr = sy::strided_ref::contiguous(x, D, sy::device_kind::cuda, {rows, cols}, "x");
    std::int64_t const unit_stride[1] = {1};
    auto const so = sy::strided_ref::make(sums, D, sy::device_kind::cuda, out_sizes.data(), unit_stride,
                                          static_cast<std::int64_t>(out_sizes.size()), "out");
    auto const io = sy::strided_ref::make(index, sy::dtype::i64, sy::device_kind::cuda, out_sizes.data(), unit_stride,
                                          static_cast<std::int64_t>(out_sizes.size()), "index");
    sy::dims const over = all ? sy::all_dims : sy::dims{-1};
    float const sum_ms = median_ms([&] { sy::reduce(Tag{}, so, over, sy::sum, xr); });
    float const argmax_ms = median_ms([&] { sy::reduce(Tag{}, io, over, sy::argmax, xr); });
    auto const pct = [&](float ms) { return 100.0 * copy_ms / (2.0 * ms); };
    std::printf("%s [%lld, %lld]: sum %.1f us (%.1f%% of copy), argmax %.1f us (%.1f%%), copy %.1f us\n", label,
                static_cast<long long>(rows), static_cast<long long>(cols), sum_ms * 1e3, pct(sum_ms), argmax_ms * 1e3,
                pct(argmax_ms), copy_ms * 1e3);
    dev.free(x);
    dev.free(copy);
    dev.free(sums);
    dev.free(index);
}

// Every shape has 2^28 values, drawn once per dtype.
template <sy::dtype D>
void run_all(char const* label) {
    std::vector<sy::dtype_storage_t<D>> host(std::size_t{1} << 28);
    std::mt19937 random(7);
    std::normal_distribution<float> normal;
    for (auto& v : host) v = static_cast<sy::dtype_storage_t<D>>(normal(random));
    for (auto [rows, cols] : {std::pair<std::int64_t, std::int64_t>{65536, 4096},
                              {131072, 2048},
                              {262144, 1024},
                              {2097152, 128},
                              {8388608, 32},
                              {32768, 8192},
                              {256, 1 << 20},
                              {1, 1 << 28}})
        run<D>(label, host, rows, cols);
}

int main() {
    run_all<sy::dtype::f32>("f32 ");
    run_all<sy::dtype::bf16>("bf16");
    run_all<sy::dtype::f16>("f16 ");
}
