// transform on the CPU: the elementwise runner behind switchyard/transform.h.
//
// The flat range [0, numel) is split into chunks on a thread pool (as
// for_each's); a chunk walks rows of the layout's innermost dimension
// (view/elementwise_layout.h) and a row runs in blocks of
// cpu_transform_block elements, in three steps:
//   1. each input is loaded into a compute-type buffer by its own inner
//      stride: converted from contiguous memory (F16C for f16, convert.h),
//      repeated once (stride 0, broadcast), or gathered (any other stride);
//      an input whose storage is its compute type and contiguous is read in
//      place instead;
//   2. the kernel runs over the buffers, a plain loop over contiguous
//      compute values that g++ and clang vectorize whatever the operands'
//      layouts were;
//   3. results are stored the same way back.
// So one broadcast or strided operand costs only its own loads, and the op
// is compiled once per tag (one block loop, in the target_clones of
// device/cpu/for_each.h), not once per combination of layouts.
#pragma once

#include <cstdint>
#include <type_traits>
#include <utility>

#include "switchyard/core/dtype.h"
#include "switchyard/core/results.h"
#include "switchyard/device/cpu/convert.h"
#include "switchyard/device/cpu/for_each.h"
#include "switchyard/view/elementwise_layout.h"

namespace switchyard::detail {

// Elements per block: the buffers of a 16-operand double kernel stay within
// 32 KiB, and the per-block overhead (a few branches per operand) is small.
inline constexpr std::int64_t cpu_transform_block = 256;

// A row of n elements: operand k starts at ptr[k] and steps inner[k]
// elements; outputs first.
template <dtype D, typename S, typename C, int NOut, int NIn, typename F>
SWITCHYARD_CHUNK_ATTRIBUTES void transform_row(F const& f, S* const* ptr, std::int64_t const* inner, std::int64_t n) {
    F const kernel = f;
    constexpr std::int64_t B = cpu_transform_block;
    C in_buffer[NIn > 0 ? NIn : 1][B];
    C out_buffer[NOut][B];
    for (std::int64_t j0 = 0; j0 < n; j0 += B) {
        std::int64_t const m = n - j0 < B ? n - j0 : B;
#if !defined(SWITCHYARD_NO_PREFETCH)
        // The hardware prefetcher does not cross 4 KiB pages (device/cpu/for_each.h).
        for (int k = 0; k < NOut; ++k)
            if (inner[k] == 1) __builtin_prefetch(reinterpret_cast<char const*>(ptr[k] + j0) + prefetch_distance, 1);
        for (int k = NOut; k < NOut + NIn; ++k)
            if (inner[k] == 1) __builtin_prefetch(reinterpret_cast<char const*>(ptr[k] + j0) + prefetch_distance, 0);
#endif
        C const* in[NIn > 0 ? NIn : 1];
        for (int k = 0; k < NIn; ++k) {
            S const* src = ptr[NOut + k] + j0 * inner[NOut + k];
            if constexpr (std::is_same_v<S, C>) {
                if (inner[NOut + k] == 1) {
                    in[k] = src;
                    continue;
                }
            }
            load_block<D>(src, inner[NOut + k], in_buffer[k], m);
            in[k] = in_buffer[k];
        }
        C* out[NOut];
        for (int o = 0; o < NOut; ++o) {
            out[o] = out_buffer[o];
            if constexpr (std::is_same_v<S, C>)
                if (inner[o] == 1) out[o] = ptr[o] + j0;
        }
        [&]<std::size_t... K, std::size_t... O>(std::index_sequence<K...>, std::index_sequence<O...>) {
            for (std::int64_t j = 0; j < m; ++j) {
                auto const r = kernel(in[K][j]...);
                ((out[O][j] = result_value<O, C>(r)), ...);
            }
        }
        (std::make_index_sequence<NIn>{}, std::make_index_sequence<NOut>{});
        for (int o = 0; o < NOut; ++o)
            if (out[o] == out_buffer[o]) store_block<D>(out_buffer[o], ptr[o] + j0 * inner[o], inner[o], m);
    }
}

// Flat indices [begin, end) of the layout, row by row.
template <dtype D, typename S, typename C, int NOut, int NIn, typename F>
void transform_range(F const& f, elementwise_layout const& layout, std::int64_t begin, std::int64_t end) {
    constexpr int N = NOut + NIn;
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
    // Through a pointer: g++ 12 treats a direct call of a target_clones
    // function as unable to throw (device/cpu/for_each.h).
    auto* volatile row_fn = &transform_row<D, S, C, NOut, NIn, F>;
    for (std::int64_t i = begin; i < end;) {
        S* ptr[N];
        for (int k = 0; k < N; ++k) {
            std::int64_t offset = col * inner[k];
            for (std::int32_t d = 0; d < outer_rank; ++d) offset += coord[d] * layout.strides[k][d];
            ptr[k] = static_cast<S*>(layout.data[k]) + offset;
        }
        std::int64_t const n = row - col < end - i ? row - col : end - i;
        row_fn(f, ptr, inner, n);
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
    auto const run = [&](auto& pool) {
        pool.parallel_for(
            std::int64_t{0}, layout.numel, parallel_hint{0, for_each_ns_per_element},
            [&](std::int64_t begin, std::int64_t end) { transform_range<D, S, C, NOut, NIn>(f, layout, begin, end); });
    };
    if constexpr (wants_uniform_scheduling<Tag>())
        run(uniform_for_each_pool());
    else
        run(default_pool());
}

}  // namespace switchyard::detail
