// transform on CUDA: the elementwise runner behind switchyard/transform.h,
// launched on the current stream of the current device, like for_each.
//
// Kernels chosen on the host from the layout (view/elementwise_layout.h):
//  - vector: when the layout has at most two dimensions, every operand's
//    inner stride is 1 or 0 (broadcast), rows hold whole 16-byte chunks and
//    every contiguous operand's rows start 16-byte aligned. Thread t of a
//    block handles chunks t, t + block, ... of 16 bytes of the storage type
//    (4 floats, 8 halves, 2 doubles): one 16-byte load per input with inner
//    stride 1 (ld.global.nc), one scalar load for a broadcast input, one
//    16-byte store per output; all of a thread's loads issue before its
//    stores. This covers contiguous operations, a broadcast scalar, and a
//    tensor broadcast over rows ([65536, 4096] * [4096]) or columns. One
//    instantiation per rank (1, 2), so a contiguous run computes no row
//    index (this mattered for instruction-bound 2-byte kernels:
//    docs/benchmarks.md); a one-block kernel runs the last partial chunk of
//    a one-dimensional layout.
//  - general: any layout; element by element in the coalesced interleaved
//    order, each element's coordinates found once with precomputed division
//    (view/fast_divide.h) and shared by all operands.
// Both run one tile per block (device/cuda/for_each.h says why); the general
// kernel with the elements per thread of cuda_per_thread, the vector kernel
// with cuda_vector_chunks. The op never sees any of this.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

#include "switchyard/core/dtype.h"
#include "switchyard/core/results.h"
#include "switchyard/device/cuda/current_stream.h"
#include "switchyard/device/cuda/current_device.h"
#include "switchyard/device/cuda/error.h"
#include "switchyard/device/cuda/for_each.h"
#include "switchyard/view/elementwise_layout.h"
#include "switchyard/view/fast_divide.h"
#include "switchyard/view/load.h"

namespace switchyard::detail {

// The layout as a kernel parameter: N operands, outputs first.
template <int N>
struct cuda_layout {
    void* data[N];
    std::int64_t strides[N][max_rank];
    std::int64_t sizes[max_rank];
    fast_divider dividers[max_rank];
    std::int32_t rank;
    std::int64_t numel;
};

template <int N>
cuda_layout<N> to_cuda_layout(elementwise_layout const& l) {
    cuda_layout<N> c{};
    for (int k = 0; k < N; ++k) {
        c.data[k] = l.data[k];
        for (int d = 0; d < max_rank; ++d) c.strides[k][d] = l.strides[k][d];
    }
    for (int d = 0; d < max_rank; ++d) {
        c.sizes[d] = l.sizes[d];
        c.dividers[d] = fast_divider(l.sizes[d] > 0 ? l.sizes[d] : 1);
    }
    c.rank = l.rank;
    c.numel = l.numel;
    return c;
}

// The offset of index i (below the product of the `rank` sizes that
// `dividers` divide by) in a row-major walk with these strides. The
// outermost dimension takes no division: i's quotient there is 0, and a
// rank-1 walk, the common one, is one multiply.
__device__ __forceinline__ std::int64_t cuda_offset_of(std::int64_t i, std::int32_t rank, fast_divider const* dividers,
                                                       std::int64_t const* strides) {
    std::int64_t o = 0;
    for (std::int32_t d = rank - 1; d > 0; --d) {
        std::int64_t const q = dividers[d].divide(i);
        o += (i - q * dividers[d].divisor()) * strides[d];
        i = q;
    }
    return rank > 0 ? o + i * strides[0] : o;
}

// Storage values of type S in a 16-byte chunk (one for wider types).
template <typename S>
inline constexpr int cuda_values_per_chunk = sizeof(S) <= 16 ? static_cast<int>(16 / sizeof(S)) : 1;

// 16 bytes of storage values as loaded: four words, so values narrower
// than a word stay packed (8 bf16 in four registers, where an array of
// bf16 takes a register each and ptxas moves the halves apart with a PRMT
// per value) and are taken apart where they are used.
template <typename S, int L>
struct cuda_chunk {
    static_assert(sizeof(S) * L == 16, "a chunk is 16 bytes of storage values");
    // A value narrower than a word as an unsigned integer of its size.
    using narrow_bits = std::conditional_t<sizeof(S) == 1, std::uint8_t, std::uint16_t>;
    std::uint32_t w[4];

