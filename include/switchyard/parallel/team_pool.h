// team_pool: parallel_for on threads that another runtime owns (PyTorch's
// intra-op threads, through the torch adapter), so that switchyard's chunks
// run on those threads instead of beside them.
//
//   team_pool pool(threads, run_team, context);
//   pool.parallel_for(begin, end, hint, f);   // see below
//   team_scope scope(pool);                    // this thread's CPU kernels
//                                              // (whatever their tag's
//                                              // scheduling) and parallel_for
//                                              // use pool until scope ends
//   team_pool* current_team();                 // nullptr outside any scope
//
// run_team(context, job, n) must call job.work(job, slot) once for every slot
// in [0, n), on up to n threads at once, and return when every call has
// returned; it is noexcept (the job lives on the caller's stack until then).
// Each call takes chunks (parallel_hint.h's adaptive plan) from one shared
// counter until none is left, so a team that runs fewer threads than asked,
// or runs the calls one after another, still covers the range exactly once.
//
// parallel_for follows thread_pool.h's rules for empty ranges, inline runs,
// nesting and exceptions. Concurrent callers each get the team as the
// runtime gives it (OpenMP starts a team per calling thread) instead of one
// of them getting the workers. Scopes end in the reverse order they began.
//
// Why: a runtime that keeps its idle threads spinning for a while after each
// of its own jobs (OpenMP does) takes the cores that switchyard's pool would
// wake; switchyard's chunks then wait behind the spinning threads (the
// measurement is in docs/benchmarks.md). Run on that runtime's own threads,
// the spinning threads are the ones that take the chunks.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <stdexcept>
#include <type_traits>

#include "switchyard/core/config.h"
#include "switchyard/core/enums.h"
#include "switchyard/parallel/parallel_hint.h"
#include "switchyard/parallel/thread_pool.h"

namespace switchyard {

class team_pool {
public:
    using run_fn = void (*)(void* context, detail::job_base& job, std::size_t threads) noexcept;

    // Chunks as the work-stealing pool cuts them (grain to 2 * grain - 1
    // elements), taken in order instead of stolen.
    static constexpr scheduling policy = scheduling::adaptive;

    team_pool(std::size_t threads, run_fn run_team, void* context = nullptr)
        : threads_(checked(threads)), run_(run_team), context_(context) {}

    team_pool(team_pool const&) = delete;
    team_pool& operator=(team_pool const&) = delete;

    std::size_t num_threads() const noexcept { return threads_; }

    template <class F>
    void parallel_for(std::int64_t begin, std::int64_t end, parallel_hint hint, F&& f) {
        static_assert(std::is_invocable_v<F&, std::int64_t, std::int64_t>,
                      "parallel_for: f must be callable as f(std::int64_t chunk_begin, std::int64_t chunk_end)");
        if (end <= begin) return;
        std::uint64_t const n = static_cast<std::uint64_t>(end) - static_cast<std::uint64_t>(begin);
        chunk_plan const plan = plan_chunks(n, hint, threads_, scheduling::adaptive);
        if (plan.threads <= 1 || detail::in_parallel_region) {
            detail::region_guard inline_region;
            f(begin, end);
            return;
        }
        job<std::remove_reference_t<F>> work(f, begin, n, plan.grain);
        run_(context_, work, plan.threads);
        if (work.error) std::rethrow_exception(work.error);
    }

    template <class F>
    void parallel_for(std::int64_t begin, std::int64_t end, std::int64_t grain, F&& f) {
        parallel_for(begin, end, parallel_hint{grain, 0}, static_cast<F&&>(f));
    }

private:
    static std::size_t checked(std::size_t threads) {
        if (threads == 0)
            throw std::invalid_argument("switchyard::team_pool: the number of threads must be at least 1");
        return detail::checked_thread_count(threads);
    }

    template <class F>
    struct job : detail::job_base {
        job(F& body, std::int64_t first, std::uint64_t count, std::uint64_t chunk) noexcept
            : job_base(&take_chunks), f(body), begin(first), n(count), grain(chunk), chunks(n / grain) {}

        // Chunk k is [k * grain, (k + 1) * grain), the last one running to
        // n: no chunk is shorter than grain (a range shorter than grain runs
        // inline before a job exists).
        static void take_chunks(job_base& base, std::size_t) noexcept {
            auto& self = static_cast<job&>(base);
            detail::region_guard region;
            while (!self.stopped()) {
                std::uint64_t const k = self.next.fetch_add(1, std::memory_order_relaxed);
                if (k >= self.chunks) return;
                std::uint64_t const last = k + 1 == self.chunks ? self.n : (k + 1) * self.grain;
                self.run_chunk(self.f, detail::offset(self.begin, k * self.grain), detail::offset(self.begin, last));
            }
        }

        F& f;
        std::int64_t begin;
        std::uint64_t n;
        std::uint64_t grain;
        std::uint64_t chunks;
        std::atomic<std::uint64_t> next{0};
    };

    std::size_t threads_;
    run_fn run_;
    void* context_;
};

namespace detail {
SWITCHYARD_PROCESS_STATE inline thread_local team_pool* thread_team = nullptr;
}  // namespace detail

// The team that this thread's CPU kernels run on, or nullptr (the default
// pool).
inline team_pool* current_team() noexcept { return detail::thread_team; }

// Makes `pool` the current team of this thread until destroyed, then restores
// the previous one. Scopes nest.
class team_scope {
public:
    explicit team_scope(team_pool& pool) noexcept : previous_(detail::thread_team) { detail::thread_team = &pool; }
    ~team_scope() { detail::thread_team = previous_; }
    team_scope(team_scope const&) = delete;
    team_scope& operator=(team_scope const&) = delete;

private:
    team_pool* previous_;
};

}  // namespace switchyard
