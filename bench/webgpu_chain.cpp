// WebGPU batching and fusion: x.relu().mul(2).add(y) over 2^20 f32 elements,
// y resident on the device.
//   BM_chain3_eager: the seed's "current architecture" (async-gpu-batching.md):
//     every op creates its buffers, uploads its input, dispatches, reads its
//     result back and blocks (3 submits, 6 transfers). Pipelines stay cached
//     (the seed lists pipeline caching as later work; we do not charge it).
//   BM_chain3_eager_pooled: the same, but buffers come from the device's pool,
//     so the difference to the fused run is batching and fusion alone.
//   BM_chain3_fused: one upload, one fused dispatch, one readback.
//   BM_chain100: 100 steps, fused and per step; counts peak live buffers.
//   BM_softplus_resident / BM_copy_resident: the torch example's softplus
//     through transform over 2^26 device-resident f32 elements, and a
//     buffer-to-buffer copy of the same bytes, 4 of each recorded per
//     iteration and then synced: softplus's bandwidth as % of a copy.
//   BM_sum_resident: 4 full sums of the same 2^26 floats, then synced.
// Counters per iteration: submits, transfers, dispatches, peak_buffers.
#include <benchmark/benchmark.h>

#include <switchyard/switchyard.h>

#include "torch/softplus_math.h"

#include <cstdint>
#include <cstdio>
#include <span>
#include <vector>

namespace sy = switchyard;

namespace {

constexpr std::int64_t n = 1 << 20;
using webgpu_f32 = sy::tag<sy::device_kind::webgpu, sy::dtype::f32, sy::contiguity::contiguous>;

sy::webgpu_device& dev() { return sy::current_webgpu_device(); }

sy::strided_ref ref(void* buffer, char const* name) {
    return sy::strided_ref::contiguous(buffer, sy::dtype::f32, sy::device_kind::webgpu, {n}, name);
}

struct data {
    std::vector<float> x = std::vector<float>(n), out = std::vector<float>(n);
    void* y = nullptr;
    data() {
        std::vector<float> hy(n);
        for (std::int64_t i = 0; i < n; ++i) {
            x[static_cast<std::size_t>(i)] = static_cast<float>(i % 1000) * 0.01f - 5.0f;
            hy[static_cast<std::size_t>(i)] = static_cast<float>(i % 7);
        }
        y = dev().alloc(n * 4);
        dev().copy_from_host(y, hy.data(), n * 4);
        dev().sync();
    }
    ~data() { dev().free(y); }
};

// One eager op: upload `src`, run `kernel` into a fresh result, read it back
// into `dst`.
// With fresh_buffers, the op creates its buffers (input, result, readback
// staging, uniforms) instead of reusing pooled ones.
template <typename Kernel>
void eager_op(std::vector<float> const& src, std::vector<float>& dst, Kernel const& kernel, bool fresh_buffers) {
    void* in = dev().alloc(n * 4);
    void* out = dev().alloc(n * 4);
    dev().copy_from_host(in, src.data(), n * 4);
    kernel(ref(in, "in"), ref(out, "out"));
    dev().copy_to_host(dst.data(), out, n * 4);
    dev().free(in);
    dev().free(out);
    if (fresh_buffers) dev().release_cached_buffers();
}

void report(benchmark::State& state) {
    auto const c = dev().counters();
    double const iterations = static_cast<double>(state.iterations());
    state.counters["submits"] = static_cast<double>(c.submits) / iterations;
    state.counters["transfers"] = static_cast<double>(c.transfers()) / iterations;
    state.counters["dispatches"] = static_cast<double>(c.dispatches) / iterations;
}

void run_chain3_eager(benchmark::State& state, bool fresh_buffers) {
    data d;
    auto relu = [](sy::strided_ref const& a, sy::strided_ref const& b) {
        sy::flat_in<sy::device_kind::webgpu, sy::dtype::f32, sy::contiguity::contiguous> const in(a);
        sy::flat_out<sy::device_kind::webgpu, sy::dtype::f32, sy::contiguity::contiguous> const out(b);
        sy::for_each(webgpu_f32{}, n, [=](webgpu_f32, std::int64_t i) { out[i] = sy::max(in[i], 0.0f); });
    };
    auto scale = [](sy::strided_ref const& a, sy::strided_ref const& b) {
        sy::flat_in<sy::device_kind::webgpu, sy::dtype::f32, sy::contiguity::contiguous> const in(a);
        sy::flat_out<sy::device_kind::webgpu, sy::dtype::f32, sy::contiguity::contiguous> const out(b);
        sy::for_each(webgpu_f32{}, n, [=](webgpu_f32, std::int64_t i) { out[i] = in[i] * 2.0f; });
    };
    auto add = [&d](sy::strided_ref const& a, sy::strided_ref const& b) {
        sy::flat_in<sy::device_kind::webgpu, sy::dtype::f32, sy::contiguity::contiguous> const in(a),
            other(ref(d.y, "y"));
        sy::flat_out<sy::device_kind::webgpu, sy::dtype::f32, sy::contiguity::contiguous> const out(b);
        sy::for_each(webgpu_f32{}, n, [=](webgpu_f32, std::int64_t i) { out[i] = in[i] + other[i]; });
    };
    dev().reset_counters();
    for (auto _ : state) {
        eager_op(d.x, d.out, relu, fresh_buffers);
        eager_op(d.out, d.out, scale, fresh_buffers);
        eager_op(d.out, d.out, add, fresh_buffers);
        benchmark::DoNotOptimize(d.out.data());
    }
    report(state);
}
void BM_chain3_eager(benchmark::State& state) { run_chain3_eager(state, true); }
void BM_chain3_eager_pooled(benchmark::State& state) { run_chain3_eager(state, false); }

void BM_chain3_fused(benchmark::State& state) {
    data d;
    void* x = dev().alloc(n * 4);
    dev().reset_counters();
    for (auto _ : state) {
        dev().copy_from_host(x, d.x.data(), n * 4);
        sy::lazy(ref(x, "x")).relu().mul(2.0f).add(ref(d.y, "y")).to_host(std::span<float>(d.out));
        benchmark::DoNotOptimize(d.out.data());
    }
    report(state);
    dev().free(x);
}

template <int N, typename Chain>
auto long_chain(Chain const& chain) {
    if constexpr (N == 0)
        return chain;
    else if constexpr (N % 2 == 0)
        return long_chain<N - 1>(chain.relu());
    else
        return long_chain<N - 1>(chain.mul(1.0001));
}

void BM_chain100(benchmark::State& state) {
    data d;
    sy::fusion const mode = state.range(0) ? sy::fusion::full : sy::fusion::per_step;
    dev().sync();
    std::uint64_t const live = dev().live_buffers();
    dev().reset_counters();
    for (auto _ : state) {
        void* x = dev().alloc(n * 4);
        dev().copy_from_host(x, d.x.data(), n * 4);
        long_chain<100>(sy::lazy(ref(x, "x"))).to_host(std::span<float>(d.out), mode);
        dev().free(x);
    }
    report(state);
    state.counters["peak_buffers"] = static_cast<double>(dev().peak_live_buffers() - live);
}

}  // namespace