    __device__ __forceinline__ S get(int e) const {
        S value;
        if constexpr (sizeof(S) < 4) {
            constexpr int per_word = 4 / static_cast<int>(sizeof(S));
            auto const bits = static_cast<narrow_bits>(w[e / per_word] >> (8 * sizeof(S) * (e % per_word)));
            std::memcpy(&value, &bits, sizeof(S));
        } else {
            std::memcpy(&value, &w[e * sizeof(S) / 4], sizeof(S));
        }
        return value;
    }
    __device__ __forceinline__ void set(int e, S value) {
        if constexpr (sizeof(S) < 4) {
            constexpr int per_word = 4 / static_cast<int>(sizeof(S));
            narrow_bits bits;
            std::memcpy(&bits, &value, sizeof(S));
            int const shift = static_cast<int>(8 * sizeof(S)) * (e % per_word);
            std::uint32_t const mask = ((std::uint32_t{1} << (8 * sizeof(S))) - 1) << shift;
            w[e / per_word] = (w[e / per_word] & ~mask) | (std::uint32_t{bits} << shift);
        } else {
            std::memcpy(&w[e * sizeof(S) / 4], &value, sizeof(S));
        }
    }
    // Value e in the compute type C. A bf16 is the upper half of a float,
    // so it comes out of its word with one mask or shift.
    template <dtype D, typename C>
    __device__ __forceinline__ C value(int e) const {
        if constexpr (D == dtype::bf16 && sizeof(S) == 2 && std::is_same_v<C, float>) {
            std::uint32_t const word = w[e / 2];
            return __uint_as_float(e % 2 == 0 ? word << 16 : word & 0xffff0000u);
        } else {
            return static_cast<C>(get(e));
        }
    }
};

template <typename S, int L>
__device__ __forceinline__ cuda_chunk<S, L> cuda_load_chunk(S const* p) {
    uint4 const raw = __ldg(reinterpret_cast<uint4 const*>(p));
    return {{raw.x, raw.y, raw.z, raw.w}};
}

// A chunk of L copies of v: what an input broadcast along the row gives.
template <typename S, int L>
__device__ __forceinline__ cuda_chunk<S, L> cuda_splat_chunk(S v) {
    if constexpr (sizeof(S) < 4) {
        typename cuda_chunk<S, L>::narrow_bits bits;
        std::memcpy(&bits, &v, sizeof(S));
        std::uint32_t const word = sizeof(S) == 1 ? bits * 0x01010101u : bits * 0x00010001u;
        return {{word, word, word, word}};
    } else {
        cuda_chunk<S, L> c;
#pragma unroll
        for (int e = 0; e < L; ++e) c.set(e, v);
        return c;
    }
}

template <typename S, int L>
__device__ __forceinline__ void cuda_store_chunk(S* p, cuda_chunk<S, L> const& c) {
    *reinterpret_cast<uint4*>(p) = make_uint4(c.w[0], c.w[1], c.w[2], c.w[3]);
}

// L results to a chunk of storage values. f16 and bf16 convert two at a time
// on sm_80 and newer (cvt.rn.{f16,bf16}x2.f32, rounding as the one-value
// conversions do). The bf16 broadcast op through PyTorch ran at 96.7% of
// copy bandwidth with it and 93-94% without, in repeated runs, although
// ptxas emits as many conversion instructions either way
// (docs/benchmarks.md).
template <dtype D, typename S, typename C, int L>
__device__ __forceinline__ cuda_chunk<S, L> cuda_pack_chunk(C const (&v)[L]) {
    cuda_chunk<S, L> c;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    if constexpr ((D == dtype::f16 || D == dtype::bf16) && sizeof(S) == 2 && std::is_same_v<C, float> && L % 2 == 0) {
#pragma unroll
        for (int j = 0; j < L; j += 2) {
            // The first operand goes to the upper half: element j + 1.
            if constexpr (D == dtype::bf16)
                asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(c.w[j / 2]) : "f"(v[j + 1]), "f"(v[j]));
            else
                asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(c.w[j / 2]) : "f"(v[j + 1]), "f"(v[j]));
        }
    } else
#endif
    {
        c = {};  // set() merges narrow values into whole words
#pragma unroll
        for (int j = 0; j < L; ++j) c.set(j, static_cast<S>(v[j]));
    }
    return c;
}

