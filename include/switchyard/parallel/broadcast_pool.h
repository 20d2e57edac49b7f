// broadcast_pool = thread_pool<scheduling::uniform>: a static partition of
// the range into one contiguous block per participating thread, the pool
// with the least overhead per job, for uniform per-element cost.
//
//   broadcast_pool pool(4);                       // 3 workers + the caller
//   pool.parallel_for(0, n, 0, [&](std::int64_t b, std::int64_t e) { ... });
//
// With T participating threads (see plan_chunks; T <= n / grain for an
// explicit grain) the range is cut into T equal blocks, block i for the
// thread of slot i (0 is the caller). Each thread first claims its own
// block, then the blocks of threads that have not arrived yet (a worker
// asleep, or descheduled on an oversubscribed machine): the caller never
// waits for a thread that has not started, and a chunk is never split.
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
#include "switchyard/parallel/parallel_hint.h"
#include "switchyard/parallel/thread_pool.h"

namespace switchyard {

template <>
class thread_pool<scheduling::uniform> {
public:
    static constexpr scheduling policy = scheduling::uniform;

    explicit thread_pool(std::size_t num_threads = hardware_threads(), pool_options const& options = {})
        : claims_(std::make_unique<claim_word[]>(words_for(detail::checked_thread_count(num_threads)))),
          core_(num_threads, options, &peek, claims_.get()) {}
    thread_pool(thread_pool const&) = delete;
    thread_pool& operator=(thread_pool const&) = delete;

    std::size_t num_threads() const noexcept { return core_.num_threads(); }

    // f(chunk_begin, chunk_end) over [begin, end); grain > 0 is the minimum
    // block size, grain <= 0 automatic (parallel_hint.h).
    template <class F>
    void parallel_for(std::int64_t begin, std::int64_t end, std::int64_t grain, F&& f) {
        parallel_for(begin, end, parallel_hint{grain, 0}, std::forward<F>(f));
    }

    template <class F>
    void parallel_for(std::int64_t begin, std::int64_t end, parallel_hint hint, F&& f) {
        std::optional<chunk_plan> const plan = detail::plan_or_run_inline(core_, begin, end, hint, policy, f);
        if (!plan) return;
        std::uint64_t const n = static_cast<std::uint64_t>(end) - static_cast<std::uint64_t>(begin);
        using fn = std::remove_reference_t<F>;
        job<fn> work(f, begin, n, plan->threads, claims_.get());
        {
            detail::region_guard region;
            core_.publish(work, plan->threads);
            work.run(0);
            core_.finish([] {});
        }
        core_.end();
        if (work.error) std::rethrow_exception(work.error);
    }

private:
    struct alignas(64) claim_word {
        std::atomic<std::uint64_t> bits{0};
    };

    static std::size_t words_for(std::size_t threads) noexcept { return threads / 64 + 1; }

    // Whether any of the open job's `blocks` blocks is unclaimed.
    static bool peek(void const* context, std::size_t blocks) noexcept {
        auto const* words = static_cast<claim_word const*>(context);
        for (std::size_t w = 0; w * 64 < blocks; ++w) {
            std::size_t const used = blocks - w * 64 < 64 ? blocks - w * 64 : 64;
            std::uint64_t const full = used == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << used) - 1;
            if ((words[w].bits.load(std::memory_order_relaxed) & full) != full) return true;
        }
        return false;
    }

    template <class F>
    struct alignas(64) job : detail::job_base {
        job(F& fn, std::int64_t first, std::uint64_t count, std::size_t nblocks, claim_word* words) noexcept
            : job_base(&entry), f(&fn), begin(first), n(count), blocks(nblocks), claims(words) {
            for (std::size_t w = 0; w < nblocks / 64 + 1; ++w) claims[w].bits.store(0, std::memory_order_relaxed);
        }

        static void entry(job_base& base, std::size_t slot) noexcept { static_cast<job&>(base).run(slot); }

        bool claim(std::size_t block) noexcept {
            auto& word = claims[block / 64].bits;
            std::uint64_t const bit = std::uint64_t{1} << (block % 64);
            return (word.load(std::memory_order_relaxed) & bit) == 0 &&
                   (word.fetch_or(bit, std::memory_order_relaxed) & bit) == 0;
        }

        void run_block(std::size_t i) noexcept {
            std::uint64_t const q = n / blocks;
            std::uint64_t const r = n % blocks;
            std::uint64_t const lo = i * q + (i < r ? i : r);
            std::uint64_t const hi = lo + q + (i < r ? 1 : 0);
            run_chunk(*f, detail::offset(begin, lo), detail::offset(begin, hi));
        }

        // Own block first, then any block nobody has claimed yet.
        void run(std::size_t slot) noexcept {
            if (slot < blocks && !stopped() && claim(slot)) run_block(slot);
            for (std::size_t k = 1; k < blocks && !stopped(); ++k) {
                std::size_t const i = (slot + k) % blocks;
                if (claim(i)) run_block(i);
            }
        }

        F* f;
        std::int64_t begin;
        std::uint64_t n;
        std::size_t blocks;
        claim_word* claims;
    };

    // Declared before core_: destroyed after the workers are joined.
    std::unique_ptr<claim_word[]> claims_;
    detail::pool_core core_;
};

using broadcast_pool = thread_pool<scheduling::uniform>;

}  // namespace switchyard