constexpr std::int64_t resident_n = std::int64_t{1} << 26;
constexpr int resident_ops = 4;

struct resident {
    void* x = dev().alloc(resident_n * 4);
    void* out = dev().alloc(resident_n * 4);
    resident() {
        std::vector<float> host(static_cast<std::size_t>(resident_n));
        for (std::size_t i = 0; i < host.size(); ++i) host[i] = static_cast<float>(i % 1000) * 0.02f - 10.0f;
        dev().copy_from_host(x, host.data(), host.size() * 4);
        dev().sync();
    }
    ~resident() {
        dev().free(x);
        dev().free(out);
    }
    sy::strided_ref ref(void* b, char const* name) const {
        return sy::strided_ref::contiguous(b, sy::dtype::f32, sy::device_kind::webgpu, {resident_n}, name);
    }
};

void BM_softplus_resident(benchmark::State& state) {
    resident r;
    using Tag = sy::tag<sy::device_kind::webgpu, sy::dtype::f32>;
    using C = sy::compute_t<Tag>;
    auto const softplus = [](C x) {
        return switchyard_examples::softplus_scalar<float>(x, C(1.0f), C(1.0f), C(20.0f));
    };
    for (auto _ : state) {
        for (int k = 0; k < resident_ops; ++k) sy::transform(Tag{}, r.ref(r.out, "out"), softplus, r.ref(r.x, "x"));
        dev().sync();
    }
    state.counters["ops"] = resident_ops;
}

// Full sums of the same 2^26 values (transform_reduce: two passes, into one
// float): read bandwidth against the copy's.
void BM_sum_resident(benchmark::State& state) {
    resident r;
    using Tag = sy::tag<sy::device_kind::webgpu, sy::dtype::f32>;
    auto const total = sy::strided_ref::contiguous(r.out, sy::dtype::f32, sy::device_kind::webgpu, {}, "total");
    for (auto _ : state) {
        for (int k = 0; k < resident_ops; ++k) sy::reduce(Tag{}, total, sy::all_dims, sy::sum, r.ref(r.x, "x"));
        dev().sync();
    }
    state.counters["ops"] = resident_ops;
}

void BM_copy_resident(benchmark::State& state) {
    resident r;
    for (auto _ : state) {
        for (int k = 0; k < resident_ops; ++k) dev().copy(r.out, r.x, resident_n * 4);
        dev().sync();
    }
    state.counters["ops"] = resident_ops;
}

BENCHMARK(BM_chain3_eager)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_chain3_eager_pooled)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_chain3_fused)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_chain100)->Arg(1)->Arg(0)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_softplus_resident)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_sum_resident)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_copy_resident)->Unit(benchmark::kMillisecond)->UseRealTime();

int main(int argc, char** argv) {
    benchmark::Initialize(&argc, argv);
    try {
        benchmark::AddCustomContext("webgpu_adapter", dev().adapter_name());
    } catch (sy::device_error const& e) {
        std::fprintf(stderr, "no WebGPU adapter: %s\n", e.what());
        return 77;
    }
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}