// Rank 1: element e of operand k at e (inner stride 1) or 0 (a broadcast
// scalar); rank 2: row e / row size (precomputed division) at the outer
// stride, plus the column where the inner stride is 1.
template <int Block, int Chunks, int L, int Rank, dtype D, typename S, typename C, int NOut, int NIn, typename F>
__global__ void __launch_bounds__(Block)
    cuda_transform_vector_kernel(F const f, cuda_layout<NOut + NIn> const layout, std::int64_t const chunks) {
    constexpr int N = NOut + NIn;
    constexpr std::int64_t tile = std::int64_t{Block} * Chunks;
    for (std::int64_t base = static_cast<std::int64_t>(blockIdx.x) * tile; base < chunks;
         base += static_cast<std::int64_t>(gridDim.x) * tile) {
        bool const full = chunks - base >= tile;
        std::int64_t offset[Chunks][N];
        bool live[Chunks];
#pragma unroll
        for (int c = 0; c < Chunks; ++c) {
            std::int64_t const chunk = base + c * Block + threadIdx.x;
            live[c] = full || chunk < chunks;
            std::int64_t const e = chunk * L;
            // Inner strides are 1 or 0 here (cuda_vector_layout): a select, not a multiply.
            if constexpr (Rank == 2) {
                std::int64_t const r = layout.dividers[1].divide(e);
                std::int64_t const col = e - r * layout.sizes[1];
#pragma unroll
                for (int k = 0; k < N; ++k)
                    offset[c][k] = r * layout.strides[k][0] + (layout.strides[k][1] != 0 ? col : 0);
            } else {
#pragma unroll
                for (int k = 0; k < N; ++k) offset[c][k] = layout.strides[k][0] != 0 ? e : 0;
            }
        }
        cuda_chunk<S, L> in[Chunks][NIn > 0 ? NIn : 1];
#pragma unroll
        for (int c = 0; c < Chunks; ++c) {
            if (!live[c]) continue;
#pragma unroll
            for (int k = 0; k < NIn; ++k) {
                S const* p = static_cast<S const*>(layout.data[NOut + k]) + offset[c][NOut + k];
                in[c][k] = layout.strides[NOut + k][Rank - 1] != 0 ? cuda_load_chunk<S, L>(p)
                                                                   : cuda_splat_chunk<S, L>(load_input(p));
            }
        }
#pragma unroll
        for (int c = 0; c < Chunks; ++c) {
            if (!live[c]) continue;
            C out[NOut][L];
#pragma unroll
            for (int j = 0; j < L; ++j) {
                auto const r = [&]<std::size_t... K>(std::index_sequence<K...>) {
                    return f(in[c][K].template value<D, C>(j)...);
                }
                (std::make_index_sequence<NIn>{});
                [&]<std::size_t... O>(std::index_sequence<O...>) { ((out[O][j] = result_value<O, C>(r)), ...); }
                (std::make_index_sequence<NOut>{});
            }
#pragma unroll
            for (int o = 0; o < NOut; ++o)
                cuda_store_chunk<S, L>(static_cast<S*>(layout.data[o]) + offset[c][o], cuda_pack_chunk<D, S>(out[o]));
        }
    }
}

// Elements [first, numel) of a one-dimensional layout, one per thread: the
// vector kernel's tail.
template <typename S, typename C, int NOut, int NIn, typename F>
__global__ void cuda_transform_tail_kernel(F const f, cuda_layout<NOut + NIn> const layout, std::int64_t const first) {
    std::int64_t const i = first + threadIdx.x;
    if (i >= layout.numel) return;
    auto const r = [&]<std::size_t... K>(std::index_sequence<K...>) {
        return f(static_cast<C>(
            load_input(static_cast<S const*>(layout.data[NOut + K]) + i * layout.strides[NOut + K][0]))...);
    }
    (std::make_index_sequence<NIn>{});
    [&]<std::size_t... O>(std::index_sequence<O...>) {
        ((static_cast<S*>(layout.data[O])[i * layout.strides[O][0]] = static_cast<S>(result_value<O, C>(r))), ...);
    }
    (std::make_index_sequence<NOut>{});
}

template <int Block, int PerThread, typename S, typename C, int NOut, int NIn, typename F>
__global__ void __launch_bounds__(Block)
    cuda_transform_general_kernel(F const f, cuda_layout<NOut + NIn> const layout) {
    constexpr int N = NOut + NIn;
    constexpr std::int64_t tile = std::int64_t{Block} * PerThread;
    for (std::int64_t base = static_cast<std::int64_t>(blockIdx.x) * tile; base < layout.numel;
         base += static_cast<std::int64_t>(gridDim.x) * tile) {
#pragma unroll
        for (int j = 0; j < PerThread; ++j) {
            std::int64_t i = base + j * Block + threadIdx.x;
            if (i >= layout.numel) break;
            std::int64_t offset[N] = {};
            for (std::int32_t d = layout.rank - 1; d > 0; --d) {
                std::int64_t const outer = layout.dividers[d].divide(i);
                std::int64_t const coord = i - outer * layout.sizes[d];
#pragma unroll
                for (int k = 0; k < N; ++k) offset[k] += coord * layout.strides[k][d];
                i = outer;
            }
            if (layout.rank > 0)
#pragma unroll
                for (int k = 0; k < N; ++k) offset[k] += i * layout.strides[k][0];
            auto const r = [&]<std::size_t... K>(std::index_sequence<K...>) {
                return f(
                    static_cast<C>(load_input(static_cast<S const*>(layout.data[NOut + K]) + offset[NOut + K]))...);
            }
            (std::make_index_sequence<NIn>{});
            [&]<std::size_t... O>(std::index_sequence<O...>) {
                ((static_cast<S*>(layout.data[O])[offset[O]] = static_cast<S>(result_value<O, C>(r))), ...);
            }
            (std::make_index_sequence<NOut>{});
        }
    }
}

