// for_each on CUDA: one tile per block, launched on the calling thread's
// current stream (current_stream.h) on the current device. Included by
// switchyard/for_each.h when compiled by nvcc; kernels need --extended-lambda
// for `[=] __host__ __device__` functors.
//
// Block size: 256 threads, or the tag's block_dim (tag_add<Tag,
// block_dim::b128>). Grid: one block per tile of block * per-thread elements
// (16 for 1- and 2-byte dtypes, 4 for 8-byte ones, else 8: cuda_per_thread),
// so a launch makes no occupancy or attribute query at all. The kernel still
// strides by the grid, which only matters past 2^31 - 1 tiles. Measured on an H100
// (bench/cuda/experiments/vector_path.cu): softplus over 2^28 floats ran at
// 85% of copy bandwidth with a grid sized to fill the GPU once (blocks per SM
// at full occupancy times the SM count, each block walking many tiles) and at
// 99% with one tile per block, in the same run; the hardware's block
// scheduler balances the SMs better than a fixed wave does. Indices are
// 64-bit throughout.
//
// Thread t runs the functor on elements tile + t, tile + t + block, ...
// (coalesced: a warp touches consecutive elements). Input views read through
// ld.global.nc (view/load.h), so ptxas issues the thread's loads before its
// stores and several stay in flight. A tile can also be warmed before it runs
// (SWITCHYARD_CUDA_WARM, below). With one tile per block the measurements
// disagree between runs (softplus bf16/f16 at 8 per thread lost 3-4 points
// with mode 2; with softplus_to at the default per-thread counts f32, bf16
// and f16 gained 1-2 points and f64 lost 3), so it is off by default.
//
// The index is a std::int64_t. A kernel that moves 16 bytes per load and
// store is transform's (device/cuda/transform.h), which sees its operands;
// for_each's functor is opaque, so its views access memory element by
// element, coalesced across a warp.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <string>
#include <type_traits>

#include "switchyard/core/dtype.h"
#include "switchyard/core/enums.h"
#include "switchyard/core/tag.h"
#include "switchyard/device/cuda/current_stream.h"
#include "switchyard/device/cuda/error.h"
#include "switchyard/view/stream_mark.h"

#define SWITCHYARD_HAS_CUDA_FOR_EACH 1

// How a tile is warmed: 0 not at all (default), 1 prefetch.global.L2, 2
// 16-byte loads into registers (kept alive by a sink), 3 prefetch.global.L1.
// A macro for experiments; bench/cuda_report.py measures all four.
#ifndef SWITCHYARD_CUDA_WARM
#define SWITCHYARD_CUDA_WARM 0
#endif

