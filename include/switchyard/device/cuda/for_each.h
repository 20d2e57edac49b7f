// for_each on CUDA: a grid-stride loop over tiles, launched on the calling
// thread's current stream (current_stream.h) on the current device. Included
// by switchyard/for_each.h when compiled by nvcc; kernels need
// --extended-lambda for `[=] __host__ __device__` functors.
//
// Block size: 256 threads, or the tag's block_dim (tag_add<Tag,
// block_dim::b128>). Grid: enough blocks to fill every SM at the kernel's
// occupancy, computed once per (kernel, device) and cached, so a launch makes
// no occupancy or attribute queries; never more blocks than tiles. Indices
// are 64-bit throughout.
//
// Each block walks tiles of block * 8 elements; thread t runs the functor on
// elements tile + t, tile + t + block, ... (coalesced: a warp touches
// consecutive elements). Input views read through ld.global.nc
// (view/load.h), so ptxas issues the thread's 8 loads before its stores and
// several stay in flight; that, not the warming below, is what brought relu
// over 2^28 elements on an H200 from 63% to 83% of copy bandwidth (f32) and
// from 39% to 75% (bf16). Before a full tile the block also warms the tile's
// bytes of every contiguous input view found in the closure
// (view/stream_mark.h): on the H200 that adds 3-5 points of copy bandwidth to
// memory-bound relu at 2^28 (f32 80.6 -> 83.4%, bf16 70.1 -> 74.5%) and
// nothing to compute-bound softplus. The functor's own
// accesses stay exactly as written: tails, misaligned and strided views need
// no special code. There is no 16-byte load/store path feeding the functor
// yet (docs/cuda.md).
#pragma once

#include <cuda_runtime.h>

#include <atomic>
#include <cstdint>
#include <string>

#include "switchyard/core/enums.h"
#include "switchyard/core/tag.h"
#include "switchyard/device/cuda/current_stream.h"
#include "switchyard/device/cuda/error.h"
#include "switchyard/view/stream_mark.h"

#define SWITCHYARD_HAS_CUDA_FOR_EACH 1

// How a tile is warmed: 0 not at all, 1 prefetch.global.L2, 2 16-byte loads
// into registers (kept alive by a sink), 3 prefetch.global.L1. A macro for
// experiments; bench/cuda_report.py measures all four.
#ifndef SWITCHYARD_CUDA_WARM
#define SWITCHYARD_CUDA_WARM 2
#endif

namespace switchyard::detail {

inline constexpr int cuda_default_block = 256;
inline constexpr int cuda_tile_per_thread = 8;
inline constexpr int cuda_max_devices = 64;

// The views a kernel reads contiguously, the ones a tile warms.
template <typename F>
stream_set cuda_streams_to_warm(F const& f) noexcept {
    return streams_where(find_streams(f), [](stream_info info) { return info.contiguous && !info.writable; });
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
        asm volatile("ld.global.v4.u32 {%0, %1, %2, %3}, [%4];"
                     : "=r"(a), "=r"(b), "=r"(c), "=r"(d)
                     : "l"(address));
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
__global__ void __launch_bounds__(Block)
    cuda_for_each_kernel(F const f, Tag const tag, std::int64_t const first, std::int64_t const count,
                         stream_set const streams) {
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

// Blocks per SM at full occupancy times the SM count, per device, computed on
// the first launch of each kernel on each device.
template <int Block, int Warm, int PerThread, typename Tag, typename F>
int cuda_max_grid(int device) {
    static std::atomic<int> cache[cuda_max_devices] = {};
    if (device >= 0 && device < cuda_max_devices) {
        if (int const cached = cache[device].load(std::memory_order_relaxed)) return cached;
    }
    int per_sm = 0, sms = 0;
    cuda_check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, cuda_for_each_kernel<Block, Warm, PerThread, Tag, F>, Block, 0),
               "cudaOccupancyMaxActiveBlocksPerMultiprocessor", "for_each");
    cuda_check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device), "cudaDeviceGetAttribute",
               "for_each");
    int const grid = (per_sm > 0 ? per_sm : 1) * (sms > 0 ? sms : 1);
    if (device >= 0 && device < cuda_max_devices) cache[device].store(grid, std::memory_order_relaxed);
    return grid;
}

// Runs f(tag, i) for i in [first, first + count) on `stream` on the current
// device (`device`), without waiting. Warm and PerThread (elements per
// thread per tile) are for experiments (bench/cuda/bench_ops.cu).
template <int Warm = SWITCHYARD_CUDA_WARM, int PerThread = cuda_tile_per_thread, typename Tag, typename F>
void cuda_for_each_launch(Tag tag, std::int64_t first, std::int64_t count, F const& f, int device,
                          cudaStream_t stream) {
    if (count == 0) return;
    constexpr int block = cuda_block_size<Tag>();
    static_assert(block >= 32 && block <= 1024, "for_each: block_dim must be between 32 and 1024 threads");
    constexpr std::int64_t tile = std::int64_t{block} * PerThread;
    std::int64_t const tiles = (count + tile - 1) / tile;
    std::int64_t const max_grid = cuda_max_grid<block, Warm, PerThread, Tag, F>(device);
    unsigned const grid = static_cast<unsigned>(tiles < max_grid ? tiles : max_grid);
    cuda_for_each_kernel<block, Warm, PerThread><<<grid, block, 0, stream>>>(f, tag, first, count, cuda_streams_to_warm(f));
    cuda_check(cudaGetLastError(), "for_each kernel launch", "cuda:" + std::to_string(device));
}

template <typename Tag, typename F>
void cuda_for_each(Tag tag, std::int64_t count, F const& f) {
    if (count == 0) return;
    int device = 0;
    cuda_check(cudaGetDevice(&device), "cudaGetDevice", "for_each");
    cuda_for_each_launch(tag, 0, count, f, device, static_cast<cudaStream_t>(cuda_current_stream_handle()));
}

}  // namespace switchyard::detail
