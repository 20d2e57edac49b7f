// transform_reduce on the CPU: the runner behind switchyard/reduce.h.
//
// The order in which values are combined depends only on the layout
// (view/reduction_layout.h), never on the thread count, so every result is
// bitwise the same run to run on one machine and build:
//   - The reduced range of each output is cut into fixed blocks. A block is
//     one task; tasks go to the pool in any order and write their partial.
//   - Row reductions (reduced_inner): a block of reduce_row_block values is
//     loaded and converted in runs of cpu_transform_block, mapped by f and
//     folded into W lane accumulators (value j of the block into lane j % W),
//     which are then folded by halving (lane l with lane l + W / 2, ...).
//   - Column reductions: a task takes up to reduce_column_tile neighbouring
//     outputs and a block of reduced indices; runs of reduce_column_run
//     reduced indices are folded into a row of accumulators each, and the
//     runs' rows are folded pairwise (a cascade).
//   - An output's block partials are folded pairwise, in block order.
// f16 and bf16 accumulate in float (compute_t). argmin and argmax take a
// row run's extreme as amax does and, only where it beats or ties the best
// so far, the smallest index of a value matching it; columns and block
// partials fold (value, index) pairs. Indices come from the layout's index
// operand. The task functions are built once per CPU level
// (device/cpu/isa.h), as transform's rows are.
#pragma once

#include <cstdint>
#include <limits>
#include <memory>
#include <type_traits>
#include <utility>

#include "switchyard/core/combine.h"
#include "switchyard/core/config.h"
#include "switchyard/core/dtype.h"
#include "switchyard/device/cpu/convert.h"
#include "switchyard/device/cpu/for_each.h"
#include "switchyard/device/cpu/isa.h"
#include "switchyard/device/cpu/transform.h"
#include "switchyard/view/reduction_layout.h"

