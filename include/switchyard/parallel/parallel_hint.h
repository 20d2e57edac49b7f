// parallel_hint and plan_chunks: how parallel_for cuts a range into chunks
// and how many threads it uses (the grain model).
//
//   struct parallel_hint { std::int64_t grain; double cost_per_element_ns; };
//   chunk_plan plan_chunks(n, hint, pool_threads, scheduling)
//
// Explicit grain (hint.grain > 0) is the minimum chunk size: every chunk has
// at least `grain` elements (only a range shorter than grain gives a shorter
// chunk, the whole range), so at most n / grain threads take part. The cost
// hint is ignored.
//
// Automatic grain (hint.grain <= 0) is cost-aware. With c the cost of one
// element (hint.cost_per_element_ns, or default_cost_per_element_ns when the
// hint is 0, negative or NaN) the range's work is W = n * c, and
//
//   threads = clamp(floor(W / min_work_per_thread_ns), 1, pool threads, n)
//
// Each thread that joins must get enough work to repay waking it and
// handing it the job (about 0.5 us when it is polling; 2 to 15 us of the
// caller's time plus up to milliseconds before it runs when it is asleep,
// measured on a 2-core KVM guest). With one thread the range runs inline on
// the caller and nobody is woken: W < 10 us does not go parallel. Chunks
// (work_stealing_pool) are
//
//   grain = max(ceil(n / (chunks_per_thread * threads)), ceil(target_chunk_ns / c))
//
// about 8 chunks per thread for load balance, but no chunk under about 2 us
// of work, which keeps the per-chunk cost (a deque push and pop, sometimes a
// steal: 20-200 ns) to a few percent. broadcast_pool cuts the range into
// `threads` equal blocks instead. A caller that knows its body (for_each
// does) passes cost_per_element_ns; the default of 100 ns deliberately
// over-estimates cheap bodies: mistaking a cheap body for an expensive one
// costs one fork-join (microseconds), the reverse can lose most of the
// speed-up of a long loop.
#pragma once

#include <cstddef>
#include <cstdint>

#include "switchyard/core/enums.h"

namespace switchyard {

struct parallel_hint {
    // > 0: the minimum number of elements per chunk. <= 0: automatic.
    std::int64_t grain = 0;
    // Estimated cost of f per element, in nanoseconds, for automatic grain.
    // <= 0 or NaN: unknown (default_cost_per_element_ns is assumed).
    double cost_per_element_ns = 0;
};

// The constants of the automatic grain model (see above).
struct grain_model {
    static constexpr double default_cost_per_element_ns = 100;
    static constexpr double min_work_per_thread_ns = 5000;
    static constexpr double target_chunk_ns = 2000;
    static constexpr std::uint64_t chunks_per_thread = 8;
};

// How parallel_for runs a range of n elements: on `threads` threads (1 means
// inline on the caller), in chunks of at least `grain` elements (the
// work-stealing pool splits ranges while both halves keep at least `grain`
// elements, so its chunks hold grain to 2 * grain - 1 elements; the broadcast
// pool cuts `threads` equal blocks).
struct chunk_plan {
    std::uint64_t grain;
    std::size_t threads;
};

constexpr chunk_plan plan_chunks(std::uint64_t n, parallel_hint hint, std::size_t pool_threads, scheduling s) noexcept {
    if (pool_threads == 0) pool_threads = 1;
    if (n <= 1 || pool_threads == 1) return {n == 0 ? 1 : n, 1};
    std::uint64_t const max_threads = pool_threads < n ? pool_threads : n;
    if (hint.grain > 0) {
        auto const grain = static_cast<std::uint64_t>(hint.grain);
        std::uint64_t const t = n / grain;  // each thread gets at least one grain
        return {grain, static_cast<std::size_t>(t < 1 ? 1 : t > max_threads ? max_threads : t)};
    }
    double const cost = hint.cost_per_element_ns > 0 ? hint.cost_per_element_ns  // false for NaN
                                                     : grain_model::default_cost_per_element_ns;
    double const work = static_cast<double>(n) * cost;  // may be +inf
    double const want = work / grain_model::min_work_per_thread_ns;
    std::uint64_t threads = want >= static_cast<double>(max_threads) ? max_threads
                            : want < 1                               ? 1
                                                                     : static_cast<std::uint64_t>(want);
    if (threads == 1) return {n, 1};
    if (s == scheduling::uniform) return {(n + threads - 1) / threads, static_cast<std::size_t>(threads)};
    std::uint64_t const chunks = grain_model::chunks_per_thread * threads;
    std::uint64_t grain = n / chunks + (n % chunks != 0);
    double const by_cost = grain_model::target_chunk_ns / cost;  // < target_chunk_ns: cost >= 1e-300 or so
    if (by_cost > static_cast<double>(grain)) {
        grain = by_cost >= static_cast<double>(n) ? n : static_cast<std::uint64_t>(by_cost) + 1;
    }
    return {grain, static_cast<std::size_t>(threads)};
}

}  // namespace switchyard
