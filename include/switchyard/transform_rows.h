// transform_rows(tag, out, stats, f, in...): a map of each row (the last
// dimension) that also reads statistics of its row: softmax, layernorm,
// log-softmax, a row's normalization. Each statistic is a reduction of the
// row (core/row_stat.h); f then maps each position's input values and the
// row's statistics to the output value:
//
//     using C = sy::compute_t<Tag>;             // float for f16 and bf16
//     // softmax along the last dimension: out [..., n] from x [..., n]
//     auto const shifted_exp = [] SWITCHYARD_HOST_DEVICE(C x, C max) { return sy::exp(x - max); };
//     auto const normalized = [] SWITCHYARD_HOST_DEVICE(C x, C max, C sum) { return sy::exp(x - max) / sum; };
//     sy::transform_rows(tag, out, sy::row_stats(sy::amax, sy::row_stat(sy::sum, shifted_exp)), normalized, x);
//
// Statistic k's map takes the inputs' values and statistics 0..k-1; f takes
// the inputs' values, then the map value of each statistic marked
// with_values() (core/row_stat.h), then every statistic:
//
//     auto const from_values = [] SWITCHYARD_HOST_DEVICE(C, C e, C, C sum) { return e / sum; };
//     sy::transform_rows(tag, out, sy::row_stats(sy::amax, sy::row_stat(sy::sum, shifted_exp).with_values()),
//                        from_values, x);   // softmax with one exp per value
//
// Unlike a reduction followed by a transform, the statistics never leave the
// device's registers or cache, and each device keeps the row close while the
// passes run (a CPU task per row in cache, a CUDA block per row in
// registers), so a row is read from memory once: on CUDA rows of up to 4096
// values, on the CPU rows that fit its cache; longer rows are read again by
// each pass.
//
// Inputs broadcast to out's shape (PyTorch's rules); out may be an input
// exactly (in place). Statistics accumulate in compute_t<Tag> in an order
// fixed by the row's length (bitwise the same run to run, whatever the
// threads or the grid), as reductions do. A statistic's combine is sy::sum,
// sy::prod, sy::amin, sy::amax or sy::combine(op, identity); argmin and
// argmax give indices, not values, and are refused. Rows of zero length
// write nothing, so no statistic is ever taken of an empty row.
//
// Devices: the CPU (device/cpu/transform_rows.h) and, when compiled by
// nvcc, CUDA (device/cuda/transform_rows.h; f and the maps must then be
// SWITCHYARD_HOST_DEVICE) run it fused. Elsewhere (WebGPU, Metal) it runs as
// separate calls: each statistic a transform_reduce into a temporary
// [..., 1] array of the tag's dtype (so f16 statistics are rounded to f16),
// then f a transform reading them broadcast; the row is read once per
// statistic and once more, and those calls' own limits and errors apply
// (at most 15 inputs and statistics together).
//
// Errors (std::invalid_argument, naming transform_rows and the operand): an
// operand on another device or of another dtype than the tag's, inputs that
// do not broadcast to out, an output that overlaps itself or shares memory
// with an input without being exactly that input.
#pragma once

#include <cstddef>
#include <type_traits>
#include <utility>
#include <vector>

#include "switchyard/core/combine.h"
#include "switchyard/core/dtype.h"
#include "switchyard/core/enums.h"
#include "switchyard/core/row_stat.h"
#include "switchyard/core/tag.h"
#include "switchyard/core/tag_device.h"
#include "switchyard/device/cpu/transform_rows.h"
#include "switchyard/device_array.h"
#include "switchyard/kernel_types.h"
#include "switchyard/reduce.h"
#include "switchyard/transform.h"
#include "switchyard/view/row_layout.h"
#include "switchyard/view/strided_ref.h"
#if defined(__CUDACC__)
#include "switchyard/device/cuda/transform_rows.h"
#endif

