// thread_pool<scheduling>: the class template of switchyard's CPU thread
// pools, what its two specializations share, and the rules both follow.
//
//   template <scheduling S> class thread_pool;   // declared here
//   thread_pool<scheduling::uniform>   = broadcast_pool      (broadcast_pool.h)
//   thread_pool<scheduling::adaptive>  = work_stealing_pool  (work_stealing_pool.h)
//   struct pool_options;  std::size_t hardware_threads();
//
// Both run pool.parallel_for(begin, end, grain_or_hint, f), calling
// f(chunk_begin, chunk_end) on disjoint chunks that cover [begin, end)
// exactly once. A pool built with N threads starts N - 1 workers; the
// calling thread is the N-th participant.
//
// Rules (both pools):
// - end <= begin returns at once and wakes nobody. A range that the grain
//   model (parallel_hint.h) gives one thread runs inline on the caller, as
//   f(begin, end), and wakes nobody.
// - Nested calls: parallel_for called from inside a chunk, on any pool, runs
//   inline: f(begin, end) on the calling thread.
// - Concurrent calls from several external threads on one pool are safe: one
//   of them gets the workers, the others run their range inline (no caller
//   ever blocks behind another caller's job).
// - Exceptions: the first exception thrown by f is rethrown on the caller
//   after every thread has left the job; chunks not yet started are not
//   started; the pool stays usable.
// - The job lives on the caller's stack. The completion protocol guarantees
//   that no worker touches it after parallel_for returns (see pool_core).
// - Idle workers poll for the next job (pool_options::idle), then sleep on a
//   futex; the caller makes at most one wake-up call, woken workers wake
//   the others along a tree. The caller never waits for a worker that has
//   not joined the job: the participants that are there run the chunks of
//   the ones that are not (asleep, or descheduled on a busy machine), and a
//   worker joins only when it sees work left to take.
// - Destruction wakes and joins every worker. Destroying a pool while a
//   parallel_for on it is running, or from inside one of its chunks, is
//   undefined. Pools are neither copyable nor movable.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "switchyard/core/config.h"
#include "switchyard/core/enums.h"
#include "switchyard/parallel/parallel_hint.h"
#include "switchyard/parallel/parker.h"

namespace switchyard {

template <scheduling S>
class thread_pool;

// The number of hardware threads, at least 1.
inline std::size_t hardware_threads() noexcept {
    unsigned const n = std::thread::hardware_concurrency();
    return n == 0 ? 1 : n;
}

// The most threads a pool takes: beyond it a count is a mistake (a negative
// number converted to size_t, a typo), refused with a clear error rather than
// met by std::bad_alloc or thousands of threads.
inline constexpr std::size_t max_pool_threads = 4096;

namespace detail {
inline std::size_t checked_thread_count(std::size_t n) {
    if (n > max_pool_threads)
        throw std::invalid_argument("thread_pool: " + std::to_string(n) + " threads requested; a pool takes at most " +
                                    std::to_string(max_pool_threads) + " (max_pool_threads)");
    return n;
}
}  // namespace detail

struct pool_options {
    // An idle worker's polling for the next job before it sleeps. The
    // default, 50 us with pause and then up to 3 ms in all yielding the
    // core between polls, is about GNU OpenMP's default spin (300000 pause
    // loops, 3 to 4 ms on the 2-core KVM guest where it was measured): code
    // that calls parallel_for again within 3 ms finds the workers awake.
    // Sleeping is expensive there: waking a thread costs the waker 1 to 15
    // us and the sleeper runs 0.05 to 4 ms later. Only hardware_threads() - 1
    // workers in the whole process poll at once (polling_permit); the others
    // sleep at once. Set both durations to 0 to sleep immediately.
    spin_policy idle{};
    // The caller's polling for workers that joined its job to finish their
    // chunks, before it sleeps until the last one leaves.
    spin_policy join{};
};

namespace detail {

// True on a pool's worker threads, and on a caller's thread while it runs
// chunks: parallel_for called there runs inline.
SWITCHYARD_PROCESS_STATE inline thread_local bool in_parallel_region = false;

class region_guard {
public:
    region_guard() noexcept : previous_(in_parallel_region) { in_parallel_region = true; }
    ~region_guard() { in_parallel_region = previous_; }
    region_guard(region_guard const&) = delete;
    region_guard& operator=(region_guard const&) = delete;

private:
    bool previous_;
};

// What a job shares with every participant: the entry point of the pool's
// scheduler and the exception state. Lives on the caller's stack.
struct job_base {
    explicit job_base(void (*entry)(job_base&, std::size_t) noexcept) noexcept : work(entry) {}
    job_base(job_base const&) = delete;
    job_base& operator=(job_base const&) = delete;

