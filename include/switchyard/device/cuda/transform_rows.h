// transform_rows on CUDA: the runner behind switchyard/transform_rows.h,
// launched on the current stream of the current device.
//
// One block per row, of 256 threads (128 for a resident row of 2-byte
// values: cuda_rows_threads). Thread t owns the row's 16-byte chunks t,
// t + threads, ... (a chunk is 16 / sizeof(storage) values), read with one
// 16-byte load per input where every input is contiguous along the row with
// its row's start 16-byte aligned, or broadcast along it (one value), else
// value by value at the same positions. A row of up to 4096 values is
// loaded once into registers, kept as loaded (storage values, converted
// where used), and every pass (one per statistic, then the map and the
// store) runs from there, so the row is read from memory once; a longer row
// is read again by each pass (from L2 when it fits there). A statistic
// marked with_values() keeps its map's values in shared memory when the row
// is resident and they fit 32 KiB a block (cuda_rows_keeps_values; in the
// compute type, as f receives them; each thread its own, so no barrier),
// and f's pass reads them there; otherwise f's pass computes them again.
// Throughput follows the rows in flight per SM, so the kernel's registers
// are capped to fit as many blocks as a row's values allow.
//
// A statistic is folded by each thread over its values in order, then
// across each warp by shuffles, then every thread folds the warps' values in
// warp order (cuda_block_all_fold): an order fixed by the row's length, so
// results are bitwise the same run to run, whatever the GPU; except that
// float amax and amin on sm_80 and later are the hardware's NaN-propagating
// max and min, which order -0 below +0 and return the canonical NaN, where
// the portable combine keeps the first zero or NaN it meets.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

#include "switchyard/core/dtype.h"
#include "switchyard/core/row_stat.h"
#include "switchyard/device/cuda/current_stream.h"
#include "switchyard/device/cuda/current_device.h"
#include "switchyard/device/cuda/error.h"
#include "switchyard/device/cuda/reduce.h"
#include "switchyard/device/cuda/transform.h"
#include "switchyard/view/load.h"
#include "switchyard/view/row_layout.h"

namespace switchyard::detail {

// Threads per row (a block), and the storage values per thread and input
// that a row keeps in registers: rows of up to 4096 values stay resident.
// Resident rows of 2-byte types take 128 threads of four chunks each: a
// row's fixed work (its start, the block folds) spreads over twice the
// values, and more rows fit in flight per SM. Rows that each pass reads
// again keep 256 threads, which keep more of their loads in flight.
inline constexpr int cuda_rows_resident_row = 4096;
template <typename S, bool Resident>
inline constexpr int cuda_rows_threads = Resident && sizeof(S) == 2 ? 128 : 256;
template <typename S, bool Resident>
inline constexpr int cuda_rows_resident_values = cuda_rows_resident_row / cuda_rows_threads<S, Resident>;
// Blocks (rows) per SM the kernel's registers must allow: a row's passes
// wait on its loads and barriers, so throughput follows the rows in flight
// (docs/benchmarks.md). As many as the registers allow, up to 1536
// threads: about cuda_rows_other_registers go to everything but the
// values, which stay packed as loaded (16 bytes in four registers, whatever
// the dtype); more where a thread unpacks four chunks of 2-byte values.
template <int Threads>
inline constexpr int cuda_rows_other_registers = Threads == 256 ? 28 : 40;
inline constexpr int cuda_registers_per_sm = 65536;
template <typename S, int NIn, bool Resident>
inline constexpr int cuda_rows_min_blocks = [] {
    constexpr int threads = cuda_rows_threads<S, Resident>;
    int const value_registers = NIn * (cuda_rows_resident_row / threads) * static_cast<int>(sizeof(S)) / 4;
    int const registers =
        (cuda_rows_other_registers<threads> + value_registers + 7) / 8 * 8;  // a warp's come in eights
    int const blocks = cuda_registers_per_sm / threads / registers;
    int const most = 1536 / threads;
    return blocks < 1 ? 1 : blocks > most ? most : blocks;
}();

// Whether a resident row keeps its with_values() statistics' NV values (in
// the compute type, in shared memory: in registers they would cost the
// rows in flight that the registers allow), up to 32 KiB a block; past that
// f's pass computes them again.
inline constexpr std::size_t cuda_rows_kept_bytes = 32768;
template <typename C, int NV>
inline constexpr bool cuda_rows_keeps_values = [] {
    std::size_t const bytes = sizeof(C) * NV * cuda_rows_resident_row;
    return NV > 0 && bytes <= cuda_rows_kept_bytes;
}();

// 16 bytes of a thread's kept values: its values 4j..4j+3 (in the order it
// folds them; 2j, 2j+1 for double, 16 / sizeof(C) for other compute types)
// side by side, and the threads' groups in turn, so a warp keeps and reads
// them with 16-byte shared accesses free of bank conflicts.
template <typename C>
struct alignas(16) cuda_rows_kept_group {
    static constexpr int size = 16 / static_cast<int>(sizeof(C));
    C v[size];
};

// The layout as a kernel parameter: the output, then NIn inputs.
template <int N>
struct cuda_row_layout {
    cuda_layout<N> starts;
    std::int64_t inner[N];
    std::int64_t row_size;
    std::int64_t rows;