namespace switchyard::detail {

// Values per block of a row reduction (a task: a few microseconds).
inline constexpr std::int64_t reduce_row_block = 8192;
// A column task's outputs (neighbours along the innermost kept dimension),
// the reduced indices folded serially per accumulator row, and its elements
// (outputs times reduced indices). A whole row of 1024 outputs per task
// reads the input in sequence; tiles of 256 read 1 KiB of each 4 KiB page
// of a [4096, 1024] float sum, and ran behind torch.sum (docs/benchmarks.md).
inline constexpr std::int64_t reduce_column_tile = 1024;
inline constexpr std::int64_t reduce_column_run = 16;
inline constexpr std::int64_t reduce_column_task = 16384;

// Reduced indices per block of a column task with `tile` outputs (before
// clipping to the reduced range): whole runs, at least one.
constexpr std::int64_t column_block_size(std::int64_t tile) {
    std::int64_t const run = reduce_column_task / tile;
    return run < reduce_column_run ? reduce_column_run : run / reduce_column_run * reduce_column_run;
}

// Accumulators a column task holds at once, over every tile: its cascade
// holds at most floor(log2(runs)) + 1 rows of `tile`.
constexpr std::int64_t column_cascade_capacity() {
    std::int64_t most = 0;
    for (std::int64_t tile = 1; tile <= reduce_column_tile; ++tile) {
        std::int64_t rows = 1;
        for (std::int64_t runs = column_block_size(tile) / reduce_column_run; runs > 1; runs /= 2) ++rows;
        most = tile * rows > most ? tile * rows : most;
    }
    return most;
}

// Accumulator lanes of a row block (value j into lane j % W): 256 bytes of
// compute values, a loop the compiler vectorizes. Part of the documented
// fold order (docs/reduce.md), so it does not follow the target's vectors.
template <typename C>
inline constexpr int reduce_lanes = sizeof(C) >= 256 ? 1 : static_cast<int>(256 / sizeof(C));

// The pairwise fold of v[0..n) into v[0], in a fixed order.
template <typename C, typename Combine>
SWITCHYARD_INLINE C fold_pairwise(Combine const& combine, C* v, std::int64_t n) {
    while (n > 1) {
        std::int64_t const half = n / 2;
        for (std::int64_t j = 0; j < half; ++j) v[j] = combine(v[2 * j], v[2 * j + 1]);
        if (n % 2) v[half] = v[n - 1];
        n = half + n % 2;
    }
    return v[0];
}

// fold_pairwise of v[j * stride + m] over j in [0, n), for each m in
// [m0, m1), into v[m]: the same order, a row of m at a time.
template <typename C, typename Combine>
SWITCHYARD_INLINE void fold_pairwise_rows(Combine const& combine, C* v, std::int64_t n, std::int64_t stride,
                                          std::int64_t m0, std::int64_t m1) {
    while (n > 1) {
        std::int64_t const half = n / 2;
        for (std::int64_t j = 0; j < half; ++j) {
            C* const to = v + j * stride;
            C const* const a = v + 2 * j * stride;
            C const* const b = a + stride;
            for (std::int64_t m = m0; m < m1; ++m) to[m] = combine(a[m], b[m]);
        }
        if (n % 2)
            for (std::int64_t m = m0; m < m1; ++m) v[half * stride + m] = v[(n - 1) * stride + m];
        n = half + n % 2;
    }
}

// Folds lanes[0..W) into lanes[0] by halving: lane l with lane l + W / 2,
// then with l + W / 4, ... A fixed order; each level's width is a constant,
// so every level vectorizes (with a runtime width the narrow levels stayed
// scalar loops).
template <int W, typename Combine, typename A>
SWITCHYARD_INLINE void fold_lanes(Combine const& combine, A* lanes) {
    static_assert((W & (W - 1)) == 0, "halving needs a power of two");
    if constexpr (W > 1) {
        SWITCHYARD_KEEP_LOOP
        for (int l = 0; l < W / 2; ++l) lanes[l] = combine(lanes[l], lanes[l + W / 2]);
        fold_lanes<W / 2>(combine, lanes);
    }
}

// Folds element(0..n) into lanes[0..W), value j into lane j % W.
template <int W, typename Combine, typename Element, typename A>
SWITCHYARD_INLINE void fold_into_lanes(Combine const& combine, Element const& element, std::int64_t n, A* lanes) {
    std::int64_t j0 = 0;
    for (; j0 + W <= n; j0 += W)
        for (int l = 0; l < W; ++l) lanes[l] = combine(lanes[l], element(j0 + l));
    for (int l = 0; j0 + l < n; ++l) lanes[l] = combine(lanes[l], element(j0 + l));
}

// A run of 1 <= n <= P values (every input contiguous), folded as W lanes would
// fold it (value j alone in lane j, then halving), over only P lanes, the
// power of two at or above n (at least one chunk): each level above P
// combines a lane with the identity, which leaves it unchanged. P is a
// constant, so the lanes stay in registers; W lanes filled to a run-time
// length went through memory, and short rows ran at half the speed of
// PyTorch's (docs/benchmarks.md).
template <cpu_isa I, dtype D, typename S, typename C, int NIn, int P, typename Combine, typename F, typename A>
SWITCHYARD_INLINE A fold_short_run(Combine const& combine, F const& f, S const* const* run, std::int64_t n,
                                   A identity) {
    // Chunks of V lanes at constant positions: 64 bytes of values, or 16
    // when storage is converted (load_lanes' width). (Chunks of 32 bytes ran
    // up to 2.5x slower than the general loop in g++ 13's AVX-512 copy.) The chunk
    // that ends past n reads its values through a padded copy and keeps the
    // identity in the lanes past n.
    constexpr int bytes_v = 64 / sizeof(C) > 0 ? static_cast<int>(64 / sizeof(C)) : 1;
    constexpr int V = std::is_same_v<S, C> ? bytes_v : 16;
    // Every chunk holds a value: P halves while n fits in P / 2, and P >= V.
    static_assert(P >= V && P % V == 0);
    if constexpr (P > V)
        if (n <= P / 2) return fold_short_run<I, D, S, C, NIn, P / 2>(combine, f, run, n, identity);
    A lanes[P];
    [&]<std::size_t... K>(std::index_sequence<K...>) {
        auto const chunk = [&](int c) {
            if constexpr (std::is_same_v<S, C>) {
                // Read in place; the chunk past n pads f's values with the
                // identity, which combines to the identity.
                if ((c + 1) * V <= n) {
                    SWITCHYARD_KEEP_LOOP
                    for (int l = 0; l < V; ++l)
                        lanes[c * V + l] = combine(identity, static_cast<C>(f(run[K][c * V + l]...)));
                } else {
                    A padded[V];
                    SWITCHYARD_KEEP_LOOP
                    for (int l = 0; l < V; ++l) padded[l] = identity;
                    for (int l = 0; c * V + l < n; ++l) padded[l] = static_cast<C>(f(run[K][c * V + l]...));
                    SWITCHYARD_KEEP_LOOP
                    for (int l = 0; l < V; ++l) lanes[c * V + l] = combine(identity, padded[l]);
                }
            } else {
                // Converted V at a time; the chunk past n from a copy padded
                // with its first value (so that f sees only input values),
                // whose results past n are not kept.
                auto const mapped = [&](S const* const* src, C* m) {
                    C values[NIn][V];
                    (load_lanes<I, D, V>(src[K], values[K]), ...);
                    SWITCHYARD_KEEP_LOOP
                    for (int l = 0; l < V; ++l) m[l] = static_cast<C>(f(values[K][l]...));
                };
                C m[V];
                if ((c + 1) * V <= n) {
                    S const* src[NIn] = {run[K] + c * V...};
                    mapped(src, m);
                    SWITCHYARD_KEEP_LOOP
                    for (int l = 0; l < V; ++l) lanes[c * V + l] = combine(identity, m[l]);
                } else {
                    int const valid = static_cast<int>(n - c * V);
                    S padded[NIn][V];
                    for (int k = 0; k < NIn; ++k)
                        for (int l = 0; l < V; ++l) padded[k][l] = run[k][c * V + (l < valid ? l : 0)];
                    S const* src[NIn] = {padded[K]...};
                    mapped(src, m);
                    for (int l = 0; l < V; ++l) lanes[c * V + l] = l < valid ? combine(identity, m[l]) : identity;
                }
            }
        };
        [&]<std::size_t... Chunk>(std::index_sequence<Chunk...>) { (chunk(static_cast<int>(Chunk)), ...); }
        (std::make_index_sequence<P / V>{});
    }
    (std::make_index_sequence<NIn>{});
    fold_lanes<P>(combine, lanes);
    return lanes[0];
}

// v[0..n) = value. A zero is hidden from the optimizer first: g++ turns a
// fill with a constant zero (a sum's identity) into memset (rep stos here),
// and the loads of v that follow at once then wait for those string stores
// to retire instead of taking their data from the store buffer; rows of 32
// floats took twice as long (docs/benchmarks.md). An unknown value is
// filled with vector stores, which loads do forward from. Other constants
// (amax's -inf) are filled with vector stores anyway and stay constants.
template <typename A>
SWITCHYARD_INLINE void fill_accumulators(A* v, std::int64_t n, A value) {
#if defined(__GNUC__)
    if constexpr (std::is_arithmetic_v<A>)
        if (value == A{}) __asm__("" : "+m"(value));
#endif
    for (std::int64_t j = 0; j < n; ++j) v[j] = value;
}

// How the reduced range is cut, from the layout alone.
struct reduce_plan {
    std::int64_t blocks = 1;      // per output (row) or per tile (column)
    std::int64_t block_size = 1;  // reduced indices per block
    std::int64_t tile = 1;        // column reductions: outputs per task
    std::int64_t tiles_per_row = 1;
    std::int64_t tasks = 0;
};

inline reduce_plan make_reduce_plan(reduction_layout const& layout) {
    reduce_plan p;
    std::int64_t const L = layout.reduced_numel;
    if (layout.reduced_inner) {
        p.block_size = L < reduce_row_block ? (L > 0 ? L : 1) : reduce_row_block;
        p.blocks = (L + p.block_size - 1) / p.block_size;
        p.tasks = layout.kept_numel * p.blocks;
    } else {
        std::int64_t const row = layout.kept_row();
        p.tile = row < reduce_column_tile ? row : reduce_column_tile;
        p.tiles_per_row = (row + p.tile - 1) / p.tile;
        std::int64_t const run = column_block_size(p.tile);
        p.block_size = L < run ? (L > 0 ? L : 1) : run;
        p.blocks = (L + p.block_size - 1) / p.block_size;
        p.tasks = layout.kept_numel / row * p.tiles_per_row * p.blocks;
    }
    return p;
}

// n compute values from src (stepping `stride`): read in place when the
// storage is the compute type and contiguous, else converted into buffer.
template <dtype D, typename S, typename C>
SWITCHYARD_INLINE C const* values_at(S const* src, std::int64_t stride, C* buffer, std::int64_t n) {
    if constexpr (std::is_same_v<S, C>)
        if (stride == 1) return src;
    load_block<D>(src, stride, buffer, n);
    return buffer;
}

// Walks reduced indices r0, r0 + 1, ... as row segments of the innermost
// reduced dimension, keeping each input's offset.
template <int NIn>
struct reduced_walk {
    reduction_layout const& layout;
    std::int64_t coord[max_rank] = {};
    std::int64_t col = 0;