    // Runs a participant (slot 1..N-1: worker; 0: the caller) until it finds
    // no more work. Never throws.
    void (*work)(job_base&, std::size_t slot) noexcept;

    // Set by the first exception; chunks are not started once it is set.
    std::atomic<bool> stop{false};
    // The first exception, written only by the thread that set `stop`, read
    // by the caller after every participant has left.
    std::exception_ptr error;

    bool stopped() const noexcept { return stop.load(std::memory_order_relaxed); }

    // Call inside a catch block.
    void fail() noexcept {
        if (!stop.exchange(true, std::memory_order_acq_rel)) error = std::current_exception();
    }

    template <class F>
    void run_chunk(F& f, std::int64_t chunk_begin, std::int64_t chunk_end) noexcept {
        try {
            f(chunk_begin, chunk_end);
        } catch (...) {
            fail();
        }
    }
};

// An index within [begin, begin + n) in modular arithmetic, so that ranges
// up to the whole int64 line never overflow.
constexpr std::int64_t offset(std::int64_t begin, std::uint64_t k) noexcept {
    return static_cast<std::int64_t>(static_cast<std::uint64_t>(begin) + k);
}

// The workers, the job slot and the completion protocol.
//
// gate_ (32 bits): OPEN (bit 31), WAITING (bit 30), joined-worker count.
//
//   caller                                   worker (slot s)
//   busy_.exchange(true)      one job at a time; a second caller runs inline
//   job_ = &job; width_ = w
//   gate_ = OPEN              (release)
//   epoch_ += 1               (seq_cst)      polls epoch_ (spin, then park)
//   unpark slot 1 if asleep                  epoch changed, s < width_:
//                                            unpark slots 2s, 2s+1 (< w)
//                                            while OPEN: peek for work in
//                                            the pool's own memory; if any:
//   runs chunks as slot 0                    CAS gate_: OPEN|k -> OPEN|k+1
//                                            (only while OPEN: "join")
//                                            runs chunks via job_->work
//   no work left: gate_ &= ~OPEN (close)     gate_ -= 1 ("leave"), then never
//   wait until count == 0 (acquire):         touches the job again; wakes
//     poll, then set WAITING and sleep       the caller if WAITING and last
//   busy_ = false; rethrow the first error
//
// After the close no worker can join (join needs OPEN), and when the count
// reads 0 every worker that joined has left, with its writes (chunk results,
// the exception) visible to the caller. A worker that wakes late finds the
// gate closed, or the next job's gate open (joining that one is just as
// valid: it reads job_ after its CAS, which synchronizes with the OPEN store
// that followed job_'s), and so never touches a finished job. The caller
// never waits for a worker that has not joined, and a worker joins only
// when the pool's peek function (which reads pool memory, never the job:
// unclaimed blocks, non-empty deques) sees work, so a worker that arrives
// when the caller has taken everything costs the caller nothing. Sleeping
// workers are woken along a binary tree (the caller wakes slot 1, slot s
// wakes 2s and 2s+1), so the caller makes at most one wake-up syscall.
class pool_core {
public:
    // peek(context, width): whether the job now open may have work for a
    // worker that joins; it reads pool memory only (the job may be gone).
    using peek_fn = bool (*)(void const* context, std::size_t width) noexcept;

