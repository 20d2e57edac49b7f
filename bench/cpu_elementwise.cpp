// CPU elementwise benchmarks for bench/report:
//   relu vs copy:     relu over 2^26 floats through for_each vs a parallel
//                     memcpy of the same bytes on the same pool (bandwidth ratio)
//   softplus 1t / 2t: softplus over 2^24 floats on pools of 1 and 2 threads
//   softplus vs libm: the same kernel with std::exp / std::log1p (informational)
//   broadcast multiply: transform of x [4096, 1024] times y [1024] into a new
//                     array, f32, bf16 and f16, on the default pool (the kernel
//                     of examples/torch/mul_sigmoid.cpp without PyTorch)
//   streamed outputs: transform with its outputs streamed or stored normally
//                     (device/cpu/stream_store.h), output sizes 16-256 MiB: a
//                     multiply per column (memory-bound), the same followed
//                     by row sums of its output (a consumer), and softplus
//                     (bound by its arithmetic)
// Each benchmark reports bytes processed (read + write) so rates compare.
#include <switchyard/for_each.h>
#include <switchyard/math.h>
#include <switchyard/parallel.h>
#include <switchyard/reduce.h>
#include <switchyard/transform.h>
#include <switchyard/view.h>

#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

namespace sy = switchyard;
using cpu_f32 = sy::tag<sy::device_kind::cpu, sy::dtype::f32, sy::contiguity::contiguous>;
using in_view = sy::flat_in<sy::device_kind::cpu, sy::dtype::f32, sy::contiguity::contiguous>;
using out_view = sy::flat_out<sy::device_kind::cpu, sy::dtype::f32, sy::contiguity::contiguous>;