namespace switchyard {

namespace detail {

template <typename Stats, std::size_t I>
using row_stat_at = std::remove_cvref_t<decltype(std::declval<Stats const&>().template get<I>())>;

// Whether statistic I of Stats can be computed as transform_rows does:
// a value combine, and a map of NIn inputs and I earlier statistics.
template <typename C, typename Stat, std::size_t... Args>
constexpr bool row_stat_valid(std::index_sequence<Args...>) {
    using combine_type = decltype(Stat::combine);
    using map_type = decltype(Stat::map) const&;
    if constexpr (std::is_invocable_v<map_type, per_input<C, std::integral_constant<std::size_t, Args>>...>)
        return reduction_combine_for<combine_type, C> && !is_indexed_combine_v<combine_type> &&
               std::is_convertible_v<
                   std::invoke_result_t<map_type, per_input<C, std::integral_constant<std::size_t, Args>>...>, C>;
    else
        return false;
}

template <typename Stats>
constexpr int row_stat_count() {
    if constexpr (is_row_stats_v<Stats>)
        return Stats::count;
    else
        return 0;
}

template <typename Stats>
constexpr int row_values_count() {
    if constexpr (is_row_stats_v<Stats>)
        return Stats::values_count;
    else
        return 0;
}

template <typename C, int NIn, typename Stats, std::size_t... I>
constexpr bool row_stats_valid(std::index_sequence<I...>) {
    return (row_stat_valid<C, row_stat_at<Stats, I>>(std::make_index_sequence<NIn + I>{}) && ...);
}

template <typename C, typename F, std::size_t... Args>
constexpr bool row_map_valid(std::index_sequence<Args...>) {
    if constexpr (std::is_invocable_v<F const&, per_input<C, std::integral_constant<std::size_t, Args>>...>)
        return std::is_convertible_v<
            std::invoke_result_t<F const&, per_input<C, std::integral_constant<std::size_t, Args>>...>, C>;
    else
        return false;
}

// transform_rows as separate calls, for devices with no row runner (WebGPU,
// Metal): statistic k is a transform_reduce over the last dimension into a
// [..., 1] array of the tag's dtype, reading the inputs and statistics
// 0..k-1 broadcast along the row; then f is a transform reading them all. The
// maps' and f's arguments are the same as the fused runners give them.
template <any_tag Tag, typename Stats, typename F, typename... In>
void composed_transform_rows(Tag tag, strided_ref const& out, Stats const& stats, F const& f, In const&... in) {
    constexpr int NS = Stats::count;
    if (out.numel() == 0) return;  // no row, or rows of zero values: nothing to write
    strided_ref like = out;        // a statistic's shape: out's with a last size of 1
    if (like.rank > 0) like.sizes[like.rank - 1] = 1;
    strided_ref::row_major_strides(like.sizes, like.rank, like.strides);
    std::vector<device_array> statistics;
    statistics.reserve(NS);
    for (int k = 0; k < NS; ++k) statistics.push_back(make_device_array<tag_device_v<Tag>>(like, "row statistic"));
    [&]<std::size_t... I>(std::index_sequence<I...>) {
        auto const statistic = [&]<std::size_t K, std::size_t... J>(std::integral_constant<std::size_t, K>,
                                                                    std::index_sequence<J...>) {
            auto const& stat = stats.template get<K>();
            transform_reduce(tag, statistics[K].ref(), dims{-1}, stat.combine, stat.map, in..., statistics[J].ref()...);
        };
        (statistic(std::integral_constant<std::size_t, I>{}, std::make_index_sequence<I>{}), ...);
        transform(tag, out, f, in..., statistics[I].ref()...);
    }
    (std::make_index_sequence<NS>{});
}

}  // namespace detail

template <any_tag Tag, typename Out, typename Stats, typename F, typename... In>
void transform_rows(Tag tag, Out const& out, Stats const& stats, F const& f, In const&... in) {
    constexpr char const* op = "transform_rows";
    constexpr int NIn = static_cast<int>(sizeof...(In));
    static_assert(NIn >= 1, "transform_rows: pass at least one input");
    static_assert(1 + NIn <= max_operands, "transform_rows: at most 16 operands (the output and inputs together)");
    static_assert(detail::is_row_stats_v<Stats>,
                  "transform_rows: the third argument is the row's statistics, sy::row_stats(...) (sy::row_stats() "
                  "for none)");
    static_assert((!detail::is_mapped_v<In> && ...),
                  "transform_rows: inputs are read as they are; compute a mapped input's values inside f");
    using C = compute_t<Tag>;
    using S = storage_t<Tag>;
    constexpr dtype type = core_dtype_v<detail::tag_dtype<Tag>::value>;
    constexpr device_kind device = tag_device_v<Tag>;
    constexpr int NS = detail::row_stat_count<Stats>();
    static_assert(NIn + NS < max_operands || device == device_kind::cpu || device == device_kind::cuda,
                  "transform_rows: on this device the statistics are separate arrays, which f reads with the "
                  "inputs: at most 15 inputs and statistics together");
    // WebGPU and Metal run transform_rows as reductions and a transform.
    static_assert(device != device_kind::webgpu || detail::reduction_runs_on(device),
                  "transform_rows: the tag names device webgpu, which needs SWITCHYARD_WITH_WEBGPU defined (link the "
                  "switchyard::webgpu CMake target)");
    static_assert(device != device_kind::metal || detail::reduction_runs_on(device),
                  "transform_rows: the tag names device metal, which needs SWITCHYARD_WITH_METAL defined (link the "
                  "switchyard::metal CMake target)");
    // Past a wrong third argument or a device not built in, the one error above is enough.
    constexpr bool can_run =
        detail::is_row_stats_v<Stats> &&
        (device == device_kind::cpu || device == device_kind::cuda || detail::reduction_runs_on(device));
    static_assert(!can_run || detail::row_stats_valid<C, NIn, Stats>(std::make_index_sequence<NS>{}),
                  "transform_rows: each statistic needs a combine (sy::sum, sy::prod, sy::amin, sy::amax or "
                  "sy::combine(op, identity); not argmin or argmax) and a map callable with one compute_t<Tag> "
                  "value per input and then one per earlier statistic, returning a value convertible to "
                  "compute_t<Tag>");
    constexpr int NV = detail::row_values_count<Stats>();
    static_assert(!can_run || detail::row_map_valid<C, F>(std::make_index_sequence<NIn + NV + NS>{}),
                  "transform_rows: f must be callable with one compute_t<Tag> value per input, then one per "
                  "statistic marked with_values() (its map's value), then one per statistic, and return one value "
                  "convertible to compute_t<Tag>");
    // Past an invalid statistic or f, the runners are not instantiated: one error, not a cascade.
    constexpr bool valid = can_run && detail::row_stats_valid<C, NIn, Stats>(std::make_index_sequence<NS>{}) &&
                           detail::row_map_valid<C, F>(std::make_index_sequence<NIn + NV + NS>{});

    strided_ref const out_ref = detail::operand_ref(out, "output");
    strided_ref const ins[NIn] = {detail::operand_ref(in, "input")...};
    detail::check_operand<Tag>(out_ref, out_ref, "output", op);
    for (int k = 0; k < NIn; ++k) detail::check_operand<Tag>(ins[k], out_ref, "input", op);
    row_layout const layout = make_row_layout(op, out_ref, ins, NIn);

    if constexpr (!valid) {
        // Refused above.
    } else if constexpr (device == device_kind::cpu) {
        detail::cpu_transform_rows<type, S, C, NIn>(tag, stats, f, layout);
    } else if constexpr (device == device_kind::cuda) {
#if defined(__CUDACC__)
        detail::cuda_transform_rows<type, S, C, NIn>(stats, f, layout, out_ref.device_index);
#else
        static_assert(device != device_kind::cuda,
                      "transform_rows: the tag names device cuda, which needs this file compiled by nvcc");
#endif
    } else if constexpr (NV > 0) {
        detail::composed_transform_rows(tag, out_ref, stats, detail::recompute_values<NIn>(stats, f), in...);
    } else {
        detail::composed_transform_rows(tag, out_ref, stats, f, in...);
    }
}

}  // namespace switchyard