    pool_core(std::size_t threads, pool_options const& options, peek_fn peek, void const* peek_context)
        : options_(options),
          threads_(checked(threads)),
          peek_(peek),
          peek_context_(peek_context),
          slots_(std::make_unique<worker_slot[]>(threads)) {
        workers_.reserve(threads - 1);
        try {
            for (std::size_t s = 1; s < threads; ++s) workers_.emplace_back([this, s] { worker_main(s); });
        } catch (...) {
            stop_workers();
            throw;
        }
    }
    ~pool_core() { stop_workers(); }
    pool_core(pool_core const&) = delete;
    pool_core& operator=(pool_core const&) = delete;

    std::size_t num_threads() const noexcept { return threads_; }

    // Takes the pool's one job slot; false when another caller holds it.
    bool try_begin() noexcept {
        return !busy_.load(std::memory_order_relaxed) && !busy_.exchange(true, std::memory_order_acquire);
    }
    void end() noexcept { busy_.store(false, std::memory_order_release); }

    // Opens `job` to workers of slots 1..width-1 and wakes them.
    void publish(job_base& job, std::size_t width) noexcept {
        job_.store(&job, std::memory_order_relaxed);
        width_.store(width, std::memory_order_relaxed);
        gate_.store(open_bit, std::memory_order_release);
        epoch_.fetch_add(1, std::memory_order_seq_cst);
        if (width > 1) slots_[1].park.unpark();
    }

    // True until the caller closes the job.
    bool accepting() const noexcept { return (gate_.load(std::memory_order_relaxed) & open_bit) != 0; }

    // Closes the job and returns when every worker that joined has left.
    // While it polls it calls help() (stealing, for the work-stealing pool).
    template <class Help>
    void finish(Help&& help) noexcept {
        std::uint32_t g = gate_.fetch_and(~open_bit, std::memory_order_acq_rel);
        if ((g & count_mask) == 0) return;
        auto const all_left = [&] {
            help();
            return (gate_.load(std::memory_order_acquire) & count_mask) == 0;
        };
        if (spin_until(all_left, options_.join)) return;
        for (;;) {
            g = gate_.load(std::memory_order_acquire);
            if ((g & count_mask) == 0) return;
            if ((g & waiting_bit) == 0) {
                if (!gate_.compare_exchange_weak(g, g | waiting_bit, std::memory_order_acquire)) continue;
                g |= waiting_bit;
            }
            gate_.wait(g, std::memory_order_acquire);
        }
    }

private:
    static constexpr std::uint32_t open_bit = 1U << 31;
    static constexpr std::uint32_t waiting_bit = 1U << 30;
    static constexpr std::uint32_t count_mask = waiting_bit - 1;

    struct alignas(64) worker_slot {
        park_slot park;
    };

    static std::size_t checked(std::size_t threads) {
        if (threads == 0)
            throw std::invalid_argument("switchyard::thread_pool: the number of threads must be at least 1");
        if (threads > count_mask) throw std::invalid_argument("switchyard::thread_pool: too many threads");
        return threads;
    }

    void worker_main(std::size_t slot) noexcept {
        in_parallel_region = true;
        // The epoch when the pool was built, not the one when this thread
        // got going: a job or a stop published in between is not missed.
        std::uint32_t seen = 0;
        polling_permit permit;
        for (;;) {
            wait_for_job(seen, slot, permit);
            seen = epoch_.load(std::memory_order_acquire);
            if (stopping_.load(std::memory_order_acquire)) return;
            std::size_t const width = width_.load(std::memory_order_relaxed);
            if (slot >= width) continue;
            if (accepting()) {
                if (2 * slot < width) slots_[2 * slot].park.unpark();
                if (2 * slot + 1 < width) slots_[2 * slot + 1].park.unpark();
            }
            // Join only once there is work to take; give up when the job
            // closes or the next one is published. Between looks, back off
            // (16 to 256 pauses): every look pulls the caller's cache lines
            // away from it, and a job the caller runs alone is short.
            unsigned backoff = 16;
            while (accepting() && epoch_.load(std::memory_order_relaxed) == seen) {
                if (peek_(peek_context_, width)) {
                    if (join()) {
                        job_base* job = job_.load(std::memory_order_relaxed);
                        job->work(*job, slot);
                        leave();
                    }
                    break;
                }
                for (unsigned k = 0; k < backoff; ++k) cpu_relax();
                if (backoff < 256) backoff *= 2;
            }
        }
    }

