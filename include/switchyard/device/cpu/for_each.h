// for_each on the CPU: the index range is split into chunks that run on a
// thread pool (the caller takes part); each chunk is a tight loop over
// f(tag, i). Included by switchyard/for_each.h.
#pragma once

#include <cstdint>
#include <type_traits>

#include "switchyard/core/enums.h"
#include "switchyard/core/tag.h"
#include "switchyard/parallel.h"

namespace switchyard::detail {

// Per-element cost assumed for automatic chunking: elementwise kernels cost
// a few nanoseconds per element, so ranges below a few thousand elements run
// inline on the caller instead of waking workers.
inline constexpr double for_each_ns_per_element = 1.0;

// The pool behind tags that ask for scheduling::uniform: static blocks, the
// lowest overhead for evenly priced elements. Sized like the default pool and
// never destroyed, for the same reasons (default_pool.h).
inline broadcast_pool& uniform_for_each_pool() {
    static broadcast_pool* const pool = new broadcast_pool(default_pool().num_threads());
    return *pool;
}

template <typename Tag, typename F, typename Pool>
void cpu_for_each_on(Pool& pool, Tag tag, std::int64_t count, F const& f) {
    if (count == 0) return;
    pool.parallel_for(std::int64_t{0}, count, parallel_hint{0, for_each_ns_per_element},
                      [&f, tag](std::int64_t begin, std::int64_t end) {
                          // A local copy: the compiler then knows the captured
                          // views cannot alias what the loop writes, and
                          // vectorizes the loop for contiguous views.
                          F const body = f;
                          for (std::int64_t i = begin; i < end; ++i) body(tag, i);
                      });
}

template <typename Tag>
constexpr bool wants_uniform_scheduling() {
    if constexpr (tag_has_type_v<Tag, scheduling>)
        return tag_get<scheduling>(Tag{}) == scheduling::uniform;
    else
        return false;
}

template <typename Tag, typename F>
void cpu_for_each(Tag tag, std::int64_t count, F const& f) {
    if constexpr (wants_uniform_scheduling<Tag>())
        cpu_for_each_on(uniform_for_each_pool(), tag, count, f);
    else
        cpu_for_each_on(default_pool(), tag, count, f);
}

}  // namespace switchyard::detail
