// transform_rows on the CPU: the runner behind switchyard/transform_rows.h.
//
// Rows go to the pool in chunks; a task runs one row at a time, so that a
// row stays in cache while its passes run (one per statistic, then the pass
// that maps and stores) and is read from memory once, for rows that fit
// the cache. An input whose storage is its compute type and contiguous
// along the row is read directly; any other (f16, bf16, strided) is
// converted once per row into a per-task buffer when the row's converted
// inputs fit cpu_rows_cache_bytes, else block by block in every pass; an
// input broadcast along the row is one block of copies of its value.
//
// A statistic marked with_values() also stores its map's values, which the
// final pass hands to f: in the output row itself when it is the only such
// statistic and the output is contiguous, of the compute type and not an
// input, else in a per-task buffer of the row's length.
//
// A statistic folds the row in blocks of reduce_row_block values, each into
// W lanes (value j into lane j % W) folded by halving, and the blocks'
// partials pairwise: an order fixed by the row's length alone, so results
// are bitwise the same run to run whatever the thread count. The task
// function is built once per CPU level (device/cpu/isa.h), as transform's
// rows are.
#pragma once

#include <cstdint>
#include <type_traits>
#include <memory>
#include <utility>

#include "switchyard/core/dtype.h"
#include "switchyard/core/row_stat.h"
#include "switchyard/device/cpu/convert.h"
#include "switchyard/device/cpu/for_each.h"
#include "switchyard/device/cpu/isa.h"
#include "switchyard/device/cpu/reduce.h"
#include "switchyard/device/cpu/transform.h"
#include "switchyard/view/row_layout.h"

namespace switchyard::detail {

// A row's converted inputs up to this size stay in a buffer for all passes.
inline constexpr std::int64_t cpu_rows_cache_bytes = 256 * 1024;

// Where one task's rows read their inputs from: in place where the storage
// is the compute type and contiguous, else from a buffer of converted
// values: the whole row (when the row's converted inputs fit
// cpu_rows_cache_bytes: loaded by the row's first pass), one block (loaded
// again for every block and pass), or, for an input broadcast along the
// row, one block of copies of its value.
template <dtype D, typename S, typename C, int NIn>
struct row_inputs {
    S const* start[NIn];
    std::int64_t inner[NIn];
    C* buffer[NIn];  // null: read directly
    bool whole_row = false;

    static constexpr bool read_directly(std::int64_t inner) { return std::is_same_v<S, C> && inner == 1; }

    // Sets up the buffers for rows of n values; returns how many compute
    // values they need in all (`into` null) or points them into `into`.
    std::int64_t place_buffers(std::int64_t n, C* into) {
        std::int64_t const block = n < reduce_row_block ? n : reduce_row_block;
        std::int64_t converted = 0;
        for (int k = 0; k < NIn; ++k) converted += !read_directly(inner[k]) && inner[k] != 0;
        whole_row = static_cast<std::int64_t>(sizeof(C)) * n * converted <= cpu_rows_cache_bytes;
        std::int64_t used = 0;
        for (int k = 0; k < NIn; ++k) {
            buffer[k] = nullptr;
            if (read_directly(inner[k])) continue;
            if (into) buffer[k] = into + used;
            used += inner[k] != 0 && whole_row ? n : block;
        }
        return used;
    }

