// CPU reduction benchmarks (transform_reduce on the default pool), the
// shapes of issue 16's CPU targets: a full sum of 2^24 floats, row sums of
// [4096, 1024] and [256, 131072], and column sums of [4096, 1024] (also
// bf16, amax, [1048576, 4] and the middle dimension of [64, 1024, 64]); also row
// sums of [64, 1024] (in cache: the per-row cost), short rows ([131072, 32],
// [32768, 128]), row amax, f16 and bf16 row sums, and the softmax example's
// transform_rows, which the targets do not name. Each reports bytes read so
// rates compare with a copy. PyTorch's side of the comparison is timed by
// bench/torch_reduce.py (docs/benchmarks.md).
#include <switchyard/reduce.h>
#include <switchyard/transform_rows.h>

#include <benchmark/benchmark.h>

#include <cstdint>
#include <vector>

namespace sy = switchyard;

namespace {

template <typename Combine, sy::dtype D = sy::dtype::f32>
void run_reduce(benchmark::State& state, std::vector<std::int64_t> const& sizes, sy::dims const& over,
                Combine const& combine) {
    std::int64_t n = 1;
    for (auto s : sizes) n *= s;
    using S = sy::dtype_storage_t<D>;
    std::vector<S> in(static_cast<std::size_t>(n)), out(static_cast<std::size_t>(n));
    // Values in no order, so that a max's comparisons are not predictable.
    for (std::size_t i = 0; i < in.size(); ++i) in[i] = S(static_cast<float>((i * 2654435761u) % 1000u) * 1e-3f);
    std::int64_t strides[sy::max_rank] = {};
    sy::strided_ref::row_major_strides(sizes.data(), static_cast<std::int64_t>(sizes.size()), strides);
    auto const x = sy::strided_ref::make(in.data(), D, sy::device_kind::cpu, sizes.data(), strides,
                                         static_cast<std::int64_t>(sizes.size()), "x");
    // The output: the sizes without the reduced dimensions.
    std::vector<std::int64_t> kept;
    for (std::size_t d = 0; d < sizes.size() && !over.all; ++d)
        if (d != static_cast<std::size_t>(over.list[0] < 0 ? over.list[0] + static_cast<std::int64_t>(sizes.size())
                                                           : over.list[0]))
            kept.push_back(sizes[d]);
    std::int64_t kept_strides[sy::max_rank] = {};
    sy::strided_ref::row_major_strides(kept.data(), static_cast<std::int64_t>(kept.size()), kept_strides);
    auto const o = sy::strided_ref::make(out.data(), D, sy::device_kind::cpu, kept.data(), kept_strides,
                                         static_cast<std::int64_t>(kept.size()), "out");
    for (auto _ : state) {
        sy::reduce(sy::tag<sy::device_kind::cpu, D>{}, o, over, combine, x);
        benchmark::DoNotOptimize(out.data());
    }
    state.SetBytesProcessed(state.iterations() * n * static_cast<std::int64_t>(sizeof(S)));
}

void BM_sum_all(benchmark::State& s) { run_reduce(s, {1 << 24}, sy::all_dims, sy::sum); }
void BM_sum_rows_4096x1024(benchmark::State& s) { run_reduce(s, {4096, 1024}, sy::dims{-1}, sy::sum); }
void BM_sum_rows_4096x1024_f16(benchmark::State& s) {
    run_reduce<sy::sum_combine, sy::dtype::f16>(s, {4096, 1024}, sy::dims{-1}, sy::sum);
}
void BM_sum_rows_4096x1024_bf16(benchmark::State& s) {
    run_reduce<sy::sum_combine, sy::dtype::bf16>(s, {4096, 1024}, sy::dims{-1}, sy::sum);
}
void BM_sum_rows_256x131072(benchmark::State& s) { run_reduce(s, {256, 131072}, sy::dims{-1}, sy::sum); }
void BM_sum_columns_4096x1024(benchmark::State& s) { run_reduce(s, {4096, 1024}, sy::dims{0}, sy::sum); }
void BM_sum_columns_4096x1024_bf16(benchmark::State& s) {
    run_reduce<sy::sum_combine, sy::dtype::bf16>(s, {4096, 1024}, sy::dims{0}, sy::sum);
}
void BM_amax_columns_4096x1024(benchmark::State& s) { run_reduce(s, {4096, 1024}, sy::dims{0}, sy::amax); }
void BM_sum_columns_1048576x4(benchmark::State& s) { run_reduce(s, {1048576, 4}, sy::dims{0}, sy::sum); }
void BM_sum_middle_64x1024x64(benchmark::State& s) { run_reduce(s, {64, 1024, 64}, sy::dims{1}, sy::sum); }
void BM_sum_rows_64x1024(benchmark::State& s) { run_reduce(s, {64, 1024}, sy::dims{-1}, sy::sum); }
void BM_sum_rows_131072x32(benchmark::State& s) { run_reduce(s, {131072, 32}, sy::dims{-1}, sy::sum); }
void BM_sum_rows_32768x128(benchmark::State& s) { run_reduce(s, {32768, 128}, sy::dims{-1}, sy::sum); }
void BM_amax_rows_64x1024(benchmark::State& s) { run_reduce(s, {64, 1024}, sy::dims{-1}, sy::amax); }
void BM_amax_rows_4096x1024(benchmark::State& s) { run_reduce(s, {4096, 1024}, sy::dims{-1}, sy::amax); }
void BM_amax_rows_131072x32(benchmark::State& s) { run_reduce(s, {131072, 32}, sy::dims{-1}, sy::amax); }
void BM_sum_rows_65536x60(benchmark::State& s) { run_reduce(s, {65536, 60}, sy::dims{-1}, sy::sum); }
void BM_sum_rows_131072x32_f16(benchmark::State& s) {
    run_reduce<sy::sum_combine, sy::dtype::f16>(s, {131072, 32}, sy::dims{-1}, sy::sum);
}
void BM_sum_rows_131072x32_bf16(benchmark::State& s) {
    run_reduce<sy::sum_combine, sy::dtype::bf16>(s, {131072, 32}, sy::dims{-1}, sy::sum);
}

// The softmax example's transform_rows (row max, the sum of exp(x - max)
// with its values handed to f, then e * (1 / sum)) along the last dimension.
void BM_softmax_rows_4096x1024(benchmark::State& state) {
    using Tag = sy::tag<sy::device_kind::cpu, sy::dtype::f32>;
    std::vector<float> in(4096 * 1024), out(in.size());
    for (std::size_t i = 0; i < in.size(); ++i) in[i] = static_cast<float>((i * 2654435761u) % 1000u) * 1e-3f;
    auto const x = sy::strided_ref::contiguous(in.data(), sy::dtype::f32, sy::device_kind::cpu, {4096, 1024}, "x");
    auto const o = sy::strided_ref::contiguous(out.data(), sy::dtype::f32, sy::device_kind::cpu, {4096, 1024}, "out");
    auto const shifted_exp = [](float v, float max) { return sy::exp(v - max); };
    auto const normalized = [](float, float e, float, float sum) { return e * (1.0f / sum); };
    auto const stats = sy::row_stats(sy::amax, sy::row_stat(sy::sum, shifted_exp).with_values());
    for (auto _ : state) {
        sy::transform_rows(Tag{}, o, stats, normalized, x);
        benchmark::DoNotOptimize(out.data());
    }
    state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(in.size() * sizeof(float)));
}

}  // namespace

BENCHMARK(BM_sum_all)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_sum_rows_4096x1024)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_sum_rows_4096x1024_f16)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_sum_rows_4096x1024_bf16)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_sum_rows_256x131072)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_sum_columns_4096x1024)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_sum_columns_4096x1024_bf16)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_amax_columns_4096x1024)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_sum_columns_1048576x4)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_sum_middle_64x1024x64)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_sum_rows_64x1024)->UseRealTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_sum_rows_131072x32)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_sum_rows_32768x128)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_amax_rows_64x1024)->UseRealTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_amax_rows_4096x1024)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_amax_rows_131072x32)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_sum_rows_65536x60)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_sum_rows_131072x32_f16)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_sum_rows_131072x32_bf16)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_softmax_rows_4096x1024)->UseRealTime()->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();
