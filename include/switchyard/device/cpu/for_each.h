// for_each on the CPU: the index range is split into chunks that run on a
// thread pool (the caller takes part); each chunk is a tight loop over
// f(tag, i). Included by switchyard/for_each.h.
#pragma once

#include <cstdint>
#include <type_traits>

#include "switchyard/core/config.h"
#include "switchyard/core/enums.h"
#include "switchyard/core/tag.h"
#include "switchyard/parallel.h"
#include "switchyard/view/stream_mark.h"

namespace switchyard::detail {

// Per-element cost assumed for automatic chunking: elementwise kernels cost
// a few nanoseconds per element, so ranges below a few thousand elements run
// inline on the caller instead of waking workers.
inline constexpr double for_each_ns_per_element = 1.0;

// The pool behind tags that ask for scheduling::uniform: static blocks, the
// lowest overhead for evenly priced elements. Sized like the default pool and
// never destroyed, for the same reasons (default_pool.h).
SWITCHYARD_PROCESS_STATE inline broadcast_pool& uniform_for_each_pool() {
    static broadcast_pool* const pool = new broadcast_pool(default_pool().num_threads());
    return *pool;
}

// Vector width: with g++ on x86-64 the chunk loop is compiled three times, for
// AVX-512 (x86-64-v4), AVX2 (x86-64-v3) and the baseline, and the loader picks
// the widest the CPU has (an ifunc), as PyTorch picks its kernels at run time.
// A program built with -march=native gets the same width without clones.
// clang 14 cannot combine clones with flatten, and nvcc's host pass is left
// alone, so both use the baseline build. Under ThreadSanitizer the clones'
// resolver would run at load time before the TSan runtime exists, and crash.
#if defined(__GNUC__) && !defined(__clang__) && !defined(__CUDACC__) && defined(__x86_64__) && \
    !defined(SWITCHYARD_NO_TARGET_CLONES) && !defined(__AVX512F__) && !defined(__SANITIZE_THREAD__)
#define SWITCHYARD_CHUNK_ATTRIBUTES [[gnu::flatten, gnu::target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")]]
#else
#define SWITCHYARD_CHUNK_ATTRIBUTES [[gnu::flatten]]
#endif

// Prefetching: the chunk runs in blocks of prefetch_block elements and, before
// each block, touches every contiguous stream of the kernel (its captured
// flat views, stream_mark.h) prefetch_distance bytes ahead. The hardware
// prefetcher does not cross 4 KiB pages; on a loop that computes for tens of
// cycles per cache line it restarts each page late, and a 2^24-element
// softplus ran 1.8x slower streaming from memory than from cache on a KVM
// Xeon. One prefetch per stream per block is enough: the hardware prefetcher
// follows once the page is touched. Define SWITCHYARD_NO_PREFETCH to turn
// it off (the plain loop).
inline constexpr std::int64_t prefetch_block = 64;
inline constexpr std::int64_t prefetch_distance = 4096;

// One chunk: a plain loop over the kernel. flatten inlines everything the
// kernel calls (the op's scalar function, the math) into the loop; without it
// g++ keeps a large scalar function such as softplus out of line, calls it
// once per element, and nothing vectorizes. The local copy of the functor
// lets the compiler see that the captured views do not alias what the loop
// writes.
template <typename Tag, typename F>
SWITCHYARD_CHUNK_ATTRIBUTES void run_chunk(F const& f, Tag tag, std::int64_t begin, std::int64_t end,
                                           stream_set const& streams) {
    F const body = f;
    std::int64_t i = begin;
    if (streams.count > 0) {
        for (; end - i >= prefetch_block; i += prefetch_block) {
            for (int s = 0; s < streams.count; ++s) {
                std::uint64_t const ahead = streams.address[s] +
                                            static_cast<std::uint64_t>(i) * streams.info[s].element_bytes +
                                            prefetch_distance;
                if (streams.info[s].writable)
                    __builtin_prefetch(reinterpret_cast<void const*>(ahead), 1);
                else
                    __builtin_prefetch(reinterpret_cast<void const*>(ahead), 0);
            }
            for (std::int64_t j = 0; j < prefetch_block; ++j) body(tag, i + j);
        }
    }
    for (; i < end; ++i) body(tag, i);
}

template <typename Tag, typename F, typename Pool>
void cpu_for_each_on(Pool& pool, Tag tag, std::int64_t count, F const& f) {
    stream_set const views = find_streams(f);
    check_count_against_outputs("for_each on cpu", count, views);
    if (count == 0) return;
#if defined(SWITCHYARD_NO_PREFETCH)
    stream_set const streams{};
#else
    stream_set const streams = streams_where(views, [](stream_info info) { return info.contiguous; });
#endif
    pool.parallel_for(std::int64_t{0}, count, parallel_hint{0, for_each_ns_per_element},
                      [&f, &streams, tag](std::int64_t begin, std::int64_t end) {
                          // Through a pointer: g++ 12 treats a direct call of a
                          // target_clones function as unable to throw, and a
                          // kernel's exception then ends in std::terminate.
                          auto* volatile chunk = &run_chunk<Tag, F>;
                          chunk(f, tag, begin, end, streams);
                      });
}

template <typename Tag>
constexpr bool wants_uniform_scheduling() {
    if constexpr (tag_has_type_v<Tag, scheduling>)
        return tag_get<scheduling>(Tag{}) == scheduling::uniform;
    else
        return false;
}

// Calls run(pool) with the pool a CPU kernel of Tag runs on: this thread's
// team (team_pool.h: the torch adapter lends PyTorch's threads) when there is
// one, whatever the tag's scheduling (two sets of threads would compete);
// else the uniform pool when the tag asks for it; else the default pool.
template <typename Tag, typename Run>
void with_cpu_pool(Run&& run) {
    if (team_pool* team = current_team()) {
        run(*team);
    } else if constexpr (wants_uniform_scheduling<Tag>()) {
        run(uniform_for_each_pool());
    } else {
        run(default_pool());
    }
}

template <typename Tag, typename F>
void cpu_for_each(Tag tag, std::int64_t count, F const& f) {
    with_cpu_pool<Tag>([&](auto& pool) { cpu_for_each_on(pool, tag, count, f); });
}

}  // namespace switchyard::detail