    // Input k's values [j0, j0 + n) of the row (n at most reduce_row_block);
    // `first_pass` says this is the row's first pass, which fills the
    // buffers that later passes reuse.
    SWITCHYARD_INLINE C const* values(int k, std::int64_t j0, std::int64_t n, bool first_pass) const {
        if (!buffer[k]) return reinterpret_cast<C const*>(start[k]) + j0;
        if (inner[k] == 0) {
            if (first_pass && j0 == 0) load_block<D>(start[k], 0, buffer[k], n);
            return buffer[k];
        }
        C* const into = buffer[k] + (whole_row ? j0 : 0);
        if (!whole_row || first_pass) load_block<D>(start[k] + j0 * inner[k], inner[k], into, n);
        return into;
    }
};

// Where statistic I's values go among the with_values() buffers, or -1.
template <typename Stats>
constexpr int values_slot(std::size_t I) {
    for (int w = 0; w < Stats::values_count; ++w)
        if (Stats::with_values.at[w] == static_cast<int>(I)) return w;
    return -1;
}

// Statistic I of the row into s[I], from s[0..I); its map's values into
// values[slot] when it hands them to f.
template <std::size_t I, dtype D, typename S, typename C, int NIn, typename Stats>
SWITCHYARD_INLINE void row_statistic(Stats const& stats, row_inputs<D, S, C, NIn> const& in, std::int64_t n, C* s,
                                     C* partials, C* const* values) {
    constexpr int W = reduce_lanes<C>;
    constexpr int slot = values_slot<Stats>(I);
    auto const& stat = stats.template get<I>();
    auto const combine = stat.combine;
    auto const map = stat.map;
    std::int64_t const blocks = (n + reduce_row_block - 1) / reduce_row_block;
    for (std::int64_t b = 0; b < blocks; ++b) {
        std::int64_t const j0 = b * reduce_row_block;
        std::int64_t const len = n - j0 < reduce_row_block ? n - j0 : reduce_row_block;
        C const* v[NIn];
        for (int k = 0; k < NIn; ++k) v[k] = in.values(k, j0, len, I == 0);
        C lanes[W];
        fill_accumulators(lanes, W, C(combine.template identity<C>()));
        [&]<std::size_t... K, std::size_t... J>(std::index_sequence<K...>, std::index_sequence<J...>) {
            C const earlier[sizeof...(J) > 0 ? sizeof...(J) : 1] = {s[J]...};
            auto const element = [&](std::int64_t j) {
                C const e = static_cast<C>(map(v[K][j]..., earlier[J]...));
                if constexpr (slot >= 0) values[slot][j0 + j] = e;
                return e;
            };
            std::int64_t j = 0;
            for (; j + W <= len; j += W)
                for (int l = 0; l < W; ++l) lanes[l] = combine(lanes[l], element(j + l));
            for (int l = 0; j + l < len; ++l) lanes[l] = combine(lanes[l], element(j + l));
        }
        (std::make_index_sequence<NIn>{}, std::make_index_sequence<I>{});
        fold_lanes<W>(combine, lanes);
        partials[b] = lanes[0];
    }
    s[I] = fold_pairwise(combine, partials, blocks);
}

// Rows [m0, m1) of the layout. I is the level the caller is built for.
template <cpu_isa I, dtype D, typename S, typename C, int NIn, typename Stats, typename F>
SWITCHYARD_INLINE void rows_tasks(Stats const& stats, F const& f, row_layout const& layout, std::int64_t m0,
                                  std::int64_t m1) {
    constexpr int NS = Stats::count;
    constexpr int NV = Stats::values_count;
    constexpr std::int64_t B = cpu_transform_block;
    // Local copies: the compiler then sees that they do not alias the output.
    Stats const st = stats;
    F const kernel = f;
    std::int64_t const n = layout.row_size;
    row_inputs<D, S, C, NIn> in{};
    for (int k = 0; k < NIn; ++k) in.inner[k] = layout.inner[1 + k];
    auto const buffer = std::make_unique_for_overwrite<C[]>(static_cast<std::size_t>(in.place_buffers(n, nullptr)));
    in.place_buffers(n, buffer.get());
    auto const partials =
        std::make_unique_for_overwrite<C[]>(static_cast<std::size_t>((n + reduce_row_block - 1) / reduce_row_block));
    auto const values_buffer = std::make_unique_for_overwrite<C[]>(static_cast<std::size_t>(n * NV));
    C* values[NV > 0 ? NV : 1];
    for (int w = 0; w < NV; ++w) values[w] = values_buffer.get() + w * n;
    std::int64_t const out_inner = layout.inner[0];
    bool const write_directly = std::is_same_v<S, C> && out_inner == 1;
    for (std::int64_t m = m0; m < m1; ++m) {
        S* const out = static_cast<S*>(layout.starts.data[0]) + layout.row_offset(0, m);
        for (int k = 0; k < NIn; ++k)
            in.start[k] = static_cast<S const*>(layout.starts.data[1 + k]) + layout.row_offset(1 + k, m);
        // One statistic's values go straight into an output row of the compute
        // type that is not also an input: f reads each before writing it there,
        // and the row's lines are fetched while the statistic's pass computes.
        // Comparing row starts suffices: make_row_layout refuses an input that
        // shares memory with the output without being exactly it.
        bool out_holds_values = NV == 1 && write_directly;
        for (int k = 0; k < NIn; ++k)
            out_holds_values = out_holds_values && static_cast<void const*>(in.start[k]) != out;
        C* row_values[NV > 0 ? NV : 1];
        for (int w = 0; w < NV; ++w) row_values[w] = values[w];
        if (out_holds_values) row_values[0] = reinterpret_cast<C*>(out);
        C s[NS > 0 ? NS : 1];
        [&]<std::size_t... J>(std::index_sequence<J...>) {
            (row_statistic<J>(st, in, n, s, partials.get(), row_values), ...);
        }
        (std::make_index_sequence<NS>{});
        // The map, stored block by block.
        [&]<std::size_t... K, std::size_t... V, std::size_t... J>(std::index_sequence<K...>, std::index_sequence<V...>,
                                                                  std::index_sequence<J...>) {
            C const stat[NS > 0 ? NS : 1] = {s[J]...};
            C staged[B];
            for (std::int64_t j0 = 0; j0 < n; j0 += B) {
                std::int64_t const len = n - j0 < B ? n - j0 : B;
                C const* v[NIn];
                for (int k = 0; k < NIn; ++k) v[k] = in.values(k, j0, len, NS == 0);
                C* const o = write_directly ? reinterpret_cast<C*>(out) + j0 : staged;
                C const* kept[NV > 0 ? NV : 1];
                for (int w = 0; w < NV; ++w) kept[w] = row_values[w] + j0;
                for (std::int64_t j = 0; j < len; ++j)
                    o[j] = static_cast<C>(kernel(v[K][j]..., kept[V][j]..., stat[J]...));
                if (!write_directly) store_block<D>(staged, out + j0 * out_inner, out_inner, len);
            }
        }
        (std::make_index_sequence<NIn>{}, std::make_index_sequence<NV>{}, std::make_index_sequence<NS>{});
    }
}

template <dtype D, typename S, typename C, int NIn, typename Stats, typename F>
using rows_tasks_fn = void (*)(Stats const&, F const&, row_layout const&, std::int64_t, std::int64_t);

template <dtype D, typename S, typename C, int NIn, typename Stats, typename F>
[[gnu::flatten]] void rows_tasks_baseline(Stats const& s, F const& f, row_layout const& layout, std::int64_t m0,
                                          std::int64_t m1) {
    rows_tasks<cpu_isa::baseline, D, S, C, NIn>(s, f, layout, m0, m1);
}
#if defined(SWITCHYARD_CPU_ISA_VARIANTS)
template <dtype D, typename S, typename C, int NIn, typename Stats, typename F>
[[gnu::flatten, gnu::target("arch=x86-64-v3")]] void rows_tasks_v3(Stats const& s, F const& f, row_layout const& layout,
                                                                   std::int64_t m0, std::int64_t m1) {
    rows_tasks<cpu_isa::x86_64_v3, D, S, C, NIn>(s, f, layout, m0, m1);
}
template <dtype D, typename S, typename C, int NIn, typename Stats, typename F>
[[gnu::flatten, gnu::target("arch=x86-64-v4")]] void rows_tasks_v4(Stats const& s, F const& f, row_layout const& layout,
                                                                   std::int64_t m0, std::int64_t m1) {
    rows_tasks<cpu_isa::x86_64_v4, D, S, C, NIn>(s, f, layout, m0, m1);
}
#endif

template <dtype D, typename S, typename C, int NIn, typename Stats, typename F>
rows_tasks_fn<D, S, C, NIn, Stats, F> rows_tasks_for(cpu_isa level) noexcept {
#if defined(SWITCHYARD_CPU_ISA_VARIANTS)
    if (level == cpu_isa::x86_64_v4) return &rows_tasks_v4<D, S, C, NIn, Stats, F>;
    if (level == cpu_isa::x86_64_v3) return &rows_tasks_v3<D, S, C, NIn, Stats, F>;
#endif
    (void)level;
    return &rows_tasks_baseline<D, S, C, NIn, Stats, F>;
}

template <dtype D, typename S, typename C, int NIn, typename Tag, typename Stats, typename F>
void cpu_transform_rows(Tag, Stats const& stats, F const& f, row_layout const& layout) {
    if (layout.rows == 0 || layout.row_size == 0) return;
    auto const tasks_fn = rows_tasks_for<D, S, C, NIn, Stats, F>(host_cpu_isa());
    // Per row: each pass reads the inputs (from cache after the first).
    double const ns_per_row =
        static_cast<double>(layout.row_size) * reduce_ns_per_value * static_cast<double>(NIn * (Stats::count + 1));
    auto const run = [&](auto& pool) {
        pool.parallel_for(std::int64_t{0}, layout.rows, parallel_hint{0, ns_per_row},
                          [&](std::int64_t m0, std::int64_t m1) { tasks_fn(stats, f, layout, m0, m1); });
    };
    with_cpu_pool<Tag>(run);
}

}  // namespace switchyard::detail