    // Polls (holding a permit) and then sleeps until the epoch moves on.
    void wait_for_job(std::uint32_t seen, std::size_t slot, polling_permit& permit) noexcept {
        auto const changed = [&] { return epoch_.load(std::memory_order_acquire) != seen; };
        while (!changed()) {
            if (permit.try_take()) {
                if (spin_until(changed, options_.idle)) return;
                permit.give_back();
            }
            slots_[slot].park.park_while([&] { return epoch_.load(std::memory_order_seq_cst) == seen; });
        }
    }

    bool join() noexcept {
        std::uint32_t g = gate_.load(std::memory_order_relaxed);
        while ((g & open_bit) != 0) {
            if (gate_.compare_exchange_weak(g, g + 1, std::memory_order_acquire, std::memory_order_relaxed))
                return true;
        }
        return false;
    }

    void leave() noexcept {
        std::uint32_t const previous = gate_.fetch_sub(1, std::memory_order_release);
        if ((previous & waiting_bit) != 0 && (previous & count_mask) == 1) gate_.notify_one();
    }

    void stop_workers() noexcept {
        stopping_.store(true, std::memory_order_seq_cst);
        epoch_.fetch_add(1, std::memory_order_seq_cst);
        for (std::size_t s = 1; s < threads_; ++s) slots_[s].park.unpark();
        for (auto& t : workers_) t.join();
        workers_.clear();
    }

    // Written by the caller per job, read by workers that join.
    alignas(64) std::atomic<std::uint32_t> gate_{0};
    std::atomic<job_base*> job_{nullptr};
    std::atomic<std::size_t> width_{0};
    // Bumped per job; idle workers poll it.
    alignas(64) std::atomic<std::uint32_t> epoch_{0};
    alignas(64) std::atomic<bool> busy_{false};
    std::atomic<bool> stopping_{false};
    pool_options options_;
    std::size_t threads_;
    peek_fn peek_;
    void const* peek_context_;
    std::unique_ptr<worker_slot[]> slots_;
    std::vector<std::thread> workers_;
};

// The front half of every pool's parallel_for: checks the body, plans the
// chunks, and runs the whole range on the caller instead when one thread
// suffices, the caller is already inside a parallel region, or another caller
// holds the pool. Returns the plan when the pool was taken for this job (the
// caller runs it and then calls core.end()), nothing when nothing is left to
// do.
template <class F>
std::optional<chunk_plan> plan_or_run_inline(pool_core& core, std::int64_t begin, std::int64_t end, parallel_hint hint,
                                             scheduling policy, F& f) {
    static_assert(std::is_invocable_v<F&, std::int64_t, std::int64_t>,
                  "parallel_for: f must be callable as f(std::int64_t chunk_begin, std::int64_t chunk_end)");
    if (end <= begin) return std::nullopt;
    std::uint64_t const n = static_cast<std::uint64_t>(end) - static_cast<std::uint64_t>(begin);
    chunk_plan const plan = plan_chunks(n, hint, core.num_threads(), policy);
    if (plan.threads <= 1 || in_parallel_region || !core.try_begin()) {
        region_guard inline_region;
        f(begin, end);
        return std::nullopt;
    }
    return plan;
}

}  // namespace detail
}  // namespace switchyard
