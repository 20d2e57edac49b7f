// work_stealing_pool = thread_pool<scheduling::adaptive>: range splitting
// over Chase-Lev deques, for bodies whose cost varies along the range or
// machines where threads get descheduled. The default pool (default_pool.h).
//
//   work_stealing_pool pool(4);                   // 3 workers + the caller
//   pool.parallel_for(0, n, 0, [&](std::int64_t b, std::int64_t e) { ... });
//
// Each participant owns a chase_lev_deque of index ranges. A participant
// holding a range keeps halving it, pushing the upper half on its deque and
// keeping the lower, while both halves have at least `grain` elements; then
// it runs the remaining chunk (grain to 2 * grain - 1 elements) and pops its
// deque (the most recent, smallest, adjacent half). A participant with an
// empty deque steals from the top of another's (the oldest, largest half)
// and splits what it got in turn, so idle threads take half of what is left
// wherever it is. The caller starts with the whole range; a worker joins
// when it sees a non-empty deque and leaves when a sweep over the deques
// finds nothing (immediately once the caller has closed the job, after 64
// sweeps before). Deques never grow: one holds 64 ranges, and halving a
// range of at most 2^64 elements leaves at most 63 pending halves; were one
// full, the range would run unsplit.
// General rules: thread_pool.h.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>
#include <optional>
#include <type_traits>
#include <utility>

#include "switchyard/core/enums.h"
#include "switchyard/parallel/chase_lev_deque.h"
#include "switchyard/parallel/parallel_hint.h"
#include "switchyard/parallel/parker.h"
#include "switchyard/parallel/thread_pool.h"

namespace switchyard {

template <>
class thread_pool<scheduling::adaptive> {
public:
    static constexpr scheduling policy = scheduling::adaptive;

    explicit thread_pool(std::size_t num_threads = hardware_threads(), pool_options const& options = {})
        : deques_(std::make_unique<range_deque[]>(num_threads == 0 ? 1 : detail::checked_thread_count(num_threads))),
          core_(num_threads, options, &peek, deques_.get()) {}
    thread_pool(thread_pool const&) = delete;
    thread_pool& operator=(thread_pool const&) = delete;

    std::size_t num_threads() const noexcept { return core_.num_threads(); }

    // f(chunk_begin, chunk_end) over [begin, end); grain > 0 is the minimum
    // chunk size, grain <= 0 automatic (parallel_hint.h).
    template <class F>
    void parallel_for(std::int64_t begin, std::int64_t end, std::int64_t grain, F&& f) {
        parallel_for(begin, end, parallel_hint{grain, 0}, std::forward<F>(f));
    }

    template <class F>
    void parallel_for(std::int64_t begin, std::int64_t end, parallel_hint hint, F&& f) {
        std::optional<chunk_plan> const plan = detail::plan_or_run_inline(core_, begin, end, hint, policy, f);
        if (!plan) return;
        using fn = std::remove_reference_t<F>;
        job<fn> work(f, plan->grain, deques_.get(), plan->threads, &core_);
        {
            detail::region_guard region;
            core_.publish(work, plan->threads);
            work.process(0, {begin, end});
            while (work.steal_sweep(0)) {
            }
            core_.finish([&] { work.steal_sweep(0); });
        }
        core_.end();
        if (work.error) std::rethrow_exception(work.error);
    }

private:
    struct index_range {
        std::int64_t begin;
        std::int64_t end;
    };
    using range_deque = chase_lev_deque<index_range, 64>;

    // Sweeps over empty deques a worker makes before it leaves a job that is
    // still open (work may appear: a thief splits what it stole).
    static constexpr unsigned patience = 64;

    // Whether a participant's deque holds a range. Only slots below the
    // job's width take part, so only their deques can.
    static bool peek(void const* context, std::size_t width) noexcept {
        auto const* deques = static_cast<range_deque const*>(context);
        for (std::size_t s = 0; s < width; ++s)
            if (!deques[s].empty()) return true;
        return false;
    }

    template <class F>
    struct alignas(64) job : detail::job_base {
        job(F& fn, std::uint64_t g, range_deque* d, std::size_t n, detail::pool_core const* c) noexcept
            : job_base(&entry), f(&fn), grain(g), deques(d), slots(n), core(c) {}

        static void entry(job_base& base, std::size_t slot) noexcept {
            auto& self = static_cast<job&>(base);
            unsigned idle = 0;
            for (;;) {
                if (self.steal_sweep(slot)) {
                    idle = 0;
                    continue;
                }
                if (!self.core->accepting() || ++idle > patience) return;
                cpu_relax();
            }
        }

        // Runs r and everything this participant's deque then holds; once
        // the job is stopped, drops them instead (the deque ends empty).
        void process(std::size_t slot, index_range r) noexcept {
            range_deque& own = deques[slot];
            for (;;) {
                if (!stopped()) {
                    std::uint64_t size = static_cast<std::uint64_t>(r.end) - static_cast<std::uint64_t>(r.begin);
                    while (size / 2 >= grain) {
                        std::int64_t const mid = detail::offset(r.begin, size / 2);
                        if (!own.push(index_range{mid, r.end})) break;
                        r.end = mid;
                        size /= 2;
                    }
                    run_chunk(*f, r.begin, r.end);
                }
                std::optional<index_range> next = own.pop();
                if (!next) return;
                r = *next;
            }
        }

        // One pass over the other participants' deques (slots below the
        // job's width: no other thread joins); true when it stole (and
        // processed) a range.
        bool steal_sweep(std::size_t slot) noexcept {
            for (std::size_t k = 1; k < slots; ++k) {
                std::size_t const victim = (slot + k) % slots;
                if (std::optional<index_range> r = deques[victim].steal()) {
                    process(slot, *r);
                    return true;
                }
            }
            return false;
        }

        F* f;
        std::uint64_t grain;
        range_deque* deques;
        std::size_t slots;
        detail::pool_core const* core;
    };

    // Declared before core_: destroyed after the workers are joined.
    std::unique_ptr<range_deque[]> deques_;
    detail::pool_core core_;
};

using work_stealing_pool = thread_pool<scheduling::adaptive>;

}  // namespace switchyard
