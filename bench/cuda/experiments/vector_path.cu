// Experiment behind docs/cuda.md's tile and grid figures: softplus
// over 2^28 elements (f32, bf16, f16, f64) as % of same-run cudaMemcpy
// bandwidth, for switchyard's for_each launch, for_each's kernel at other
// block sizes and elements per thread (one tile per block, and the old
// occupancy-sized grid),
// and hand-written 16-byte vector kernels (grid-stride and one tile per
// block) as the upper bound a vector path could reach. No torch.
//   nvcc -std=c++20 -O3 --extended-lambda --expt-relaxed-constexpr -arch=sm_90 -Iinclude \
//       bench/cuda/experiments/vector_path.cu -o /tmp/vector_path && /tmp/vector_path
#include <switchyard/switchyard.h>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cstdio>
#include <vector>

#include "median_ms.h"

namespace sy = switchyard;

struct bf16_t {
    unsigned short bits;
};
struct f16_t {
    unsigned short bits;
};

__device__ __forceinline__ float to_f(float x) { return x; }
__device__ __forceinline__ double to_f(double x) { return x; }
__device__ __forceinline__ float to_f(bf16_t x) { return __uint_as_float(unsigned(x.bits) << 16); }
__device__ __forceinline__ float to_f(f16_t x) { return __half2float(__ushort_as_half(x.bits)); }
template <typename T>
__device__ __forceinline__ T from_f(float x);
template <>
__device__ __forceinline__ float from_f<float>(float x) {
    return x;
}
template <>
__device__ __forceinline__ bf16_t from_f<bf16_t>(float x) {
    return {__bfloat16_as_ushort(__float2bfloat16(x))};
}
template <>
__device__ __forceinline__ f16_t from_f<f16_t>(float x) {
    return {__half_as_ushort(__float2half(x))};
}

template <typename T>
struct compute_of {
    using type = float;
};
template <>
struct compute_of<double> {
    using type = double;
};

template <typename T>
__device__ __forceinline__ T softplus_elem(T x) {
    using C = typename compute_of<T>::type;
    C const v = to_f(x);
    C const r = sy::select(v > C(20), v, sy::softplus(v));
    if constexpr (std::is_same_v<T, double>)
        return r;
    else
        return from_f<T>(r);
}

// half-grade softplus: MUFU ex2 and lg2 (for storage types with 8-11 bits).
template <typename T>
__device__ __forceinline__ T softplus_fast(T x) {
    float const v = to_f(x);
    float const e = exp2f(-fabsf(v) * 1.4426950408889634f);  // ex2.approx
    // log1p(e) on [0,1]: small e is e(1 - e/2); else lg2(1+e) ln2
    float const l = e < 0x1p-6f ? e * (1.0f - 0.5f * e) : __log2f(1.0f + e) * 0.6931471805599453f;
    float const r = v > 20.f ? v : fmaxf(v, 0.f) + l;
    return from_f<T>(r);
}

template <typename T, int U, bool VecStore, bool Fast>
__global__ void __launch_bounds__(256) vector_kernel(T const* __restrict__ in, T* __restrict__ out, std::int64_t n) {
    constexpr int C = 16 / sizeof(T);
    std::int64_t const vecs = n / C;
    std::int64_t const step = std::int64_t(gridDim.x) * 256 * U;
    for (std::int64_t v0 = std::int64_t(blockIdx.x) * 256 * U + threadIdx.x; v0 < vecs; v0 += step) {
        uint4 raw[U];
#pragma unroll
        for (int u = 0; u < U; ++u) {
            std::int64_t const v = v0 + u * 256;
            if (v < vecs) raw[u] = __ldg(reinterpret_cast<uint4 const*>(in) + v);
        }
#pragma unroll
        for (int u = 0; u < U; ++u) {
            std::int64_t const v = v0 + u * 256;
            if (v >= vecs) break;
            T lanes[C];
            __builtin_memcpy(lanes, &raw[u], 16);
#pragma unroll
            for (int c = 0; c < C; ++c) {
                if constexpr (Fast)
                    lanes[c] = softplus_fast(lanes[c]);
                else
                    lanes[c] = softplus_elem(lanes[c]);
            }
            if constexpr (VecStore) {
                uint4 o;
                __builtin_memcpy(&o, lanes, 16);
                reinterpret_cast<uint4*>(out)[v] = o;
            } else {
#pragma unroll
                for (int c = 0; c < C; ++c) out[v * C + c] = lanes[c];
            }
        }
    }
    if (blockIdx.x == 0)
        for (std::int64_t i = vecs * C + threadIdx.x; i < n; i += 256) out[i] = softplus_elem(in[i]);
}