    // Operand k's offset at the start of row m.
    __device__ __forceinline__ std::int64_t row_offset(int k, std::int64_t m) const {
        return cuda_offset_of(m, starts.rank, starts.dividers, starts.strides[k]);
    }
};

// Chunk q of each input's row (positions past the row's end are left as
// they are); values are converted where they are used.
template <typename S, int NIn, int L, typename P>
__device__ __forceinline__ void cuda_rows_load(P const& p, S const* const* in, bool vector, std::int64_t q,
                                               cuda_chunk<S, L> (&values)[NIn]) {
    std::int64_t const first = q * L;
    if (vector && first + L <= p.row_size) {
#pragma unroll
        for (int k = 0; k < NIn; ++k) {
            // An input broadcast along the row gives one value.
            values[k] =
                p.inner[1 + k] == 1 ? cuda_load_chunk<S, L>(in[k] + first) : cuda_splat_chunk<S, L>(load_input(in[k]));
        }
    } else {
#pragma unroll
        for (int k = 0; k < NIn; ++k) values[k] = {};  // set() merges into whole words
#pragma unroll
        for (int e = 0; e < L; ++e)
            if (first + e < p.row_size)
#pragma unroll
                for (int k = 0; k < NIn; ++k) values[k].set(e, load_input(in[k] + (first + e) * p.inner[1 + k]));
    }
}

// body(e) for the chunk's values e < valid (its positions inside the row).
// A whole chunk, every chunk but a row's last, takes no test per value.
template <int L, typename Body>
__device__ __forceinline__ void cuda_rows_each_value(int valid, Body&& body) {
    if (valid == L) {
#pragma unroll
        for (int e = 0; e < L; ++e) body(e);
    } else {
#pragma unroll
        for (int e = 0; e < L; ++e)
            if (e < valid) body(e);
    }
}

// combine(a, b), with float amax and amin as the GPU's NaN-propagating
// instruction (one, where the portable form takes three).
template <typename Combine, typename A>
__device__ __forceinline__ A cuda_rows_combine(Combine const& combine, A a, A b) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    if constexpr (std::is_same_v<A, float> && std::is_same_v<Combine, max_combine>) {
        float r;
        asm("max.NaN.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b));
        return r;
    } else if constexpr (std::is_same_v<A, float> && std::is_same_v<Combine, min_combine>) {
        float r;
        asm("min.NaN.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b));
        return r;
    }
#endif
    return combine(a, b);
}

// v combined across the block, the result in every thread: shuffles within
// each warp, lane 0's value to shared memory, then each thread folds the
// warps' values in warp order. One barrier; `buffer` alternates between two
// halves, so a next call can write while slow threads still read this one's
// (the call after that writes only past the next call's barrier).
template <int Threads, typename A, typename Combine>
__device__ __forceinline__ A cuda_block_all_fold(Combine const& combine, A v, A (&buffer)[2][Threads / 32],
                                                 int& phase) {
#pragma unroll
    for (int o = 16; o > 0; o /= 2)
        v = cuda_rows_combine(combine, v, static_cast<A>(__shfl_xor_sync(0xffffffffu, v, o)));
    A* const warps = buffer[phase];
    phase ^= 1;
    if (threadIdx.x % 32 == 0) warps[threadIdx.x / 32] = v;
    __syncthreads();
    A r = warps[0];
#pragma unroll
    for (int w = 1; w < Threads / 32; ++w) r = cuda_rows_combine(combine, r, warps[w]);
    return r;
}

// Where one row's operands start, and whether they take 16-byte accesses.
template <typename S, int NIn>
struct cuda_row_start {
    S* out;
    S const* in[NIn];
    bool vector;      // every input contiguous and 16-byte aligned, or broadcast
    bool vector_out;  // the output contiguous and 16-byte aligned
};

template <typename S, int NIn, int L, typename P>
__device__ __forceinline__ cuda_row_start<S, NIn> cuda_row_start_of(P const& p, std::int64_t m) {
    cuda_row_start<S, NIn> r;
    r.out = static_cast<S*>(p.starts.data[0]) + p.row_offset(0, m);
    r.vector = L > 1;
    for (int k = 0; k < NIn; ++k) {
        r.in[k] = static_cast<S const*>(p.starts.data[1 + k]) + p.row_offset(1 + k, m);
        r.vector = r.vector && (p.inner[1 + k] == 0 ||
                                (p.inner[1 + k] == 1 && reinterpret_cast<std::uintptr_t>(r.in[k]) % 16 == 0));
    }
    r.vector_out = L > 1 && p.inner[0] == 1 && reinterpret_cast<std::uintptr_t>(r.out) % 16 == 0;
    return r;
}

// Which of the with_values() statistics statistic I is (-1: none).
template <typename Stats, int I>
inline constexpr int cuda_rows_values_slot = [] {
    for (int w = 0; w < Stats::values_count; ++w)
        if (Stats::with_values.at[w] == I) return w;
    return -1;
}();

// Resident: the row stays in registers (Chunks 16-byte chunks per thread
// and input) and its with_values() statistics' values in shared memory
// where cuda_rows_keeps_values allows; else each pass loads the row again
// and f's pass computes those values again.
template <dtype D, typename S, typename C, int NIn, bool Resident, typename Stats, typename F>
__global__ void __launch_bounds__((cuda_rows_threads<S, Resident>), (cuda_rows_min_blocks<S, NIn, Resident>))
    cuda_rows_kernel(Stats const stats, F const f, cuda_row_layout<1 + NIn> const p) {
    constexpr int L = cuda_values_per_chunk<S>;
    constexpr int Threads = cuda_rows_threads<S, Resident>;
    constexpr int Values = cuda_rows_resident_values<S, Resident>;
    constexpr int Chunks = Resident ? (Values / L > 0 ? Values / L : 1) : 1;
    constexpr int NS = Stats::count;
    constexpr int NV = Stats::values_count;
    constexpr int Kept = Resident && cuda_rows_keeps_values<C, NV> ? NV : 0;
    using chunk = cuda_chunk<S, L>;
    __shared__ C warp_values[2][Threads / 32];
    using kept_group = cuda_rows_kept_group<C>;
    constexpr int V = kept_group::size;
    static_assert(Kept == 0 || (Chunks * L) % V == 0, "a thread's kept values fill whole groups");
    __shared__ kept_group kept[Kept > 0 ? Kept : 1][Kept > 0 ? Chunks * L / V : 1][Kept > 0 ? Threads : 1];
    int phase = 0;
    std::int64_t const n = p.row_size;
    for (std::int64_t m = blockIdx.x; m < p.rows; m += gridDim.x) {
        cuda_row_start<S, NIn> const row = cuda_row_start_of<S, NIn, L>(p, m);
        chunk resident[Chunks][NIn];
        if constexpr (Resident) {
#pragma unroll
            for (int c = 0; c < Chunks; ++c) {
                std::int64_t const q = std::int64_t{c} * Threads + threadIdx.x;
                if (q * L < n) cuda_rows_load<S, NIn, L>(p, row.in, row.vector, q, resident[c]);
            }
        }
        // body(c, q, valid, values) for each of this thread's chunks of the
        // row, in order: c counts them (0 where not resident), q is the
        // chunk's index in the row, valid how many of its values are inside.
        auto const each_chunk = [&](auto&& body) {
            auto const valid_in = [&](std::int64_t q) {
                std::int64_t const left = n - q * L;
                return left < L ? static_cast<int>(left) : L;
            };
            if constexpr (Resident) {
#pragma unroll
                for (int c = 0; c < Chunks; ++c) {
                    std::int64_t const q = std::int64_t{c} * Threads + threadIdx.x;
                    if (q * L < n) body(c, q, valid_in(q), resident[c]);
                }
            } else {
                for (std::int64_t q = threadIdx.x; q * L < n; q += Threads) {
                    chunk values[NIn];
                    cuda_rows_load<S, NIn, L>(p, row.in, row.vector, q, values);
                    body(0, q, valid_in(q), values);
                }
            }
        };
        C s[NS > 0 ? NS : 1];
        auto const statistic = [&](auto index) {
            constexpr std::size_t I = decltype(index)::value;
            auto const& stat = stats.template get<I>();
            constexpr int slot = Kept > 0 ? cuda_rows_values_slot<Stats, static_cast<int>(I)> : -1;
            C acc = stat.combine.template identity<C>();
            each_chunk([&](int c, std::int64_t, int valid, chunk const(&values)[NIn]) {
                [&]<std::size_t... K, std::size_t... J>(std::index_sequence<K...>, std::index_sequence<J...>) {
                    cuda_rows_each_value<L>(valid, [&](int e) {
                        C const value = static_cast<C>(stat.map(values[K].template value<D, C>(e)..., s[J]...));
                        if constexpr (slot >= 0) kept[slot][(c * L + e) / V][threadIdx.x].v[(c * L + e) % V] = value;
                        acc = cuda_rows_combine(stat.combine, acc, value);
                    });
                }
                (std::make_index_sequence<NIn>{}, std::make_index_sequence<I>{});
            });
            s[I] = cuda_block_all_fold<Threads>(stat.combine, acc, warp_values, phase);
        };
        [&]<std::size_t... I>(std::index_sequence<I...>) { (statistic(std::integral_constant<std::size_t, I>{}), ...); }
        (std::make_index_sequence<NS>{});
        each_chunk([&](int c, std::int64_t q, int valid, chunk const(&values)[NIn]) {
            [&]<std::size_t... K, std::size_t... W, std::size_t... J>(
                std::index_sequence<K...>, std::index_sequence<W...>, std::index_sequence<J...>) {
                // With_values() statistic W's value at position e: kept, or its map again.
                auto const value = [&]<std::size_t Wi>(std::integral_constant<std::size_t, Wi>, int e) {
                    if constexpr (Kept > 0) {
                        return kept[Wi][(c * L + e) / V][threadIdx.x].v[(c * L + e) % V];
                    } else {
                        constexpr int I = Stats::with_values.at[Wi];
                        return [&]<std::size_t... P>(std::index_sequence<P...>) {
                            return static_cast<C>(
                                stats.template get<I>().map(values[K].template value<D, C>(e)..., s[P]...));
                        }
                        (std::make_index_sequence<I>{});
                    }
                };
                C r[L];
                cuda_rows_each_value<L>(valid, [&](int e) {
                    r[e] = static_cast<C>(f(values[K].template value<D, C>(e)...,
                                            value(std::integral_constant<std::size_t, W>{}, e)..., s[J]...));
                });
                std::int64_t const first = q * L;
                if (row.vector_out && valid == L) {
                    cuda_store_chunk<S, L>(row.out + first, cuda_pack_chunk<D, S, C, L>(r));
                } else {
                    cuda_rows_each_value<L>(valid,
                                            [&](int e) { row.out[(first + e) * p.inner[0]] = static_cast<S>(r[e]); });
                }
            }
            (std::make_index_sequence<NIn>{}, std::make_index_sequence<NV>{}, std::make_index_sequence<NS>{});
        });
    }
}

// Launches on the current device, which must be the operands'.
template <dtype D, typename S, typename C, int NIn, typename Stats, typename F>
void cuda_transform_rows(Stats const& stats, F const& f, row_layout const& layout, int operands_device) {
    char const* const op = "transform_rows";
    if (layout.rows == 0 || layout.row_size == 0) return;
    int const device = require_current_device(op, operands_device);
    std::string const where = std::string(op) + " on cuda:" + std::to_string(device);
    auto const stream = static_cast<cudaStream_t>(cuda_current_stream_handle());
    cuda_row_layout<1 + NIn> p{};
    p.starts = to_cuda_layout<1 + NIn>(layout.starts);
    for (int k = 0; k < 1 + NIn; ++k) p.inner[k] = layout.inner[k];
    p.row_size = layout.row_size;
    p.rows = layout.rows;
    auto const grid = static_cast<unsigned>(layout.rows < cuda_max_grid ? layout.rows : cuda_max_grid);
    static_assert(cuda_rows_resident_values<S, true> % cuda_values_per_chunk<S> == 0, "whole chunks per thread");
    if (layout.row_size <= cuda_rows_resident_row)
        cuda_rows_kernel<D, S, C, NIn, true, Stats, F><<<grid, cuda_rows_threads<S, true>, 0, stream>>>(stats, f, p);
    else
        cuda_rows_kernel<D, S, C, NIn, false, Stats, F><<<grid, cuda_rows_threads<S, false>, 0, stream>>>(stats, f, p);
    cuda_check(cudaGetLastError(), "transform_rows kernel launch", where);
}

}  // namespace switchyard::detail