namespace switchyard::detail {

inline constexpr int cuda_default_block = 256;
// Elements per thread per tile for a tag without a dtype.
inline constexpr int cuda_tile_per_thread = 8;
// gridDim.x's limit; past it the kernel's grid-stride loop takes over.
inline constexpr std::int64_t cuda_max_grid = 2147483647;

// The views a kernel reads contiguously, the ones a tile warms.
template <typename F>
stream_set cuda_streams_to_warm(F const& f) noexcept {
    return streams_where(find_streams(f), [](stream_info info) { return info.contiguous && !info.writable; });
}

// A tag value that names a switchyard dtype: a value of a dtype enum whose
// mapping to the core dtype is a constant (torch's complex types, which map
// to none, are not).
template <auto X>
concept names_core_dtype = dtype_enum_type<decltype(X)> && requires {
    typename std::integral_constant<dtype, dtype_enum<decltype(X)>::to_core(X)>;
};

// The size of the smallest dtype among the tag's values, 0 without one.
template <typename Tag>
constexpr std::size_t smallest_dtype_bytes() {
    return []<auto... V>(sorted_tag<V...>) {
        std::size_t smallest = 0;
        auto consider = [&]<auto X>() {
            if constexpr (names_core_dtype<X>) {
                std::size_t const b = dtype_size(dtype_enum<decltype(X)>::to_core(X));
                if (b != 0 && (smallest == 0 || b < smallest)) smallest = b;
            }
        };
        (consider.template operator()<V>(), ...);
        return smallest;
    }
    (Tag{});
}

// Elements per thread per tile: 16 for 1- and 2-byte dtypes, 4 for 8-byte
// ones, else 8 (the smallest dtype in the tag decides; a tag without one
// gets 8). transform's vector kernel (device/cuda/transform.h) has its own
// count, cuda_vector_chunks. The count depends on the tag only: host and device
// must agree on the kernel. The measurements behind it are in
// docs/benchmarks.md ("elements per thread"; f64: transform's softplus over
// 2^28 at 100.2% of copy bandwidth with 4 and 87.9% with 8, two runs).
template <typename Tag>
constexpr int cuda_per_thread() {
    constexpr std::size_t bytes = smallest_dtype_bytes<Tag>();
    if constexpr (bytes == 0)
        return cuda_tile_per_thread;
    else
        return bytes <= 2 ? 16 : bytes == 8 ? 4 : 8;
}

template <typename Tag>
constexpr int cuda_block_size() {
    if constexpr (tag_has_type_v<Tag, block_dim>)
        return static_cast<int>(tag_get<block_dim>(Tag{}));
    else
        return cuda_default_block;
}

// Written only if a sink value matches an impossible pattern: keeps the
// warming loads alive without making anyone wait for them.
static __device__ unsigned cuda_warm_sink;

template <int Warm>
__device__ __forceinline__ unsigned cuda_warm(std::uint64_t address) {
    if constexpr (Warm == 1) {
        asm volatile("prefetch.global.L2 [%0];" ::"l"(address));
        return 0;
    } else if constexpr (Warm == 2) {
        unsigned a, b, c, d;
        asm volatile("ld.global.v4.u32 {%0, %1, %2, %3}, [%4];" : "=r"(a), "=r"(b), "=r"(c), "=r"(d) : "l"(address));
        return a ^ b ^ c ^ d;
    } else if constexpr (Warm == 3) {
        asm volatile("prefetch.global.L1 [%0];" ::"l"(address));
        return 0;
    } else {
        (void)address;
        return 0;
    }
}

template <int Block, int Warm, int PerThread, typename Tag, typename F>
__global__ void __launch_bounds__(Block) cuda_for_each_kernel(F const f, Tag const tag, std::int64_t const first,
                                                              std::int64_t const count, stream_set const streams) {
    constexpr std::int64_t tile = std::int64_t{Block} * PerThread;
    unsigned sink = 0;
    for (std::int64_t base = static_cast<std::int64_t>(blockIdx.x) * tile; base < count;
         base += static_cast<std::int64_t>(gridDim.x) * tile) {
        if (count - base >= tile) {
            for (int s = 0; Warm != 0 && s < streams.count; ++s) {
                // 16-byte chunks of the tile's bytes, rounded down to 16: a
                // misaligned view only warms a slightly shifted range.
                std::uint64_t const start =
                    (streams.address[s] + static_cast<std::uint64_t>(first + base) * streams.info[s].element_bytes) &
                    ~std::uint64_t{15};
                std::uint32_t const chunks = static_cast<std::uint32_t>(tile) * streams.info[s].element_bytes / 16;
                for (std::uint32_t c = threadIdx.x; c < chunks; c += Block) sink ^= cuda_warm<Warm>(start + c * 16ull);
            }
#pragma unroll
            for (int j = 0; j < PerThread; ++j) f(tag, first + base + j * Block + threadIdx.x);
        } else {
            for (std::int64_t i = base + threadIdx.x; i < count; i += Block) f(tag, first + i);
        }
    }
    if (sink == 0x9e3779b9u && count < 0) cuda_warm_sink = sink;
}

// Runs f(tag, i) for i in [first, first + count) on `stream` on the current
// device (`device`), without waiting. Warm and PerThread (elements per
// thread per tile; 0: from the tag's dtype) are for experiments
// (bench/cuda/bench_ops.cu).
template <int Warm = SWITCHYARD_CUDA_WARM, int PerThreadOverride = 0, typename Tag, typename F>
void cuda_for_each_launch(Tag tag, std::int64_t first, std::int64_t count, F const& f, int device,
                          cudaStream_t stream) {
    if (count == 0) return;
    constexpr int PerThread = PerThreadOverride > 0 ? PerThreadOverride : cuda_per_thread<Tag>();
    constexpr int block = cuda_block_size<Tag>();
    static_assert(block >= 32 && block <= 1024, "for_each: block_dim must be between 32 and 1024 threads");
    constexpr std::int64_t tile = std::int64_t{block} * PerThread;
    std::int64_t const tiles = (count + tile - 1) / tile;
    unsigned const grid = static_cast<unsigned>(tiles < cuda_max_grid ? tiles : cuda_max_grid);
    cuda_for_each_kernel<block, Warm, PerThread>
        <<<grid, block, 0, stream>>>(f, tag, first, count, Warm != 0 ? cuda_streams_to_warm(f) : stream_set{});
    cuda_check(cudaGetLastError(), "for_each kernel launch", "cuda:" + std::to_string(device));
}

template <typename Tag, typename F>
void cuda_for_each(Tag tag, std::int64_t count, F const& f) {
    check_count_against_outputs("for_each on cuda", count, find_streams(f));
    if (count == 0) return;
    int device = 0;
    cuda_check(cudaGetDevice(&device), "cudaGetDevice", "for_each");
    cuda_for_each_launch(tag, 0, count, f, device, static_cast<cudaStream_t>(cuda_current_stream_handle()));
}

}  // namespace switchyard::detail