template <typename T>
__global__ void copy_kernel(uint4 const* __restrict__ in, uint4* __restrict__ out, std::int64_t vecs) {
    for (std::int64_t v = std::int64_t(blockIdx.x) * 256 + threadIdx.x; v < vecs; v += std::int64_t(gridDim.x) * 256)
        out[v] = __ldg(in + v);
}

// The tag's dtype matches T, so the library launch picks its elements per thread as for the real op.
template <typename T>
inline constexpr sy::dtype dtype_of = sy::dtype::f32;
template <>
inline constexpr sy::dtype dtype_of<bf16_t> = sy::dtype::bf16;
template <>
inline constexpr sy::dtype dtype_of<f16_t> = sy::dtype::f16;
template <>
inline constexpr sy::dtype dtype_of<double> = sy::dtype::f64;
using tag = sy::tag<sy::device_kind::cuda, sy::dtype::f32, sy::contiguity::contiguous>;
template <int PerThread = 0, typename T>
void for_each_library(T const* in, T* out, std::int64_t n) {
    using typed_tag = sy::tag<sy::device_kind::cuda, dtype_of<T>, sy::contiguity::contiguous>;
    sy::detail::cuda_for_each_launch<0, PerThread>(
        typed_tag{}, 0, n,
        [=] __device__(typed_tag, std::int64_t i) { out[i] = softplus_elem(sy::detail::load_input(in + i)); }, 0,
        nullptr);
}

// for_each's kernel (no tile warming: this closure holds raw pointers, which
// carry no stream marks) at a chosen block size and elements per thread,
// launched with one tile per block or, with `one_wave`, the old way: blocks
// per SM at full occupancy times the SM count, each block walking many tiles.
template <int Block, int PerThread, typename T>
void for_each_kernel(T const* in, T* out, std::int64_t n, bool one_wave = false) {
    auto f = [=] __device__(tag, std::int64_t i) { out[i] = softplus_elem(sy::detail::load_input(in + i)); };
    auto const kernel = sy::detail::cuda_for_each_kernel<Block, 0, PerThread, tag, decltype(f)>;
    std::int64_t const tiles = (n + Block * PerThread - 1) / (Block * PerThread);
    std::int64_t grid = tiles;
    if (one_wave) {
        int per_sm = 0, sms = 0;
        cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, Block, 0);
        cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
        grid = std::min<std::int64_t>(tiles, std::int64_t{per_sm} * sms);
    }
    kernel<<<unsigned(grid), Block>>>(f, tag{}, 0, n, sy::detail::stream_set{});
}

// One tile per block, 32-bit indices inside the tile: thread t handles U vectors t, t + Block, ...
template <typename T, int Block, int U>
__global__ void __launch_bounds__(Block)
    tile_vector_kernel(T const* __restrict__ in, T* __restrict__ out, std::int64_t n) {
    constexpr int C = 16 / sizeof(T);
    std::int64_t const first = std::int64_t(blockIdx.x) * Block * U * C;
    if (first + Block * U * C <= n) {
        uint4 raw[U];
        uint4 const* src = reinterpret_cast<uint4 const*>(in + first);
        uint4* dst = reinterpret_cast<uint4*>(out + first);
#pragma unroll
        for (int u = 0; u < U; ++u) raw[u] = __ldg(src + u * Block + threadIdx.x);
#pragma unroll
        for (int u = 0; u < U; ++u) {
            T lanes[C];
            __builtin_memcpy(lanes, &raw[u], 16);
#pragma unroll
            for (int c = 0; c < C; ++c) lanes[c] = softplus_elem(lanes[c]);
            __builtin_memcpy(&raw[u], lanes, 16);
            dst[u * Block + threadIdx.x] = raw[u];
        }
    } else {
        for (std::int64_t i = first + threadIdx.x; i < n; i += Block) out[i] = softplus_elem(in[i]);
    }
}

