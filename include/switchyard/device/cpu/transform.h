// transform on the CPU: the elementwise runner behind switchyard/transform.h.
//
// The flat range [0, numel) is split into chunks on a thread pool (as
// for_each's); a chunk walks rows of the layout's innermost dimension
// (view/elementwise_layout.h). A row whose inputs are contiguous or repeated
// (stride 1 or 0, broadcast) and whose outputs are contiguous, the common
// case, is fused when its storage needs converting (f16, bf16): groups of
// fused_lanes values are loaded and converted, run through the kernel,
// converted and stored back, with no buffer pass between the steps. Where
// the storage is the compute type (f32, f64, integers), a row whose
// operands are all contiguous but one repeated input runs as one loop in
// place. In both, with 2 to cpu_repeated_loop_inputs inputs of which exactly
// one is repeated, its value is held in a register. Any other row, and a
// fused row's last n % fused_lanes elements, is staged, in blocks of
// cpu_transform_block elements (one block when every operand is in place):
//   1. each input is loaded into a compute-type buffer by its own inner
//      stride: converted from contiguous memory (F16C for f16, convert.h),
//      repeated once (stride 0), or gathered (any other stride); an input
//      whose storage is its compute type and contiguous is read in place;
//   2. the kernel runs over the buffers, a plain loop over contiguous
//      compute values that g++ and clang vectorize whatever the operands'
//      layouts were;
//   3. results are stored the same way back.
// So one broadcast or strided operand costs only its own loads, and the op
// is compiled once per tag and CPU level (device/cpu/isa.h), not once per
// combination of layouts. Staging costs a store and a load per operand and
// element, which bounds cheap kernels on 2-byte types (docs/benchmarks.md);
// hence the fused rows. The rows issue no software prefetch: unlike
// for_each's chunks, they ran as fast or faster without it on both CPUs
// measured (docs/benchmarks.md).
// Large outputs are streamed (stream_store.h): each row then writes its
// results through a block buffer.
#pragma once

#include <cstdint>
#include <type_traits>
#include <utility>

#include "switchyard/core/dtype.h"
#include "switchyard/core/results.h"
#include "switchyard/device/cpu/convert.h"
#include "switchyard/device/cpu/for_each.h"
#include "switchyard/device/cpu/isa.h"
#include "switchyard/device/cpu/stream_store.h"
#include "switchyard/view/elementwise_layout.h"

