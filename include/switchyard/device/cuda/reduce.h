// transform_reduce on CUDA: the runner behind switchyard/reduce.h, launched
// on the current stream of the current device, with no atomics.
//
// As on the CPU, the order in which values are combined depends only on the
// layout (view/reduction_layout.h), so results are bitwise the same run to
// run, whatever the GPU and its number of SMs:
//  - Rows of up to 1024 chunks of 16 bytes (reduced_inner; 4096 floats,
//    8192 halves): a group of G lanes per row, G the power of two from 1 to
//    32 that covers the row's chunks (up to 32). Lane j combines, in order,
//    chunks j, j + G, ...; then a fixed tree of shuffles within the group.
//  - Longer rows: each output's range is cut into tasks of 256 threads x 8
//    chunks (8192 floats, 16384 halves); a task is one block. Thread t
//    combines, in order, chunks t, t + 256, ...; then a fixed tree: warp
//    shuffles, then the warps.
//  - In both, a chunk is read with one 16-byte load per input where every
//    input is contiguous along the row and 16-byte aligned or broadcast
//    along it (one value), else value by value at the same positions in the
//    same order (so alignment never changes a result).
//  - Column reductions: a thread per output (neighbouring threads read
//    neighbouring elements); each task folds a run of reduce_column_run_cuda
//    reduced indices serially.
//  - Where an output has several tasks, their partials (scratch memory from
//    switchyard's stream-ordered pool) are folded by one block per output:
//    thread t takes partials t, t + T, ... in order, then the same tree, with
//    T = 1024 threads for outputs of 4096 tasks or more, else 256.
// f16 and bf16 accumulate in float (compute_t). argmin and argmax fold
// (value, index) pairs, the index read from the layout's index operand.
#pragma once

#include <cuda_runtime.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

#include "switchyard/core/combine.h"
#include "switchyard/core/dtype.h"
#include "switchyard/device/cuda/current_stream.h"
#include "switchyard/device/cuda/current_device.h"
#include "switchyard/device/cuda/error.h"
#include "switchyard/device/cuda/scratch_pool.h"
#include "switchyard/device/cuda/transform.h"
#include "switchyard/view/fast_divide.h"
#include "switchyard/view/load.h"
#include "switchyard/view/reduction_layout.h"

namespace switchyard::detail {

inline constexpr int reduce_block_cuda = 256;
inline constexpr int reduce_chunks_cuda = 8;  // 16-byte chunks per thread and task
// Blocks per SM the row kernel's registers must allow (0: no bound, as if
// __launch_bounds__ had no second argument). Eight for a plain combine over
// one input of at most 4 bytes: its read rate follows the loads in flight,
// and unbounded nvcc spent 40 registers where 32 do (docs/benchmarks.md).
// Other kernels (indexed combines keeping (value, index) pairs, f64, several
// inputs) are left unbounded: a bound of five spilled f32 argmax, and the
// others were not measured.
template <typename S, int NIn, typename Combine>
inline constexpr int reduce_rows_min_blocks_cuda = !is_indexed_combine_v<Combine> && NIn == 1 && sizeof(S) <= 4 ? 8 : 0;
inline constexpr std::int64_t reduce_column_run_cuda = 64;
inline constexpr std::int64_t reduce_short_row_chunks_cuda = 1024;  // longer rows: a block per task
// Blocks per SM that short rows' grid is capped to; each block then loops
// over groups of rows, where a block per group cost more to start than its
// rows of 32-128 values took to read (docs/benchmarks.md).
inline constexpr std::int64_t reduce_short_row_blocks_per_sm = 32;

// The SMs of `device`, asked once per device (ids past 64: every call).
// `where` names the op and device in an error.
inline std::int64_t cuda_multiprocessors(int device, std::string const& where) {
    static std::atomic<int> known[64] = {};
    int count = device >= 0 && device < 64 ? known[device].load(std::memory_order_relaxed) : 0;
    if (count == 0) {
        cuda_check(cudaDeviceGetAttribute(&count, cudaDevAttrMultiProcessorCount, device),
                   "cudaDeviceGetAttribute(MultiProcessorCount)", where);
        if (device >= 0 && device < 64) known[device].store(count, std::memory_order_relaxed);
    }
    return count;
}

// The layout as a kernel parameter: the output, then NIn inputs, then for
// an indexed reduction the index operand.
template <int NIn, bool Indexed = false>
struct cuda_reduction {
    static constexpr int N = NIn + 1 + (Indexed ? 1 : 0);
    void* data[N];
    std::int64_t kept_strides[N][max_rank];
    std::int64_t reduced_strides[N][max_rank];
    fast_divider kept_div[max_rank];
    fast_divider reduced_div[max_rank];
    std::int32_t kept_rank;
    std::int32_t reduced_rank;
    std::int64_t kept_numel;
    std::int64_t reduced_numel;
    std::int64_t task_size;  // reduced indices per task
    std::int64_t tasks;      // per output (row) or per group of threads' outputs (column)