    reduced_walk(reduction_layout const& l, std::int64_t r0) : layout(l) {
        std::int64_t const row = layout.reduced_row();
        // A block that starts in the first row (every block of a short
        // reduction) needs no division.
        col = r0 < row ? r0 : r0 % row;
        std::int64_t outer = r0 < row ? 0 : r0 / row;
        for (std::int32_t d = layout.reduced_rank - 1; d-- > 0;) {
            coord[d] = outer % layout.reduced_sizes[d];
            outer /= layout.reduced_sizes[d];
        }
    }
    // Input k's offset at the current position.
    std::int64_t offset(int k) const {
        std::int64_t o = col * layout.reduced_inner_stride(1 + k);
        for (std::int32_t d = 0; d + 1 < layout.reduced_rank; ++d) o += coord[d] * layout.reduced_strides[1 + k][d];
        return o;
    }
    std::int64_t row_left() const { return layout.reduced_row() - col; }
    void advance(std::int64_t n) {
        col += n;
        if (col < layout.reduced_row()) return;
        col = 0;
        for (std::int32_t d = layout.reduced_rank - 1; d-- > 0;) {
            if (++coord[d] < layout.reduced_sizes[d]) break;
            coord[d] = 0;
        }
    }
};

// The indices of n elements from `first`, `step` apart (an indexed
// reduction's index operand along a row segment).
SWITCHYARD_INLINE void fill_indices(std::int64_t* index, std::int64_t first, std::int64_t step, std::int64_t n) {
    for (std::int64_t j = 0; j < n; ++j) index[j] = first + j * step;
}

// The smallest key(j) over j in [0, n) whose element(j) matches m
// (Combine::matches); int64 max if none. In lanes of W, so that it
// vectorizes.
template <int W, typename Combine, typename Element, typename Key, typename C>
SWITCHYARD_INLINE std::int64_t smallest_match(Element const& element, Key const& key, C m, std::int64_t n) {
    constexpr std::int64_t none = std::numeric_limits<std::int64_t>::max();
    std::int64_t lanes[W];
    for (int l = 0; l < W; ++l) lanes[l] = none;
    auto const step = [&](int l, std::int64_t j) {
        std::int64_t const k = Combine::matches(element(j), m) ? key(j) : none;
        lanes[l] = k < lanes[l] ? k : lanes[l];
    };
    std::int64_t j0 = 0;
    for (; j0 + W <= n; j0 += W)
        for (int l = 0; l < W; ++l) step(l, j0 + l);
    for (int l = 0; j0 + l < n; ++l) step(l, j0 + l);
    fold_lanes<W>([](std::int64_t a, std::int64_t b) { return a < b ? a : b; }, lanes);
    return lanes[0];
}

// Whether reduce_contiguous_block can read storage type S in a row built
// for level I: in place (S is the compute type), or converted W values at a
// time in registers (converts_lanes: for f16, where F16C is known at compile
// time for the level and SWITCHYARD_NO_F16C is not set).
template <cpu_isa I, dtype D, typename S, typename C>
constexpr bool reads_contiguous_blocks() {
    if constexpr (std::is_same_v<S, C>)
        return true;
    else
        return converts_lanes<I, D, S, C>();
}

// f over n values at run[k][0..n) (every input contiguous), folded: value j
// into lane j % W, then the lanes by halving. Storage other than the
// compute type is converted a lane group at a time, without the general
// path's buffer; the values and their order are the same.
template <cpu_isa I, dtype D, typename S, typename C, int NIn, typename Combine, typename F,
          typename A = accumulator_t<Combine, C>>
SWITCHYARD_INLINE A reduce_contiguous_block(Combine const& combine, F const& f, S const* const* run, std::int64_t n) {
    static_assert(reads_contiguous_blocks<I, D, S, C>());
    constexpr int W = reduce_lanes<C>;
    // (Longer runs gained nothing from it: 64 lanes went through memory.)
    if (n <= W / 2)
        return fold_short_run<I, D, S, C, NIn, W / 2>(combine, f, run, n, A(combine.template identity<C>()));
    A lanes[W];
    fill_accumulators(lanes, W, A(combine.template identity<C>()));
    [&]<std::size_t... K>(std::index_sequence<K...>) {
        if constexpr (std::is_same_v<S, C>) {
            auto const element = [&](std::int64_t j) { return static_cast<C>(f(run[K][j]...)); };
            fold_into_lanes<W>(combine, element, n, lanes);
        } else {
            std::int64_t j0 = 0;
            for (; j0 + W <= n; j0 += W) {
                C values[NIn][W];
                (load_lanes<I, D, W>(run[K] + j0, values[K]), ...);
                for (int l = 0; l < W; ++l) lanes[l] = combine(lanes[l], static_cast<C>(f(values[K][l]...)));
            }
            for (int l = 0; j0 + l < n; ++l)
                lanes[l] = combine(lanes[l], static_cast<C>(f(load_value<D, C>(run[K][j0 + l])...)));
        }
    }
    (std::make_index_sequence<NIn>{});
    fold_lanes<W>(combine, lanes);
    return lanes[0];
}

// Whether every block of a row reduction is one contiguous run of each
// input (one reduced dimension after merging, stride 1 in every input) and
// an output's runs start a fixed stride apart (at most one kept dimension),
// so that reduce_tasks can address blocks without the layout.
template <int NIn>
bool linear_row_blocks(reduction_layout const& layout) {
    bool linear = layout.reduced_inner && layout.reduced_rank == 1 && layout.kept_rank <= 1;
    for (int k = 0; k < NIn; ++k) linear = linear && layout.reduced_inner_stride(1 + k) == 1;
    return linear;
}

// f over the block [r0, r1) of one output's reduced range, folded. `base`
// points at each input's element for this output.
template <cpu_isa I, dtype D, typename S, typename C, int NIn, typename Combine, typename F,
          typename A = accumulator_t<Combine, C>>
SWITCHYARD_INLINE A reduce_row_block_value(Combine const& combine, F const& f, reduction_layout const& layout,
                                           S const* const* base, std::int64_t r0, std::int64_t r1) {
    constexpr bool indexed = is_indexed_combine_v<Combine>;
    constexpr int W = reduce_lanes<C>;
    constexpr std::int64_t B = cpu_transform_block;
    static_assert(B % W == 0, "a run holds whole lane groups, so lanes are fixed by the position in the block");
    // An indexed reduction keeps its best (value, index) so far, not lanes.
    A lanes[indexed ? 1 : W];
    [[maybe_unused]] A best = combine.template identity<C>();
    C buffer[NIn][B];
    std::int64_t index[indexed ? B : 1];
    reduced_walk<NIn> walk(layout, r0);
    std::int64_t inner[NIn];
    for (int k = 0; k < NIn; ++k) inner[k] = layout.reduced_inner_stride(1 + k);
    // An indexed run's indices: from index_first, index_step apart (one row
    // segment), or gathered into `index`.
    std::int64_t const index_step = indexed ? layout.reduced_inner_stride(1 + NIn) : 0;
    [[maybe_unused]] std::int64_t index_first = 0;
    [[maybe_unused]] bool index_gathered = false;
    // Inputs read in place need no buffer, so their runs may be longer: to
    // the row's or the block's end, if that keeps the next run's start a
    // whole number of lane groups into the block (so lanes stay fixed).
    // Indices are always buffered, so indexed runs are not.
    bool in_place = std::is_same_v<S, C> && !indexed;
    for (int k = 0; k < NIn; ++k) in_place = in_place && inner[k] == 1;
    // Folds run[k][0..filled) into the lanes, value j into lane j % W; an
    // indexed reduction's run into best.
    auto const fold_run = [&](C const* const* run, std::int64_t filled) {
        [&]<std::size_t... K>(std::index_sequence<K...>) {
            auto const element = [&](std::int64_t j) { return static_cast<C>(f(run[K][j]...)); };
            if constexpr (indexed) {
                // The run's extreme (its max for argmax) folded in lanes, as
                // amax is. Only a run whose extreme beats or ties best is
                // read again, for the smallest index of a value matching it
                // (the smallest index, not the first position: memory may
                // order the reduced dimensions otherwise).
                using extreme = typename Combine::extreme_combine;
                C ext[W];
                fill_accumulators(ext, W, extreme{}.template identity<C>());
                fold_into_lanes<W>(extreme{}, element, filled, ext);
                fold_lanes<W>(extreme{}, ext);
                C const m = ext[0];
                if (combine.replaces(best, m) || Combine::matches(best.value, m)) {
                    // A row segment's indices rise with the position.
                    std::int64_t const first =
                        index_gathered
                            ? smallest_match<W, Combine>(
                                  element, [&](std::int64_t j) { return index[j]; }, m, filled)
                            : index_first + index_step * smallest_match<W, Combine>(
                                                             element, [](std::int64_t j) { return j; }, m, filled);
                    best = combine(best, A{m, first});
                }
            } else {
                fold_into_lanes<W>(combine, element, filled, lanes);
            }
        }
        (std::make_index_sequence<NIn>{});
    };
    std::int64_t r = r0;
    if constexpr (std::is_same_v<S, C> && !indexed) {
        if (in_place && walk.row_left() >= r1 - r0) {
            // The block lies in the innermost reduced row and is read in
            // place: the one run the loop below would make, folded in the
            // same order without its bookkeeping.
            C const* run[NIn];
            for (int k = 0; k < NIn; ++k) run[k] = base[k] + walk.offset(k);
            return reduce_contiguous_block<I, D, C, C, NIn>(combine, f, run, r1 - r0);
        }
    }
    if constexpr (!indexed) fill_accumulators(lanes, W, A(combine.template identity<C>()));
    while (r < r1) {
        std::int64_t want = r1 - r < B ? r1 - r : B;
        if (in_place) {
            std::int64_t const row_run = walk.row_left() < r1 - r ? walk.row_left() : r1 - r;
            if (row_run > want && (row_run == r1 - r || row_run % W == 0)) want = row_run;
        }
        C const* run[NIn];
        std::int64_t filled = 0;
        if (walk.row_left() >= want) {
            // One row segment.
            for (int k = 0; k < NIn; ++k) run[k] = values_at<D>(base[k] + walk.offset(k), inner[k], buffer[k], want);
            if constexpr (indexed) index_first = walk.offset(NIn), index_gathered = false;
            filled = want;
            r += want;
            walk.advance(want);
        } else {
            // Several short rows, gathered into the buffers.
            while (filled < want) {
                std::int64_t n = walk.row_left();
                if (n > want - filled) n = want - filled;
                for (int k = 0; k < NIn; ++k) load_block<D>(base[k] + walk.offset(k), inner[k], buffer[k] + filled, n);
                if constexpr (indexed)
                    fill_indices(index + filled, walk.offset(NIn), index_step, n), index_gathered = true;
                filled += n;
                r += n;
                walk.advance(n);
            }
            for (int k = 0; k < NIn; ++k) run[k] = buffer[k];
        }
        fold_run(run, filled);
    }
    if constexpr (indexed) {
        return best;
    } else {
        fold_lanes<W>(combine, lanes);
        return lanes[0];
    }
}

// f over the block [r0, r1) for `tile` neighbouring outputs, folded;
// store(j, value) takes output j's result, j in [0, tile). `base` points at
// each input's element for the first one.
template <cpu_isa I, dtype D, typename S, typename C, int NIn, typename Combine, typename F, typename Store>
SWITCHYARD_INLINE void reduce_column_block(Combine const& combine, F const& f, reduction_layout const& layout,
                                           S const* const* base, std::int64_t tile, std::int64_t r0, std::int64_t r1,
                                           Store const& store) {
    using A = accumulator_t<Combine, C>;
    constexpr std::int64_t B = cpu_transform_block;
    // A cascade of accumulator rows of `tile`: level j holds the fold of
    // 2^j runs; rows lie one after another in `stack`.
    constexpr int levels = 16;  // column_cascade_capacity() bounds the rows
    A stack[column_cascade_capacity()];
    int depth_of[levels];
    int depth = 0;
    C buffer[NIn][B];
    constexpr bool indexed = is_indexed_combine_v<Combine>;
    std::int64_t inner[NIn];
    bool in_place = std::is_same_v<S, C>;
    for (int k = 0; k < NIn; ++k) {
        inner[k] = layout.kept_inner_stride(1 + k);
        in_place = in_place && inner[k] == 1;
    }
    // Rows read in place go whole (split into B values, as the others are
    // converted or gathered, they ran slower: docs/benchmarks.md).
    std::int64_t const step = in_place ? tile : B;
    // One reduced dimension: reduced index r is r strides on, no walk.
    bool const linear = layout.reduced_rank == 1;
    std::int64_t reduced_stride[NIn];
    for (int k = 0; k < NIn; ++k) reduced_stride[k] = layout.reduced_inner_stride(1 + k);
    std::int64_t const index_stride = indexed ? layout.reduced_inner_stride(1 + NIn) : 0;
    // Folds n values of a row (the same index for every output of the tile)
    // into a.
    auto const fold_row = [&](C const* const* row, std::int64_t n, A* a, [[maybe_unused]] std::int64_t index) {
        [&]<std::size_t... K>(std::index_sequence<K...>) {
            if constexpr (indexed) {
                for (std::int64_t t = 0; t < n; ++t) a[t] = combine(a[t], A{static_cast<C>(f(row[K][t]...)), index});
            } else {
                for (std::int64_t t = 0; t < n; ++t) a[t] = combine(a[t], static_cast<C>(f(row[K][t]...)));
            }
        }
        (std::make_index_sequence<NIn>{});
    };
    reduced_walk<NIn> walk(layout, r0);
    for (std::int64_t run0 = r0; run0 < r1; run0 += reduce_column_run) {
        std::int64_t const run1 = run0 + reduce_column_run < r1 ? run0 + reduce_column_run : r1;
        A* const acc = stack + depth * tile;
        // A plain fill: hiding the zero (fill_accumulators) did not measure faster here (docs/benchmarks.md).
        for (std::int64_t t = 0; t < tile; ++t) acc[t] = combine.template identity<C>();
        if constexpr (std::is_same_v<S, C>) {
            if (in_place && linear) {
                // Evenly spaced rows read in place: a pointer per input,
                // stepped, and nothing else per row (narrow tiles pay it
                // per few values).
                C const* row[NIn];
                for (int k = 0; k < NIn; ++k) row[k] = base[k] + run0 * reduced_stride[k];
                for (std::int64_t r = run0; r < run1; ++r) {
                    fold_row(row, tile, acc, r * index_stride);
                    for (int k = 0; k < NIn; ++k) row[k] += reduced_stride[k];
                }
            }
        }
        for (std::int64_t r = run0; !(in_place && linear) && r < run1; ++r) {
            std::int64_t offset[NIn];
            [[maybe_unused]] std::int64_t index = 0;
            if (linear) {
                for (int k = 0; k < NIn; ++k) offset[k] = r * reduced_stride[k];
                index = r * index_stride;
            } else {
                for (int k = 0; k < NIn; ++k) offset[k] = walk.offset(k);
                if constexpr (indexed) index = walk.offset(NIn);
                walk.advance(1);
            }
            for (std::int64_t t0 = 0; t0 < tile; t0 += step) {
                std::int64_t const n = tile - t0 < step ? tile - t0 : step;
                C const* row[NIn];
                for (int k = 0; k < NIn; ++k)
                    row[k] = values_at<D>(base[k] + offset[k] + t0 * inner[k], inner[k], buffer[k], n);
                fold_row(row, n, acc + t0, index);
            }
        }
        depth_of[depth] = 0;
        ++depth;
        // Fold equal levels: after 2^j runs, one row at level j.
        while (depth >= 2 && depth_of[depth - 1] == depth_of[depth - 2]) {
            A* a = stack + (depth - 2) * tile;
            A const* b = a + tile;
            for (std::int64_t t = 0; t < tile; ++t) a[t] = combine(a[t], b[t]);
            ++depth_of[depth - 2];
            --depth;
        }
    }
    // What is left, from the newest (smallest) level down.
    for (int j = depth - 1; j > 0; --j) {
        A* a = stack + (j - 1) * tile;
        A const* b = a + tile;
        for (std::int64_t t = 0; t < tile; ++t) a[t] = combine(a[t], b[t]);
    }
    for (std::int64_t t = 0; t < tile; ++t) store(t, stack[t]);
}

// Output m's result: the value, or an indexed reduction's int64 index.
template <dtype D, typename S, typename A>
SWITCHYARD_INLINE void reduce_store(reduction_layout const& layout, std::int64_t m, A const& value) {
    if constexpr (requires { value.index; })
        static_cast<std::int64_t*>(layout.data[0])[layout.kept_offset(0, m)] = value.index;
    else
        static_cast<S*>(layout.data[0])[layout.kept_offset(0, m)] = store_value<D, S>(value);
}

// Where output m's partial of `block` is kept: a row reduction's task makes
// one output's partial, kept beside that output's others; a column task
// makes a tile of outputs' partials, kept beside each other (block-major),
// so that it writes them in sequence and the final fold reads rows of them.
inline std::int64_t partial_slot(reduction_layout const& layout, reduce_plan const& plan, std::int64_t m,
                                 std::int64_t block) {
    return layout.reduced_inner ? m * plan.blocks + block : block * layout.kept_numel + m;
}

// Output m's value: stored, or kept as a block partial when its range has
// several blocks.
template <dtype D, typename S, typename A>
SWITCHYARD_INLINE void reduce_emit(reduction_layout const& layout, reduce_plan const& plan, A* partials, std::int64_t m,
                                   std::int64_t block, A const& value) {
    if (plan.blocks == 1)
        reduce_store<D, S>(layout, m, value);
    else
        partials[partial_slot(layout, plan, m, block)] = value;
}

// Tasks [t0, t1) of the plan. I is the level the caller is built for.
template <cpu_isa I, dtype D, typename S, typename C, int NIn, typename Combine, typename F,
          typename A = accumulator_t<Combine, C>>
SWITCHYARD_INLINE void reduce_tasks(Combine const& combine, F const& f, reduction_layout const& layout,
                                    reduce_plan const& plan, A* partials, std::int64_t t0, std::int64_t t1) {
    // Local copies: the compiler then sees that they do not alias the output.
    Combine const c = combine;
    F const kernel = f;
    std::int64_t const L = layout.reduced_numel;
    if constexpr (reads_contiguous_blocks<I, D, S, C>() && !is_indexed_combine_v<Combine>) {
        if (linear_row_blocks<NIn>(layout)) {
            // The common row reduction. The data pointers and strides are
            // read once and kept in locals: reloaded for every block, each
            // load waited on the previous block's output store, and so on
            // its fold (docs/benchmarks.md).
            S const* data[NIn];
            std::int64_t stride[NIn];
            for (int k = 0; k < NIn; ++k) {
                data[k] = static_cast<S const*>(layout.data[1 + k]);
                stride[k] = layout.kept_rank == 1 ? layout.kept_strides[1 + k][0] : 0;
            }
            std::int64_t const blocks = plan.blocks, block_size = plan.block_size;
            for (std::int64_t t = t0; t < t1; ++t) {
                std::int64_t const block = blocks == 1 ? 0 : t % blocks;
                std::int64_t const unit = blocks == 1 ? t : t / blocks;
                std::int64_t const r0 = block * block_size;
                std::int64_t const r1 = r0 + block_size < L ? r0 + block_size : L;
                S const* run[NIn];
                for (int k = 0; k < NIn; ++k) run[k] = data[k] + unit * stride[k] + r0;
                reduce_emit<D, S>(layout, plan, partials, unit, block,
                                  reduce_contiguous_block<I, D, S, C, NIn>(c, kernel, run, r1 - r0));
            }
            return;
        }
    }
    for (std::int64_t t = t0; t < t1; ++t) {
        std::int64_t const block = plan.blocks == 1 ? 0 : t % plan.blocks;
        std::int64_t const r0 = block * plan.block_size;
        std::int64_t const r1 = r0 + plan.block_size < L ? r0 + plan.block_size : L;
        std::int64_t const unit = plan.blocks == 1 ? t : t / plan.blocks;  // an output (row) or a tile (column)
        S const* base[NIn];
        if (layout.reduced_inner) {
            for (int k = 0; k < NIn; ++k)
                base[k] = static_cast<S const*>(layout.data[1 + k]) + layout.kept_offset(1 + k, unit);
            A const v = reduce_row_block_value<I, D, S, C, NIn>(c, kernel, layout, base, r0, r1);
            reduce_emit<D, S>(layout, plan, partials, unit, block, v);
        } else {
            std::int64_t const row = layout.kept_row();
            std::int64_t const m0 = unit / plan.tiles_per_row * row + unit % plan.tiles_per_row * plan.tile;
            std::int64_t const tile = row - m0 % row < plan.tile ? row - m0 % row : plan.tile;
            for (int k = 0; k < NIn; ++k)
                base[k] = static_cast<S const*>(layout.data[1 + k]) + layout.kept_offset(1 + k, m0);
            if (plan.blocks == 1) {
                reduce_column_block<I, D, S, C, NIn>(
                    c, kernel, layout, base, tile, r0, r1,
                    [&](std::int64_t j, A const& v) { reduce_store<D, S>(layout, m0 + j, v); });
            } else {
                // The tile's partials are neighbours (partial_slot): a copy.
                A* const to = partials + partial_slot(layout, plan, m0, block);
                reduce_column_block<I, D, S, C, NIn>(c, kernel, layout, base, tile, r0, r1,
                                                     [to](std::int64_t j, A const& v) { to[j] = v; });
            }
        }
    }
}

template <dtype D, typename S, typename C, int NIn, typename Combine, typename F>
using reduce_tasks_fn = void (*)(Combine const&, F const&, reduction_layout const&, reduce_plan const&,
                                 accumulator_t<Combine, C>*, std::int64_t, std::int64_t);

template <dtype D, typename S, typename C, int NIn, typename Combine, typename F>
[[gnu::flatten]] void reduce_tasks_baseline(Combine const& c, F const& f, reduction_layout const& layout,
                                            reduce_plan const& plan, accumulator_t<Combine, C>* partials,
                                            std::int64_t t0, std::int64_t t1) {
    reduce_tasks<cpu_isa::baseline, D, S, C, NIn>(c, f, layout, plan, partials, t0, t1);
}
#if defined(SWITCHYARD_CPU_ISA_VARIANTS)
template <dtype D, typename S, typename C, int NIn, typename Combine, typename F>
[[gnu::flatten, gnu::target("arch=x86-64-v3")]] void reduce_tasks_v3(Combine const& c, F const& f,
                                                                     reduction_layout const& layout,
                                                                     reduce_plan const& plan,
                                                                     accumulator_t<Combine, C>* partials,
                                                                     std::int64_t t0, std::int64_t t1) {
    reduce_tasks<cpu_isa::x86_64_v3, D, S, C, NIn>(c, f, layout, plan, partials, t0, t1);
}
template <dtype D, typename S, typename C, int NIn, typename Combine, typename F>
[[gnu::flatten, gnu::target("arch=x86-64-v4")]] void reduce_tasks_v4(Combine const& c, F const& f,
                                                                     reduction_layout const& layout,
                                                                     reduce_plan const& plan,
                                                                     accumulator_t<Combine, C>* partials,
                                                                     std::int64_t t0, std::int64_t t1) {
    reduce_tasks<cpu_isa::x86_64_v4, D, S, C, NIn>(c, f, layout, plan, partials, t0, t1);
}
#endif

template <dtype D, typename S, typename C, int NIn, typename Combine, typename F>
reduce_tasks_fn<D, S, C, NIn, Combine, F> reduce_tasks_for(cpu_isa level) noexcept {
#if defined(SWITCHYARD_CPU_ISA_VARIANTS)
    if (level == cpu_isa::x86_64_v4) return &reduce_tasks_v4<D, S, C, NIn, Combine, F>;
    if (level == cpu_isa::x86_64_v3) return &reduce_tasks_v3<D, S, C, NIn, Combine, F>;
#endif
    (void)level;
    return &reduce_tasks_baseline<D, S, C, NIn, Combine, F>;
}

// Estimated cost of one value of a reduction, for the pool's grain model.
inline constexpr double reduce_ns_per_value = 0.5;

// The reduction on `pool`; the result does not depend on the pool's size.
template <dtype D, typename S, typename C, int NIn, typename Pool, typename Combine, typename F>
void cpu_transform_reduce_on(Pool& pool, Combine const& combine, F const& f, reduction_layout const& layout) {
    using A = accumulator_t<Combine, C>;
    if (layout.kept_numel == 0) return;
    if constexpr (Combine::has_identity) {
        if (layout.reduced_numel == 0) {
            S* const out = static_cast<S*>(layout.data[0]);
            S const identity = store_value<D, S>(combine.template identity<C>());
            for (std::int64_t m = 0; m < layout.kept_numel; ++m) out[layout.kept_offset(0, m)] = identity;
            return;
        }
    }
    reduce_plan const plan = make_reduce_plan(layout);
    // Not std::vector: A may be bool (an amax of bools), which it packs.
    auto const partials = std::make_unique_for_overwrite<A[]>(
        plan.blocks > 1 ? static_cast<std::size_t>(layout.kept_numel * plan.blocks) : 0);
    auto const tasks_fn = reduce_tasks_for<D, S, C, NIn, Combine, F>(host_cpu_isa());
    double const values_per_task =
        static_cast<double>(plan.block_size) * static_cast<double>(layout.reduced_inner ? 1 : plan.tile);
    pool.parallel_for(
        std::int64_t{0}, plan.tasks, parallel_hint{0, values_per_task * reduce_ns_per_value * NIn},
        [&](std::int64_t t0, std::int64_t t1) { tasks_fn(combine, f, layout, plan, partials.get(), t0, t1); });
    if (plan.blocks == 1) return;
    pool.parallel_for(
        std::int64_t{0}, layout.kept_numel, parallel_hint{0, static_cast<double>(plan.blocks) * reduce_ns_per_value},
        [&](std::int64_t m0, std::int64_t m1) {
            A* const p = partials.get();
            if (layout.reduced_inner) {
                for (std::int64_t m = m0; m < m1; ++m)
                    reduce_store<D, S>(layout, m, fold_pairwise(combine, p + m * plan.blocks, plan.blocks));
            } else {
                fold_pairwise_rows(combine, p, plan.blocks, layout.kept_numel, m0, m1);
                for (std::int64_t m = m0; m < m1; ++m) reduce_store<D, S>(layout, m, p[m]);
            }
        });
}

template <dtype D, typename S, typename C, int NIn, typename Tag, typename Combine, typename F>
void cpu_transform_reduce(Tag, Combine const& combine, F const& f, reduction_layout const& layout) {
    with_cpu_pool<Tag>([&](auto& pool) { cpu_transform_reduce_on<D, S, C, NIn>(pool, combine, f, layout); });
}

}  // namespace switchyard::detail