namespace {

// PyTorch's softplus: x where beta * x > threshold, else log1p(exp(beta * x)) / beta.
SWITCHYARD_INLINE float softplus(float x, float beta, float threshold) {
    float const bx = beta * x;
    return sy::select(bx > threshold, x, sy::softplus(bx) / beta);
}

struct arrays {
    explicit arrays(std::int64_t n) : in(static_cast<std::size_t>(n)), out(static_cast<std::size_t>(n)) {
        for (std::size_t i = 0; i < in.size(); ++i)
            in[i] = static_cast<float>(static_cast<int>(i % 2001) - 1000) * 0.01f;
        ref_in = sy::strided_ref::contiguous(in.data(), sy::dtype::f32, sy::device_kind::cpu, {n}, "in");
        ref_out = sy::strided_ref::contiguous(out.data(), sy::dtype::f32, sy::device_kind::cpu, {n}, "out");
    }
    std::vector<float> in, out;
    sy::strided_ref ref_in, ref_out;
};

template <typename Pool>
void run_softplus(Pool& pool, arrays& a) {
    in_view const in(a.ref_in);
    out_view const out(a.ref_out);
    sy::for_each(pool, cpu_f32{}, out.size(), [=](auto, std::int64_t i) { out[i] = softplus(in[i], 1.0f, 20.0f); });
}

void BM_copy(benchmark::State& state) {
    std::int64_t const n = std::int64_t{1} << 26;
    arrays a(n);
    sy::work_stealing_pool pool(2);
    for (auto _ : state) {
        // The copy does not use for_each: it is the bandwidth reference.
        pool.parallel_for(0, n, sy::parallel_hint{n / 16, 0}, [&](std::int64_t b, std::int64_t e) {
            std::memcpy(a.out.data() + b, a.in.data() + b, static_cast<std::size_t>(e - b) * sizeof(float));
        });
        benchmark::ClobberMemory();
    }
    state.SetBytesProcessed(state.iterations() * n * 8);
}

void BM_relu(benchmark::State& state) {
    std::int64_t const n = std::int64_t{1} << 26;
    arrays a(n);
    sy::work_stealing_pool pool(2);
    in_view const in(a.ref_in);
    out_view const out(a.ref_out);
    for (auto _ : state) {
        sy::for_each(pool, cpu_f32{}, n, [=](auto, std::int64_t i) { out[i] = sy::max(in[i], 0.0f); });
        benchmark::ClobberMemory();
    }
    state.SetBytesProcessed(state.iterations() * n * 8);
}

void BM_softplus(benchmark::State& state) {
    std::int64_t const n = std::int64_t{1} << 24;
    arrays a(n);
    sy::work_stealing_pool pool(static_cast<std::size_t>(state.range(0)));
    for (auto _ : state) {
        run_softplus(pool, a);
        benchmark::ClobberMemory();
    }
    state.SetBytesProcessed(state.iterations() * n * 8);
}

void BM_softplus_libm(benchmark::State& state) {
    std::int64_t const n = std::int64_t{1} << 24;
    arrays a(n);
    sy::work_stealing_pool pool(2);
    in_view const in(a.ref_in);
    out_view const out(a.ref_out);
    for (auto _ : state) {
        sy::for_each(pool, cpu_f32{}, n, [=](auto, std::int64_t i) {
            float const x = in[i];
            out[i] = x > 20.0f ? x : std::log1p(std::exp(x));
        });
        benchmark::ClobberMemory();
    }
    state.SetBytesProcessed(state.iterations() * n * 8);
}

// x [4096, 1024] times y [1024] (argument 0: per column) or y [4096, 1]
// (argument 1: per row).
template <sy::dtype D>
void BM_broadcast_multiply(benchmark::State& state) {
    using S = sy::dtype_storage_t<D>;
    using C = sy::dtype_compute_t<D>;
    std::int64_t const rows = 4096, cols = 1024;
    bool const per_row = state.range(0) == 1;
    std::vector<S> x(static_cast<std::size_t>(rows * cols)), y(static_cast<std::size_t>(per_row ? rows : cols)),
        out(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<S>(static_cast<float>(i % 101) * 0.01f);
    for (std::size_t i = 0; i < y.size(); ++i) y[i] = static_cast<S>(static_cast<float>(i % 7) * 0.1f);
    auto const cpu = sy::device_kind::cpu;
    auto const xr = sy::strided_ref::contiguous(x.data(), D, cpu, {rows, cols}, "x");
    auto const yr = per_row ? sy::strided_ref::contiguous(y.data(), D, cpu, {rows, 1}, "y")
                            : sy::strided_ref::contiguous(y.data(), D, cpu, {cols}, "y");
    auto const o = sy::strided_ref::contiguous(out.data(), D, cpu, {rows, cols}, "out");
    for (auto _ : state) {
        sy::transform(
            sy::tag<sy::device_kind::cpu, D>{}, o, [](C a, C b) { return a * b; }, xr, yr);
        benchmark::ClobberMemory();
    }
    state.SetBytesProcessed(state.iterations() * rows * cols * 2 * static_cast<std::int64_t>(sizeof(S)));
}

// 64-byte aligned floats, as PyTorch's CPU allocations are (streamed rows
// store the unaligned ends of a block normally).
std::unique_ptr<float[], decltype(&std::free)> aligned_floats(std::int64_t n) {
    void* p = std::aligned_alloc(64, static_cast<std::size_t>(n) * sizeof(float));
    return {static_cast<float*>(p), &std::free};
}

enum class stream_kernel { multiply, multiply_then_read, softplus };

// Argument 0: output MiB; argument 1: 1 streams the output, 0 stores it
// normally (the threshold is set for the benchmark and restored).
template <stream_kernel K>
void BM_streamed_output(benchmark::State& state) {
    std::int64_t const cols = 1024, n = state.range(0) << 18, rows = n / cols;
    auto x = aligned_floats(n), out = aligned_floats(n), gate = aligned_floats(cols), sums = aligned_floats(rows);
    for (std::int64_t i = 0; i < n; ++i) x[i] = static_cast<float>(i % 97) * 0.1f - 4.0f;
    for (std::int64_t i = 0; i < cols; ++i) gate[i] = static_cast<float>(i % 7) * 0.1f;
    auto const cpu = sy::device_kind::cpu;
    auto const xr = sy::strided_ref::contiguous(x.get(), sy::dtype::f32, cpu, {rows, cols}, "x");
    auto const gr = sy::strided_ref::contiguous(gate.get(), sy::dtype::f32, cpu, {cols}, "gate");
    auto const o = sy::strided_ref::contiguous(out.get(), sy::dtype::f32, cpu, {rows, cols}, "out");
    auto const s = sy::strided_ref::contiguous(sums.get(), sy::dtype::f32, cpu, {rows}, "sums");
    auto& threshold = sy::detail::cpu_stream_store_bytes();
    std::int64_t const saved = threshold.exchange(state.range(1) ? 0 : std::int64_t{1} << 62);
    for (auto _ : state) {
        if constexpr (K == stream_kernel::softplus) {
            sy::transform(
                cpu_f32{}, o, [](float a) { return sy::softplus(a); }, xr);
        } else {
            sy::transform(
                cpu_f32{}, o, [](float a, float g) { return a * g; }, xr, gr);
            if constexpr (K == stream_kernel::multiply_then_read) sy::reduce(cpu_f32{}, s, sy::dims{1}, sy::sum, o);
        }
        benchmark::ClobberMemory();
    }
    threshold.store(saved);
    state.SetBytesProcessed(state.iterations() * n * 8);
}

}  // namespace

BENCHMARK(BM_copy)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_relu)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_softplus)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_softplus_libm)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_broadcast_multiply<sy::dtype::f32>)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_broadcast_multiply<sy::dtype::bf16>)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_broadcast_multiply<sy::dtype::f16>)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_streamed_output<stream_kernel::multiply>)
    ->ArgsProduct({{16, 64, 256}, {0, 1}})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(BM_streamed_output<stream_kernel::multiply_then_read>)
    ->ArgsProduct({{16, 64}, {0, 1}})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(BM_streamed_output<stream_kernel::softplus>)
    ->ArgsProduct({{16, 64}, {0, 1}})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_MAIN();