template <typename T>
void run(char const* name, std::int64_t n) {
    T *in = nullptr, *out = nullptr;
    cudaMalloc(&in, n * sizeof(T));
    cudaMalloc(&out, n * sizeof(T));
    cudaMemset(in, 0x3c, n * sizeof(T));
    double const bytes = 2.0 * n * sizeof(T);
    int sms = 0;
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
    float const memcpy_ms = median_ms([&] { cudaMemcpyAsync(out, in, n * sizeof(T), cudaMemcpyDeviceToDevice); });
    auto report = [&](char const* what, float ms) {
        std::printf("%-5s %-28s %8.3f ms %7.1f GB/s %6.1f%% of copy\n", name, what, ms, bytes / ms / 1e6,
                    100.0 * memcpy_ms / ms);
    };
    report("memcpy", memcpy_ms);
    report("copy_kernel v4", median_ms([&] {
               copy_kernel<T><<<sms * 8, 256>>>(reinterpret_cast<uint4 const*>(in), reinterpret_cast<uint4*>(out),
                                                n * sizeof(T) / 16);
           }));
    report("for_each library launch", median_ms([&] { for_each_library(in, out, n); }));
    report("for_each library launch P4", median_ms([&] { for_each_library<4>(in, out, n); }));
    report("for_each kernel, old grid B256 P8", median_ms([&] { for_each_kernel<256, 8>(in, out, n, true); }));
    report("for_each kernel B256 P8", median_ms([&] { for_each_kernel<256, 8>(in, out, n); }));
    report("for_each kernel B128 P8", median_ms([&] { for_each_kernel<128, 8>(in, out, n); }));
    report("for_each kernel B256 P4", median_ms([&] { for_each_kernel<256, 4>(in, out, n); }));
    report("for_each kernel B256 P16", median_ms([&] { for_each_kernel<256, 16>(in, out, n); }));
    report("for_each kernel B128 P16", median_ms([&] { for_each_kernel<128, 16>(in, out, n); }));
    auto tiles = [&](int b, int u) {
        return unsigned((n + std::int64_t(b) * u * (16 / sizeof(T)) - 1) / (std::int64_t(b) * u * (16 / sizeof(T))));
    };
    report("tile vector B128 U1",
           median_ms([&] { tile_vector_kernel<T, 128, 1><<<tiles(128, 1), 128>>>(in, out, n); }));
    report("tile vector B128 U2",
           median_ms([&] { tile_vector_kernel<T, 128, 2><<<tiles(128, 2), 128>>>(in, out, n); }));
    report("tile vector B256 U2",
           median_ms([&] { tile_vector_kernel<T, 256, 2><<<tiles(256, 2), 256>>>(in, out, n); }));
    report("tile vector B128 U4",
           median_ms([&] { tile_vector_kernel<T, 128, 4><<<tiles(128, 4), 128>>>(in, out, n); }));
    auto grid = [&](int u) {
        return unsigned(std::min<std::int64_t>(sms * 8, (n / (16 / sizeof(T)) + 256 * u - 1) / (256 * u)));
    };
    report("vector U1", median_ms([&] { vector_kernel<T, 1, true, false><<<grid(1), 256>>>(in, out, n); }));
    report("vector U2", median_ms([&] { vector_kernel<T, 2, true, false><<<grid(2), 256>>>(in, out, n); }));
    report("vector U2 scalar stores",
           median_ms([&] { vector_kernel<T, 2, false, false><<<grid(2), 256>>>(in, out, n); }));
    if constexpr (!std::is_same_v<T, double>)
        report("vector U2 MUFU math",
               median_ms([&] { vector_kernel<T, 2, true, true><<<grid(2), 256>>>(in, out, n); }));
    cudaDeviceSynchronize();
    if (cudaGetLastError() != cudaSuccess) std::printf("CUDA error\n");
    cudaFree(in);
    cudaFree(out);
}

int main() {
    std::int64_t const n = std::int64_t{1} << 28;
    run<float>("f32", n);
    run<bf16_t>("bf16", n);
    run<f16_t>("f16", n);
    run<double>("f64", n);
}