// 16-byte chunks per thread in the vector kernel over Rank dimensions: two
// for 8-byte types, and for 2- and 4-byte ones over one dimension; else one.
// One left f32 softplus short of copy bandwidth on an H200, and 2-byte
// softplus once its per-value work had shrunk; two made f32 broadcasts per
// row and 2-byte broadcasts over rows slower, and four made f64 slower
// (docs/benchmarks.md, bench/cuda/experiments/transform_chunks.cu and
// report_kernels.cu).
template <typename S, int Rank>
inline constexpr int cuda_vector_chunks = sizeof(S) == 8 || (sizeof(S) >= 2 && Rank == 1) ? 2 : 1;

// Whether the vector kernel can run the layout with L elements a chunk.
template <typename S, int L>
bool cuda_vector_layout(elementwise_layout const& l) {
    if (L < 2 || l.rank < 1 || l.rank > 2) return false;
    std::int64_t const row = l.row_size();
    if (l.rank == 2 && row % L != 0) return false;
    for (int k = 0; k < l.operands; ++k) {
        std::int64_t const inner = l.inner_stride(k);
        if (inner != 0 && inner != 1) return false;
        if (inner == 0 && k < l.outputs) return false;
        if (inner == 1) {
            if (reinterpret_cast<std::uintptr_t>(l.data[k]) % 16 != 0) return false;
            if (l.rank == 2 && (l.strides[k][0] * static_cast<std::int64_t>(sizeof(S))) % 16 != 0) return false;
        }
    }
    return true;
}

// Launches on the current device, which must be the operands' (`operands_device`).
template <dtype D, typename S, typename C, int NOut, int NIn, typename Tag, typename F>
void cuda_transform(Tag, F const& f, elementwise_layout const& layout, int operands_device) {
    if (layout.numel == 0) return;
    constexpr int N = NOut + NIn;
    constexpr int block = cuda_block_size<Tag>();
    constexpr int per_thread = cuda_per_thread<Tag>();
    constexpr int lanes = cuda_values_per_chunk<S>;
    int const device = require_current_device("transform", operands_device);
    auto const stream = static_cast<cudaStream_t>(cuda_current_stream_handle());
    cuda_layout<N> const params = to_cuda_layout<N>(layout);
    if (cuda_vector_layout<S, lanes>(layout)) {
        std::int64_t const chunks = layout.numel / lanes;
        auto const launch = [&]<int Rank>(std::integral_constant<int, Rank>) {
            constexpr int chunks_per_thread = cuda_vector_chunks<S, Rank>;
            constexpr std::int64_t tile = std::int64_t{block} * chunks_per_thread;
            std::int64_t const tiles = (chunks + tile - 1) / tile;
            if (tiles == 0) return;
            unsigned const grid = static_cast<unsigned>(tiles < cuda_max_grid ? tiles : cuda_max_grid);
            cuda_transform_vector_kernel<block, chunks_per_thread, lanes, Rank, D, S, C, NOut, NIn>
                <<<grid, block, 0, stream>>>(f, params, chunks);
        };
        if (layout.rank == 2)
            launch(std::integral_constant<int, 2>{});
        else
            launch(std::integral_constant<int, 1>{});
        std::int64_t const tail = layout.numel - chunks * lanes;  // only for one dimension
        if (tail > 0) cuda_transform_tail_kernel<S, C, NOut, NIn><<<1, lanes, 0, stream>>>(f, params, chunks * lanes);
    } else {
        constexpr std::int64_t tile = std::int64_t{block} * per_thread;
        std::int64_t const tiles = (layout.numel + tile - 1) / tile;
        unsigned const grid = static_cast<unsigned>(tiles < cuda_max_grid ? tiles : cuda_max_grid);
        cuda_transform_general_kernel<block, per_thread, S, C, NOut, NIn><<<grid, block, 0, stream>>>(f, params);
    }
    cuda_check(cudaGetLastError(), "transform kernel launch", "cuda:" + std::to_string(device));
}

}  // namespace switchyard::detail
