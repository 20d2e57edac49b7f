// parallel_for on this thread's team (team_pool.h) or else the default pool:
//
//   parallel_for(begin, end, grain, f);   // grain > 0: minimum chunk; <= 0: automatic
//   parallel_for(begin, end, parallel_hint{.cost_per_element_ns = 3}, f);
//
// f(std::int64_t chunk_begin, std::int64_t chunk_end) is called on disjoint
// chunks covering [begin, end) exactly once, concurrently from several
// threads. An empty range returns without creating or waking the pool;
// calls from inside a chunk run inline. Semantics: thread_pool.h; grain
// model: parallel_hint.h.
#pragma once

#include <cstdint>
#include <type_traits>
#include <utility>

#include "switchyard/parallel/default_pool.h"
#include "switchyard/parallel/parallel_hint.h"
#include "switchyard/parallel/team_pool.h"
#include "switchyard/parallel/thread_pool.h"

namespace switchyard {

template <class F>
void parallel_for(std::int64_t begin, std::int64_t end, parallel_hint hint, F&& f) {
    static_assert(std::is_invocable_v<F&, std::int64_t, std::int64_t>,
                  "parallel_for: f must be callable as f(std::int64_t chunk_begin, std::int64_t chunk_end)");
    if (end <= begin) return;
    if (detail::in_parallel_region) {
        f(begin, end);
        return;
    }
    if (team_pool* team = current_team())
        team->parallel_for(begin, end, hint, std::forward<F>(f));
    else
        default_pool().parallel_for(begin, end, hint, std::forward<F>(f));
}

template <class F>
void parallel_for(std::int64_t begin, std::int64_t end, std::int64_t grain, F&& f) {
    parallel_for(begin, end, parallel_hint{grain, 0}, std::forward<F>(f));
}

}  // namespace switchyard