    // Offsets of operand k at kept index m and reduced index r (row-major
    // within each group).
    __device__ __forceinline__ std::int64_t kept_offset(int k, std::int64_t m) const {
        return cuda_offset_of(m, kept_rank, kept_div, kept_strides[k]);
    }
    __device__ __forceinline__ std::int64_t reduced_offset(int k, std::int64_t r) const {
        // The test first: without it the f32 row kernel spilled at its register bound.
        if (reduced_rank == 1) return r * reduced_strides[k][0];
        return cuda_offset_of(r, reduced_rank, reduced_div, reduced_strides[k]);
    }
};

template <int NIn, bool Indexed>
cuda_reduction<NIn, Indexed> to_cuda_reduction(reduction_layout const& l, std::int64_t task_size) {
    cuda_reduction<NIn, Indexed> c{};
    for (int k = 0; k < c.N; ++k) {
        c.data[k] = l.data[k];
        for (int d = 0; d < max_rank; ++d) {
            c.kept_strides[k][d] = l.kept_strides[k][d];
            c.reduced_strides[k][d] = l.reduced_strides[k][d];
        }
    }
    for (int d = 0; d < max_rank; ++d) {
        c.kept_div[d] = fast_divider(l.kept_sizes[d] > 0 ? l.kept_sizes[d] : 1);
        c.reduced_div[d] = fast_divider(l.reduced_sizes[d] > 0 ? l.reduced_sizes[d] : 1);
    }
    c.kept_rank = l.kept_rank;
    c.reduced_rank = l.reduced_rank;
    c.kept_numel = l.kept_numel;
    c.reduced_numel = l.reduced_numel;
    c.task_size = task_size;
    c.tasks = (l.reduced_numel + task_size - 1) / task_size;
    return c;
}

// Lane o lanes down's accumulator, within the warp or within its segment
// of `width` lanes (a power of two).
template <typename A>
__device__ __forceinline__ A cuda_shuffle_down(A v, int o, int width = 32) {
    if constexpr (requires { v.index; })
        return {static_cast<decltype(v.value)>(__shfl_down_sync(0xffffffffu, v.value, o, width)),
                __shfl_down_sync(0xffffffffu, v.index, o, width)};
    else
        return static_cast<A>(__shfl_down_sync(0xffffffffu, v, o, width));
}

// v combined across the block of Threads threads in a fixed tree; the
// result is thread 0's. `identity` is combine's identity for the
// accumulator's value type.
template <int Threads = reduce_block_cuda, typename A, typename Combine>
__device__ __forceinline__ A cuda_block_fold(Combine const& combine, A v, A identity) {
    static_assert(Threads >= 32 && Threads <= 1024 && (Threads & (Threads - 1)) == 0,
                  "the tree folds a power of two of whole warps, at most 32");
    constexpr int warps = Threads / 32;
    __shared__ A warp_values[warps];
    for (int o = 16; o > 0; o /= 2) v = combine(v, cuda_shuffle_down(v, o));
    int const warp = static_cast<int>(threadIdx.x) / 32, lane = static_cast<int>(threadIdx.x) % 32;
    if (lane == 0) warp_values[warp] = v;
    __syncthreads();
    if (warp == 0) {
        v = lane < warps ? warp_values[lane] : identity;
        for (int o = warps / 2; o > 0; o /= 2) v = combine(v, cuda_shuffle_down(v, o));
    }
    return v;
}

// Output m's result: the value, or an indexed reduction's int64 index.
template <typename S, typename A, typename P>
__device__ __forceinline__ void cuda_store_result(P const& p, std::int64_t m, A const& v) {
    if constexpr (requires { v.index; })
        static_cast<std::int64_t*>(p.data[0])[p.kept_offset(0, m)] = v.index;
    else
        static_cast<S*>(p.data[0])[p.kept_offset(0, m)] = static_cast<S>(v);
}

template <typename S, typename A, typename P>
__device__ __forceinline__ void cuda_store_reduced(P const& p, A* partials, std::int64_t m, std::int64_t task, A v) {
    if (p.tasks == 1)
        cuda_store_result<S>(p, m, v);
    else
        partials[m * p.tasks + task] = v;
}

// One value of f for combine: the value, or (value, its index r) for an
// indexed reduction.
template <typename C, typename Combine, int NIn, bool Indexed>
__device__ __forceinline__ accumulator_t<Combine, C> cuda_element(cuda_reduction<NIn, Indexed> const& p, C value,
                                                                  std::int64_t r) {
    if constexpr (Indexed)
        return {value, p.reduced_offset(NIn + 1, r)};
    else
        return value;
}

// acc with f's value at reduced position r folded in. `forward`: an indexed
// reduction over one reduced dimension, where a thread meets positions in
// increasing order and the index is position x stride, so the thread keeps
// positions, folds them with combine.advance, and scales the position it
// keeps into an index once (cuda_forward_index).
template <typename C, typename Combine, int NIn, bool Indexed, typename A>
__device__ __forceinline__ A cuda_fold_value(Combine const& combine, cuda_reduction<NIn, Indexed> const& p, A acc,
                                             C value, std::int64_t r, bool forward) {
    if constexpr (Indexed) {
        if (forward) return combine.advance(acc, value, r);
    }
    return combine(acc, cuda_element<C, Combine>(p, value, r));
}

template <typename A, int NIn, bool Indexed>
__device__ __forceinline__ A cuda_forward_index(cuda_reduction<NIn, Indexed> const& p, A acc) {
    if constexpr (Indexed)
        if (acc.index != std::numeric_limits<std::int64_t>::max()) acc.index *= p.reduced_strides[NIn + 1][0];
    return acc;
}

// acc with f's values at positions first, ..., first + L - 1 folded in, in
// order. An indexed reduction walking forward takes the values' extreme and
// the first value that matches it, and keeps them if the extreme replaces
// acc: the same result as folding the values one by one, with selects and
// no branch, so the loads of later chunks need not wait for this fold.
template <typename C, typename Combine, int NIn, bool Indexed, typename A, int L>
__device__ __forceinline__ A cuda_fold_values(Combine const& combine, cuda_reduction<NIn, Indexed> const& p, A acc,
                                              C const (&values)[L], std::int64_t first, bool forward) {
    if constexpr (Indexed) {
        if (forward) {
            C extreme = values[0];
#pragma unroll
            for (int v = 1; v < L; ++v) extreme = typename Combine::extreme_combine{}(extreme, values[v]);
            C chosen = values[L - 1];
            int position = L - 1;
#pragma unroll
            for (int v = L - 1; v-- > 0;) {
                bool const match = Combine::matches(values[v], extreme);
                chosen = match ? values[v] : chosen;
                position = match ? v : position;
            }
            bool const take = combine.replaces(acc, extreme);
            return A{take ? chosen : acc.value, take ? first + position : acc.index};
        }
    }
#pragma unroll
    for (int v = 0; v < L; ++v) acc = cuda_fold_value(combine, p, acc, values[v], first + v, forward);
    return acc;
}

// f's values at the L positions of a chunk of 16 bytes in every input,
// where each input is contiguous along the row (base + first is 16-byte
// aligned) or broadcast along it.
template <dtype D, typename S, typename C, int L, int NIn, bool Indexed, typename F>
__device__ __forceinline__ void cuda_chunk_values(F const& f, cuda_reduction<NIn, Indexed> const& p,
                                                  S const* const (&base)[NIn], std::int64_t first, C (&values)[L]) {
    cuda_chunk<S, L> chunk[NIn];
#pragma unroll
    for (int k = 0; k < NIn; ++k) {
        // An input broadcast along the row gives one value.
        chunk[k] = p.reduced_strides[1 + k][0] == 1 ? cuda_load_chunk<S, L>(base[k] + first)
                                                    : cuda_splat_chunk<S, L>(load_input(base[k]));
    }
    [&]<std::size_t... K>(std::index_sequence<K...>) {
#pragma unroll
        for (int v = 0; v < L; ++v) values[v] = static_cast<C>(f(chunk[K].template value<D, C>(v)...));
    }
    (std::make_index_sequence<NIn>{});
}

// acc with f's values at positions first, ... (those before r1) folded in
// one by one, read value by value: the positions and order of the chunk path.
template <typename S, typename C, int L, typename Combine, int NIn, bool Indexed, typename F, typename A>
__device__ __forceinline__ A cuda_fold_scalars(Combine const& combine, F const& f,
                                               cuda_reduction<NIn, Indexed> const& p, S const* const (&base)[NIn],
                                               A acc, std::int64_t first, std::int64_t r1, bool forward) {
    for (int v = 0; v < L && first + v < r1; ++v) [&]<std::size_t... K>(std::index_sequence<K...>) {
            acc = cuda_fold_value(
                combine, p, acc,
                static_cast<C>(f(static_cast<C>(load_input(base[K] + p.reduced_offset(1 + K, first + v)))...)),
                first + v, forward);
        }
    (std::make_index_sequence<NIn>{});
    return acc;
}

// acc with the chunk of f's values at positions first, ... (those before
// r1) folded in: with 16-byte loads where `vector` allows and the chunk is
// whole, else value by value.
template <dtype D, typename S, typename C, int L, typename Combine, int NIn, bool Indexed, typename F, typename A>
__device__ __forceinline__ A cuda_fold_chunk(Combine const& combine, F const& f, cuda_reduction<NIn, Indexed> const& p,
                                             S const* const (&base)[NIn], A acc, std::int64_t first, std::int64_t r1,
                                             bool vector, bool forward) {
    if (vector && first + L <= r1) {
        C values[L];
        cuda_chunk_values<D, S>(f, p, base, first, values);
        return cuda_fold_values(combine, p, acc, values, first, forward);
    }
    return cuda_fold_scalars<S, C, L>(combine, f, p, base, acc, first, r1, forward);
}

// Where every input of row m allows the chunk path from position r0: a
// single reduced dimension, each input contiguous and 16-byte aligned at r0
// or broadcast along it. base[k] is input k's row.
template <typename S, int L, int NIn, bool Indexed>
__device__ __forceinline__ bool cuda_row_bases(cuda_reduction<NIn, Indexed> const& p, std::int64_t m, std::int64_t r0,
                                               S const* (&base)[NIn]) {
    bool vector = p.reduced_rank == 1 && L > 1;
#pragma unroll
    for (int k = 0; k < NIn; ++k) {
        base[k] = static_cast<S const*>(p.data[1 + k]) + p.kept_offset(1 + k, m);
        std::int64_t const stride = p.reduced_strides[1 + k][0];
        vector = vector && (stride == 0 || (stride == 1 && reinterpret_cast<std::uintptr_t>(base[k] + r0) % 16 == 0));
    }
    return vector;
}

// One block per (output, task) of a row reduction.
template <dtype D, typename S, typename C, int NIn, typename Combine, typename F,
          typename A = accumulator_t<Combine, C>>
__global__ void __launch_bounds__(reduce_block_cuda, (reduce_rows_min_blocks_cuda<S, NIn, Combine>))
    cuda_reduce_rows_kernel(Combine const combine, F const f,
                            cuda_reduction<NIn, is_indexed_combine_v<Combine>> const p, A* partials) {
    constexpr int L = cuda_values_per_chunk<S>;
    for (std::int64_t b = blockIdx.x; b < p.kept_numel * p.tasks; b += gridDim.x) {
        std::int64_t const m = b / p.tasks, task = b % p.tasks;
        std::int64_t const r0 = task * p.task_size;
        std::int64_t const r1 = r0 + p.task_size < p.reduced_numel ? r0 + p.task_size : p.reduced_numel;
        S const* base[NIn];
        bool const vector = cuda_row_bases<S, L>(p, m, r0, base);
        A acc = combine.template identity<C>();
        bool const forward = is_indexed_combine_v<Combine> && p.reduced_rank == 1;
#pragma unroll
        for (int it = 0; it < reduce_chunks_cuda; ++it) {
            std::int64_t const first = r0 + (std::int64_t{it} * reduce_block_cuda + threadIdx.x) * L;
            acc = cuda_fold_chunk<D, S, C, L>(combine, f, p, base, acc, first, r1, vector, forward);
        }
        if (forward) acc = cuda_forward_index(p, acc);
        acc = cuda_block_fold(combine, acc, A(combine.template identity<C>()));
        if (threadIdx.x == 0) cuda_store_reduced<S>(p, partials, m, task, acc);
        __syncthreads();  // the next b reuses the tree's shared memory
    }
}

// Rows of at most reduce_short_row_chunks_cuda chunks: `group` lanes of a
// warp per row (a power of two from 1 to 32, from the row's length), 256 /
// group rows per block, so short rows keep every thread busy and need no
// barrier. Lane j folds chunks j, j + group, ... in order, then the group's
// lanes fold in a fixed tree of shuffles. Its own kernel: sharing one with
// the block path raised that path's register count (docs/benchmarks.md).
template <dtype D, typename S, typename C, int NIn, typename Combine, typename F,
          typename A = accumulator_t<Combine, C>>
__global__ void __launch_bounds__(reduce_block_cuda)
    cuda_reduce_short_rows_kernel(Combine const combine, F const f,
                                  cuda_reduction<NIn, is_indexed_combine_v<Combine>> const p, int const group) {
    constexpr int L = cuda_values_per_chunk<S>;
    int const rows_per_block = reduce_block_cuda / group;
    int const lane = static_cast<int>(threadIdx.x) % group;
    std::int64_t const n = p.reduced_numel;
    bool const forward = is_indexed_combine_v<Combine> && p.reduced_rank == 1;
    for (std::int64_t b = blockIdx.x; b * rows_per_block < p.kept_numel; b += gridDim.x) {
        std::int64_t const m = b * rows_per_block + static_cast<int>(threadIdx.x) / group;
        A acc = combine.template identity<C>();
        if (m < p.kept_numel) {
            S const* base[NIn];
            bool const vector = cuda_row_bases<S, L>(p, m, 0, base);
#pragma unroll 4
            for (std::int64_t first = std::int64_t{lane} * L; first < n; first += std::int64_t{group} * L) {
                acc = cuda_fold_chunk<D, S, C, L>(combine, f, p, base, acc, first, n, vector, forward);
            }
            if (forward) acc = cuda_forward_index(p, acc);
        }
        // Every lane of the warp shuffles, each within its group.
        for (int o = group / 2; o > 0; o /= 2) acc = combine(acc, cuda_shuffle_down(acc, o, group));
        if (m < p.kept_numel && lane == 0) cuda_store_result<S>(p, m, acc);
    }
}

// A thread per output of a column reduction, a task per block of threads
// and run of reduced indices.
template <dtype D, typename S, typename C, int NIn, typename Combine, typename F,
          typename A = accumulator_t<Combine, C>>
__global__ void __launch_bounds__(reduce_block_cuda)
    cuda_reduce_columns_kernel(Combine const combine, F const f,
                               cuda_reduction<NIn, is_indexed_combine_v<Combine>> const p, A* partials) {
    std::int64_t const groups = (p.kept_numel + reduce_block_cuda - 1) / reduce_block_cuda;
    for (std::int64_t b = blockIdx.x; b < groups * p.tasks; b += gridDim.x) {
        std::int64_t const m = b / p.tasks * reduce_block_cuda + threadIdx.x, task = b % p.tasks;
        if (m >= p.kept_numel) continue;
        std::int64_t const r0 = task * p.task_size;
        std::int64_t const r1 = r0 + p.task_size < p.reduced_numel ? r0 + p.task_size : p.reduced_numel;
        S const* base[NIn];
        for (int k = 0; k < NIn; ++k) base[k] = static_cast<S const*>(p.data[1 + k]) + p.kept_offset(1 + k, m);
        A acc = combine.template identity<C>();
        for (std::int64_t r = r0; r < r1; ++r) [&]<std::size_t... K>(std::index_sequence<K...>) {
                acc = combine(
                    acc,
                    cuda_element<C, Combine>(
                        p, static_cast<C>(f(static_cast<C>(load_input(base[K] + p.reduced_offset(1 + K, r)))...)), r));
            }
        (std::make_index_sequence<NIn>{});
        cuda_store_reduced<S>(p, partials, m, task, acc);
    }
}

// Threads of the partials kernel: 1024 for an output of at least
// reduce_partials_wide_tasks tasks, else reduce_block_cuda. A full reduction
// leaves all its partials (32768 for 2^28 floats) to one block, which spends
// its time waiting on L2 loads: four times the threads, a quarter of the
// waits each (docs/benchmarks.md). Many outputs of few partials each (a
// column reduction: 64 rows a task) keep the narrow block, which fits four
// times the outputs per SM and folds no idle threads.
inline constexpr int reduce_partials_wide_block_cuda = 1024;
inline constexpr std::int64_t reduce_partials_wide_tasks = 4096;

// One block of Threads per output: its tasks' partials folded in a fixed
// order (thread t takes partials t, t + Threads, ...), then the block's tree.
template <int Threads, dtype D, typename S, typename C, int NIn, typename Combine,
          typename A = accumulator_t<Combine, C>>
__global__ void __launch_bounds__(Threads)
    cuda_reduce_partials_kernel(Combine const combine, cuda_reduction<NIn, is_indexed_combine_v<Combine>> const p,
                                A const* partials) {
    for (std::int64_t m = blockIdx.x; m < p.kept_numel; m += gridDim.x) {
        A acc = combine.template identity<C>();
        for (std::int64_t t = threadIdx.x; t < p.tasks; t += Threads) acc = combine(acc, partials[m * p.tasks + t]);
        acc = cuda_block_fold<Threads>(combine, acc, A(combine.template identity<C>()));
        if (threadIdx.x == 0) cuda_store_result<S>(p, m, acc);
        __syncthreads();
    }
}

template <typename S, typename C, int NIn, typename Combine>
__global__ void cuda_reduce_fill_kernel(Combine const combine, cuda_reduction<NIn> const p) {
    for (std::int64_t m = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; m < p.kept_numel;
         m += std::int64_t{gridDim.x} * blockDim.x)
        static_cast<S*>(p.data[0])[p.kept_offset(0, m)] = static_cast<S>(combine.template identity<C>());
}

// Launches on the current device, which must be the operands'.
template <dtype D, typename S, typename C, int NIn, typename Combine, typename F>
void cuda_transform_reduce(char const* op, Combine const& combine, F const& f, reduction_layout const& layout,
                           int operands_device) {
    if (layout.kept_numel == 0) return;
    int const device = require_current_device(op, operands_device);
    auto const stream = static_cast<cudaStream_t>(cuda_current_stream_handle());
    std::string const where = std::string(op) + " on cuda:" + std::to_string(device);
    std::string const launch = std::string(op) + " kernel launch";
    auto const grid_for = [](std::int64_t blocks) {
        return static_cast<unsigned>(blocks < cuda_max_grid ? (blocks > 0 ? blocks : 1) : cuda_max_grid);
    };
    using A = accumulator_t<Combine, C>;
    constexpr bool indexed = is_indexed_combine_v<Combine>;
    if constexpr (Combine::has_identity) {
        if (layout.reduced_numel == 0) {
            auto const p = to_cuda_reduction<NIn, false>(layout, 1);
            cuda_reduce_fill_kernel<S, C, NIn>
                <<<grid_for((layout.kept_numel + reduce_block_cuda - 1) / reduce_block_cuda), reduce_block_cuda, 0,
                   stream>>>(combine, p);
            cuda_check(cudaGetLastError(), launch.c_str(), where);
            return;
        }
    }
    constexpr std::int64_t lanes = cuda_values_per_chunk<S>;
    std::int64_t const row_chunks = layout.reduced_numel / lanes + (layout.reduced_numel % lanes != 0);
    if (layout.reduced_inner && row_chunks <= reduce_short_row_chunks_cuda) {
        int group = 1;
        while (group < 32 && group < row_chunks) group *= 2;
        auto const p = to_cuda_reduction<NIn, indexed>(layout, layout.reduced_numel > 0 ? layout.reduced_numel : 1);
        std::int64_t const rows_per_block = reduce_block_cuda / group;
        std::int64_t const blocks = (p.kept_numel + rows_per_block - 1) / rows_per_block;
        std::int64_t const cap = cuda_multiprocessors(device, where) * reduce_short_row_blocks_per_sm;
        cuda_reduce_short_rows_kernel<D, S, C, NIn>
            <<<grid_for(blocks < cap ? blocks : cap), reduce_block_cuda, 0, stream>>>(combine, f, p, group);
        cuda_check(cudaGetLastError(), launch.c_str(), where);
        return;
    }
    std::int64_t const task_size =
        layout.reduced_inner ? std::int64_t{reduce_block_cuda} * reduce_chunks_cuda * lanes : reduce_column_run_cuda;
    auto const p = to_cuda_reduction<NIn, indexed>(layout, task_size);
    A* partials = nullptr;
    if (p.tasks > 1) {
        void* memory = nullptr;
        cuda_check(cudaMallocFromPoolAsync(&memory, static_cast<std::size_t>(p.kept_numel * p.tasks) * sizeof(A),
                                           cuda_scratch_pool(device), stream),
                   "cudaMallocFromPoolAsync", where);
        partials = static_cast<A*>(memory);
    }
    if (layout.reduced_inner) {
        cuda_reduce_rows_kernel<D, S, C, NIn>
            <<<grid_for(p.kept_numel * p.tasks), reduce_block_cuda, 0, stream>>>(combine, f, p, partials);
    } else {
        std::int64_t const groups = (p.kept_numel + reduce_block_cuda - 1) / reduce_block_cuda;
        cuda_reduce_columns_kernel<D, S, C, NIn>
            <<<grid_for(groups * p.tasks), reduce_block_cuda, 0, stream>>>(combine, f, p, partials);
    }
    cudaError_t launched = cudaGetLastError();
    if (p.tasks > 1) {
        if (launched == cudaSuccess) {
            if (p.tasks >= reduce_partials_wide_tasks)
                cuda_reduce_partials_kernel<reduce_partials_wide_block_cuda, D, S, C, NIn>
                    <<<grid_for(p.kept_numel), reduce_partials_wide_block_cuda, 0, stream>>>(combine, p, partials);
            else
                cuda_reduce_partials_kernel<reduce_block_cuda, D, S, C, NIn>
                    <<<grid_for(p.kept_numel), reduce_block_cuda, 0, stream>>>(combine, p, partials);
            launched = cudaGetLastError();
        }
        // Freed whether or not the kernels launched.
        cudaError_t const freed = cudaFreeAsync(partials, stream);
        cuda_check(launched, launch.c_str(), where);
        cuda_check(freed, "cudaFreeAsync", where);
    }
    cuda_check(launched, launch.c_str(), where);
}

}  // namespace switchyard::detail