namespace switchyard::detail {

// Elements per staged block: the buffers of a 16-operand double kernel stay
// within 32 KiB, and the per-block overhead (a few branches per operand) is
// small.
inline constexpr std::int64_t cpu_transform_block = 256;

// Lanes per fused group: one conversion of 16 values (fused rows compute in
// float). A group this small stays in registers from its loads through the
// kernel to its stores; a group of 64 went through stack buffers, three
// stores per value, and ran a cheap kernel three times slower
// (docs/benchmarks.md).
inline constexpr int fused_lanes = 16;

// The most inputs for which a row with one repeated input has its own loop
// (transform_row_repeated): each such input costs one more copy of the loop.
inline constexpr int cpu_repeated_loop_inputs = 4;

// Input k's value at j: its j-th, or `value` for the input Repeated.
template <int K, int Repeated, typename P, typename C, typename N>
SWITCHYARD_INLINE C input_value(P const& p, N j, C value) {
    if constexpr (K == Repeated)
        return value;
    else
        return p[j];
}

// out[o][j] = the function's o-th result on (in[0][j], in[1][j], ...) for j
// in [0, n): the loop every kind of row runs, over registers or buffers.
// Input Repeated (if any) is `value` throughout: held in a register, so
// what f computes from it alone is hoisted out of the loop by the compiler.
// A function, not a lambda: g++'s flatten then inlines the kernel into the
// loop in every row function of a file with several ops.
template <typename C, int Repeated, typename F, typename In, typename Out, typename N, std::size_t... K,
          std::size_t... O>
SWITCHYARD_INLINE void apply_kernel_loop(F const& kernel, [[maybe_unused]] In const& in, Out& out, N n,
                                         [[maybe_unused]] C value, std::index_sequence<K...>,
                                         std::index_sequence<O...>) {
    SWITCHYARD_KEEP_LOOP
    for (N j = 0; j < n; ++j) {
        auto const r = kernel(input_value<static_cast<int>(K), Repeated>(in[K], j, value)...);
        ((out[O][j] = result_value<O, C>(r)), ...);
    }
}
template <typename C, int NOut, int NIn, int Repeated = -1, typename F, typename In, typename Out, typename N>
SWITCHYARD_INLINE void apply_kernel(F const& kernel, In const& in, Out& out, N n, C value = C{}) {
    apply_kernel_loop<C, Repeated>(kernel, in, out, n, value, std::make_index_sequence<NIn>{},
                                   std::make_index_sequence<NOut>{});
}

// apply_kernel with input `repeated` (one of K) as `value`.
template <typename C, int NOut, int NIn, typename F, int... K>
SWITCHYARD_INLINE void apply_kernel_repeated(F const& kernel, C const* const* in, C* const* out, std::int64_t n,
                                             int repeated, C value, std::integer_sequence<int, K...>) {
    ((repeated == K ? apply_kernel<C, NOut, NIn, K>(kernel, in, out, n, value) : void()), ...);
}

// Whether a row's outputs have stride 1 and each input stride 1 or 0.
template <int NOut, int NIn>
SWITCHYARD_INLINE bool row_is_dense(std::int64_t const* inner) {
    for (int k = 0; k < NOut; ++k)
        if (inner[k] != 1) return false;
    for (int k = NOut; k < NOut + NIn; ++k)
        if (inner[k] != 1 && inner[k] != 0) return false;
    return true;
}

// A row of compute-type storage whose outputs and inputs have stride 1 but
// one input repeated (stride 0): one loop over the row, in place, the
// repeated value in a register (streamed outputs: one loop per block, into
// a buffer). Returns false for any other row. A lone input repeated makes
// the row one value, and more than cpu_repeated_loop_inputs inputs are left
// to the staged rows, which keeps the copies of the loop few.
template <cpu_isa I, dtype D, typename C, int NOut, int NIn, typename F>
SWITCHYARD_INLINE bool transform_row_repeated(F const& kernel, C* const* ptr, std::int64_t const* inner, std::int64_t n,
                                              bool stream) {
    if constexpr (NIn >= 2 && NIn <= cpu_repeated_loop_inputs) {
        if (!row_is_dense<NOut, NIn>(inner)) return false;
        int repeated = -1;
        for (int k = 0; k < NIn; ++k) {
            if (inner[NOut + k] != 0) continue;
            if (repeated >= 0) return false;
            repeated = k;
        }
        if (repeated < 0) return false;
        C const value = ptr[NOut + repeated][0];
        C buffer[NOut][cpu_stream_block];
        std::int64_t const block = stream ? cpu_stream_block : n;
        for (std::int64_t j0 = 0; j0 < n; j0 += block) {
            std::int64_t const m = n - j0 < block ? n - j0 : block;
            C const* in[NIn];
            for (int k = 0; k < NIn; ++k) in[k] = ptr[NOut + k] + (k == repeated ? 0 : j0);
            C* out[NOut];
            for (int o = 0; o < NOut; ++o) out[o] = stream ? buffer[o] : ptr[o] + j0;
            apply_kernel_repeated<C, NOut, NIn>(kernel, in, out, m, repeated, value,
                                                std::make_integer_sequence<int, NIn>{});
            if (stream)
                for (int o = 0; o < NOut; ++o) stream_store_block<I, D>(buffer[o], ptr[o] + j0, m);
        }
        return true;
    } else {
        (void)kernel, (void)ptr, (void)inner, (void)n, (void)stream;
        return false;
    }
}

// Fused groups [0, groups) of a dense row: input k's W lanes are converted
// from src[k] + g * step[k] for every group the same way, with no branch,
// so each lane has one definition and the compiler keeps the group in
// registers (a group read through a pointer chosen at run time went
// through the stack). Input Repeated (if any) is `value` throughout, held
// in a register as in transform_row_repeated.
template <cpu_isa I, dtype D, typename S, typename C, int NOut, int NIn, int Repeated, typename F>
SWITCHYARD_INLINE void transform_fused_groups(F const& kernel, S* const* ptr, S const* const* src,
                                              std::int64_t const* step, std::int64_t groups, C value, bool stream) {
    constexpr int W = fused_lanes;
    // Blocks of G groups: the outputs' addresses and whether they stream
    // are settled once per block, not in the groups' loop.
    constexpr std::int64_t G = cpu_stream_block / W;
    static_assert(G >= 1 && cpu_stream_block % W == 0);
    S staged[NOut][cpu_stream_block];
    for (std::int64_t g0 = 0; g0 < groups; g0 += G) {
        std::int64_t const m = groups - g0 < G ? groups - g0 : G;
        S const* at[NIn > 0 ? NIn : 1];
        for (int k = 0; k < NIn; ++k) at[k] = src[k] + g0 * step[k];
        S* dst[NOut];
        for (int o = 0; o < NOut; ++o) dst[o] = stream ? staged[o] : ptr[o] + g0 * W;
        for (std::int64_t g = 0; g < m; ++g) {
            C in[NIn > 0 ? NIn : 1][W];
            C out[NOut][W];
            for (int k = 0; k < NIn; ++k)
                if (k != Repeated) load_lanes<I, D, W>(at[k] + g * step[k], in[k]);
            apply_kernel<C, NOut, NIn, Repeated>(kernel, in, out, W, value);
            for (int o = 0; o < NOut; ++o) store_lanes<I, D, W>(out[o], dst[o] + g * W);
        }
        if (stream)
            for (int o = 0; o < NOut; ++o)
                stream_bytes<I>(ptr[o] + g0 * W, staged[o], static_cast<std::size_t>(m * W) * sizeof(S));
    }
}

// transform_fused_groups with input `repeated` (one of K) as `value`.
template <cpu_isa I, dtype D, typename S, typename C, int NOut, int NIn, typename F, int... K>
SWITCHYARD_INLINE void transform_fused_groups_repeated(F const& kernel, S* const* ptr, S const* const* src,
                                                       std::int64_t const* step, std::int64_t groups, int repeated,
                                                       C value, bool stream, std::integer_sequence<int, K...>) {
    ((repeated == K ? transform_fused_groups<I, D, S, C, NOut, NIn, K>(kernel, ptr, src, step, groups, value, stream)
                    : void()),
     ...);
}

// The first n - n % W elements of a dense row, fused; returns how many. A
// repeated input (stride 0) is read from W copies of its stored value,
// advancing by 0; with 2 to cpu_repeated_loop_inputs inputs of which exactly
// one is repeated, that one is held in a register instead (one more copy of the group loop per
// input position), so that what f computes from it alone is hoisted.
template <cpu_isa I, dtype D, typename S, typename C, int NOut, int NIn, typename F>
SWITCHYARD_INLINE std::int64_t transform_row_fused(F const& kernel, S* const* ptr, std::int64_t const* inner,
                                                   std::int64_t n, bool stream) {
    constexpr int W = fused_lanes;
    constexpr int NI = NIn > 0 ? NIn : 1;
    std::int64_t const groups = n / W;
    if (groups == 0) return 0;
    S copies[NI][W];
    S const* src[NI];
    std::int64_t step[NI];
    int repeated = -1, repeated_count = 0;
    for (int k = 0; k < NIn; ++k) {
        src[k] = ptr[NOut + k];
        step[k] = W;
        if (inner[NOut + k] == 0) {
            for (int j = 0; j < W; ++j) copies[k][j] = src[k][0];
            src[k] = copies[k];
            step[k] = 0;
            repeated = k;
            ++repeated_count;
        }
    }
    if constexpr (NIn >= 2 && NIn <= cpu_repeated_loop_inputs) {
        if (repeated_count == 1) {
            C const value = load_value<D, C>(src[repeated][0]);
            transform_fused_groups_repeated<I, D, S, C, NOut, NIn>(kernel, ptr, src, step, groups, repeated, value,
                                                                   stream, std::make_integer_sequence<int, NIn>{});
            return groups * W;
        }
    }
    transform_fused_groups<I, D, S, C, NOut, NIn, -1>(kernel, ptr, src, step, groups, C{}, stream);
    return groups * W;
}

// A row of n elements, staged: operand k starts at ptr[k] and steps
// inner[k] elements; outputs first.
template <cpu_isa I, dtype D, typename S, typename C, int NOut, int NIn, typename F>
SWITCHYARD_INLINE void transform_row_staged(F const& kernel, S* const* ptr, std::int64_t const* inner, std::int64_t n,
                                            bool stream) {
    constexpr std::int64_t B = cpu_transform_block;
    static_assert(B <= cpu_stream_block);
    C in_buffer[NIn > 0 ? NIn : 1][B];
    C out_buffer[NOut][B];
    // A row read and written wholly in place needs no blocks: one loop.
    // Streamed outputs are written from the buffers.
    bool in_place = std::is_same_v<S, C> && !stream;
    for (int k = 0; k < NOut + NIn; ++k) in_place = in_place && inner[k] == 1;
    std::int64_t const block = in_place ? n : B;
    for (std::int64_t j0 = 0; j0 < n; j0 += block) {
        std::int64_t const m = n - j0 < block ? n - j0 : block;
        C const* in[NIn > 0 ? NIn : 1];
        for (int k = 0; k < NIn; ++k) {
            S const* src = ptr[NOut + k] + j0 * inner[NOut + k];
            in[k] = in_buffer[k];
            if constexpr (std::is_same_v<S, C>)
                if (inner[NOut + k] == 1) in[k] = src;
            // A repeated input's copies, made for the first block, serve the
            // row's later (no longer) blocks.
            bool const filled = inner[NOut + k] == 0 && j0 > 0;
            if (in[k] == in_buffer[k] && !filled) load_block<D>(src, inner[NOut + k], in_buffer[k], m);
        }
        C* out[NOut];
        for (int o = 0; o < NOut; ++o) {
            out[o] = out_buffer[o];
            if constexpr (std::is_same_v<S, C>)
                if (inner[o] == 1 && !stream) out[o] = ptr[o] + j0;
        }
        apply_kernel<C, NOut, NIn>(kernel, in, out, m);
        for (int o = 0; o < NOut; ++o) {
            if (out[o] != out_buffer[o]) continue;
            if (stream && inner[o] == 1)
                stream_store_block<I, D>(out_buffer[o], ptr[o] + j0, m);
            else
                store_block<D>(out_buffer[o], ptr[o] + j0 * inner[o], inner[o], m);
        }
    }
}

// A row: one loop with a repeated input in a register, or fused where it can
// be and staged for the rest. I is the level the caller is built for. The local copy of the function lets the compiler
// see that what it captured does not alias what the loops write.
template <cpu_isa I, dtype D, typename S, typename C, int NOut, int NIn, typename F>
SWITCHYARD_INLINE void transform_row(F const& f, S* const* ptr, std::int64_t const* inner, std::int64_t n,
                                     bool stream) {
    F const kernel = f;
    if constexpr (std::is_same_v<S, C>)
        if (transform_row_repeated<I, D, C, NOut, NIn>(kernel, ptr, inner, n, stream)) return;
    std::int64_t done = 0;
    if constexpr (!std::is_same_v<S, C> && converts_lanes<I, D, S, C>())
        if (row_is_dense<NOut, NIn>(inner))
            done = transform_row_fused<I, D, S, C, NOut, NIn>(kernel, ptr, inner, n, stream);
    if (done == n) return;
    S* rest[NOut + NIn];
    for (int k = 0; k < NOut + NIn; ++k) rest[k] = ptr[k] + done * inner[k];
    transform_row_staged<I, D, S, C, NOut, NIn>(kernel, rest, inner, n - done, stream);
}

// The row built once per CPU level. flatten inlines everything the kernel
// calls (the op's function, the math, the conversions) into the loops, built
// for that level; without it g++ keeps a large function such as softplus out
// of line and nothing vectorizes.
template <dtype D, typename S, typename C, int NOut, int NIn, typename F>
using transform_row_fn = void (*)(F const&, S* const*, std::int64_t const*, std::int64_t, bool);

template <dtype D, typename S, typename C, int NOut, int NIn, typename F>
[[gnu::flatten]] void transform_row_baseline(F const& f, S* const* ptr, std::int64_t const* inner, std::int64_t n,
                                             bool stream) {
    transform_row<cpu_isa::baseline, D, S, C, NOut, NIn>(f, ptr, inner, n, stream);
}
#if defined(SWITCHYARD_CPU_ISA_VARIANTS)
template <dtype D, typename S, typename C, int NOut, int NIn, typename F>
[[gnu::flatten, gnu::target("arch=x86-64-v3")]] void transform_row_v3(F const& f, S* const* ptr,
                                                                      std::int64_t const* inner, std::int64_t n,
                                                                      bool stream) {
    transform_row<cpu_isa::x86_64_v3, D, S, C, NOut, NIn>(f, ptr, inner, n, stream);
}
template <dtype D, typename S, typename C, int NOut, int NIn, typename F>
[[gnu::flatten, gnu::target("arch=x86-64-v4")]] void transform_row_v4(F const& f, S* const* ptr,
                                                                      std::int64_t const* inner, std::int64_t n,
                                                                      bool stream) {
    transform_row<cpu_isa::x86_64_v4, D, S, C, NOut, NIn>(f, ptr, inner, n, stream);
}
#endif

template <dtype D, typename S, typename C, int NOut, int NIn, typename F>
transform_row_fn<D, S, C, NOut, NIn, F> transform_row_for(cpu_isa level) noexcept {
#if defined(SWITCHYARD_CPU_ISA_VARIANTS)
    if (level == cpu_isa::x86_64_v4) return &transform_row_v4<D, S, C, NOut, NIn, F>;
    if (level == cpu_isa::x86_64_v3) return &transform_row_v3<D, S, C, NOut, NIn, F>;
#endif
    (void)level;
    return &transform_row_baseline<D, S, C, NOut, NIn, F>;
}

// Flat indices [begin, end) of the layout, row by row.
// stream: the outputs' contiguous rows are streamed (stream_store.h).
template <dtype D, typename S, typename C, int NOut, int NIn, typename F>
void transform_range(F const& f, elementwise_layout const& layout, std::int64_t begin, std::int64_t end,
                     bool stream = false) {
    constexpr int N = NOut + NIn;
    // Fences on every exit, a kernel's exception included: the rows stored
    // before the throw must not stay in this thread's write-combining buffers.
    stream_fence_on_exit const fence{stream};
    std::int32_t const outer_rank = layout.rank > 0 ? layout.rank - 1 : 0;
    std::int64_t const row = layout.row_size();
    std::int64_t inner[N];
    for (int k = 0; k < N; ++k) inner[k] = layout.inner_stride(k);
    // The row's coordinates in the outer dimensions, advanced with carries.
    std::int64_t coord[max_rank] = {};
    std::int64_t outer = begin / row, col = begin - (begin / row) * row;
    for (std::int32_t d = outer_rank; d-- > 0;) {
        coord[d] = outer % layout.sizes[d];
        outer /= layout.sizes[d];
    }
    auto const row_fn = transform_row_for<D, S, C, NOut, NIn, F>(host_cpu_isa());
    for (std::int64_t i = begin; i < end;) {
        S* ptr[N];
        for (int k = 0; k < N; ++k) {
            std::int64_t offset = col * inner[k];
            for (std::int32_t d = 0; d < outer_rank; ++d) offset += coord[d] * layout.strides[k][d];
            ptr[k] = static_cast<S*>(layout.data[k]) + offset;
        }
        std::int64_t const n = row - col < end - i ? row - col : end - i;
        row_fn(f, ptr, inner, n, stream);
        i += n;
        col = 0;
        for (std::int32_t d = outer_rank; d-- > 0;) {
            if (++coord[d] < layout.sizes[d]) break;
            coord[d] = 0;
        }
    }
}

template <dtype D, typename S, typename C, int NOut, int NIn, typename Tag, typename F>
void cpu_transform(Tag, F const& f, elementwise_layout const& layout) {
    if (layout.numel == 0) return;
    bool const stream = cpu_streams_output(layout.numel * NOut * static_cast<std::int64_t>(sizeof(S)));
    auto const run = [&](auto& pool) {
        pool.parallel_for(std::int64_t{0}, layout.numel, parallel_hint{0, for_each_ns_per_element},
                          [&](std::int64_t begin, std::int64_t end) {
                              transform_range<D, S, C, NOut, NIn>(f, layout, begin, end, stream);
                          });
    };
    with_cpu_pool<Tag>(run);
}

}  // namespace switchyard::detail
