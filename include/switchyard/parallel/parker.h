// Spin-then-park waiting, the building block of the thread pools:
//
//   cpu_relax()       the CPU's spin-wait hint (x86 `pause`, Arm `yield`)
//   spin_policy       how long a waiter polls before it sleeps: first with
//                     cpu_relax() between polls, then yielding its core
//                     between polls (so a thread that shares the core runs)
//   spin_until(p, s)  polls p() under policy s; true when p() became true
//   polling_permit    a cap on idle threads polling at once (per library:
//                     SWITCHYARD_PROCESS_STATE, core/config.h)
//                     (hardware threads - 1): idle workers beyond it sleep
//                     at once instead of taking cores from running threads
//   park_slot         one thread sleeps on it (C++20 atomic wait, a futex on
//                     Linux) and others wake it; waking costs a syscall only
//                     when the owner really is asleep
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>

#include "switchyard/core/config.h"

namespace switchyard {

// The CPU's hint that this thread is spin-waiting: it lowers the power and
// the pipeline resources the spin takes from a sibling hyperthread.
inline void cpu_relax() noexcept {
#if (defined(__GNUC__) || defined(__clang__)) && (defined(__x86_64__) || defined(__i386__))
    __builtin_ia32_pause();
#elif (defined(__GNUC__) || defined(__clang__)) && (defined(__aarch64__) || defined(__arm__))
    __asm__ __volatile__("yield" ::: "memory");
#endif
}

// How long a waiting thread polls before it sleeps. Both phases are wall
// time: `pause` of polling with cpu_relax() between polls (the reaction is
// immediate, the core is busy), then `yield` more of polling with
// std::this_thread::yield() between polls (the reaction costs a yield, about
// 0.2 us, and any other runnable thread on the core runs first). Then the
// thread sleeps until it is woken.
struct spin_policy {
    std::chrono::nanoseconds pause{std::chrono::microseconds(50)};
    std::chrono::nanoseconds yield{std::chrono::microseconds(2950)};
};

// Polls `ready` under `policy`; true as soon as ready() returns true, false
// when the time is up first. ready() is called at least once.
template <class Ready>
bool spin_until(Ready&& ready, spin_policy const& policy) {
    if (ready()) return true;
    using clock = std::chrono::steady_clock;
    auto const start = clock::now();
    // Reading the clock costs about as much as 2-4 pauses; read it every 32.
    for (unsigned i = 1;; ++i) {
        cpu_relax();
        if (ready()) return true;
        if ((i & 31U) == 0 && clock::now() - start >= policy.pause) break;
    }
    auto const total = policy.pause + policy.yield;
    while (clock::now() - start < total) {
        std::this_thread::yield();
        if (ready()) return true;
    }
    return false;
}

// A cap on the number of idle threads that poll at once, shared by every
// pool of the library (each shared library that includes switchyard has its
// own: SWITCHYARD_PROCESS_STATE).
// Polling only pays when the poller has a core to itself: with more pollers
// than spare cores they take time from threads doing work. An idle worker
// takes a permit before it polls, keeps it while it works and polls again,
// and gives it back when it goes to sleep; with none left it sleeps at once.
class polling_permit {
public:
    polling_permit() noexcept = default;
    ~polling_permit() { give_back(); }
    polling_permit(polling_permit const&) = delete;
    polling_permit& operator=(polling_permit const&) = delete;

    bool held() const noexcept { return held_; }

    // True when this object holds a permit (already or now).
    bool try_take() noexcept {
        if (held_) return true;
        auto& c = counter();
        int n = c.load(std::memory_order_relaxed);
        while (n < capacity()) {
            if (c.compare_exchange_weak(n, n + 1, std::memory_order_relaxed)) return held_ = true;
        }
        return false;
    }

    void give_back() noexcept {
        if (held_) counter().fetch_sub(1, std::memory_order_relaxed);
        held_ = false;
    }

    // Permits in the process: hardware threads - 1 (one core is left to the
    // thread that hands out the work), so 0 on a one-core machine.
    static int capacity() noexcept {
        static int const cap = [] {
            unsigned const hw = std::thread::hardware_concurrency();
            return hw > 1 ? static_cast<int>(hw) - 1 : 0;
        }();
        return cap;
    }

private:
    SWITCHYARD_PROCESS_STATE static std::atomic<int>& counter() noexcept {
        static std::atomic<int> pollers{0};
        return pollers;
    }

    bool held_ = false;
};

// One thread (the owner) sleeps on a park_slot; any thread wakes it.
//
// The owner calls park_while(still_waiting): it announces that it is about
// to sleep, checks still_waiting() once more, and sleeps only if that is
// still true, until unpark(). A waker first makes still_waiting() false
// (with a seq_cst store or read-modify-write) and then calls unpark(). Both
// sides use seq_cst, so either the owner's last check sees the waker's
// change or the waker sees the announcement and wakes it: no lost wake-up.
// unpark() on an owner that is not asleep costs one load and no syscall.
class park_slot {
public:
    template <class StillWaiting>
    void park_while(StillWaiting&& still_waiting) {
        state_.store(parked, std::memory_order_seq_cst);
        if (!still_waiting()) {
            state_.store(awake, std::memory_order_relaxed);
            return;
        }
        while (state_.load(std::memory_order_acquire) == parked) state_.wait(parked, std::memory_order_acquire);
    }

    // True when the owner was asleep (or about to be) and has been woken.
    bool unpark() noexcept {
        if (state_.load(std::memory_order_seq_cst) != parked) return false;
        if (state_.exchange(awake, std::memory_order_seq_cst) != parked) return false;
        state_.notify_one();
        return true;
    }

    bool is_parked() const noexcept { return state_.load(std::memory_order_relaxed) == parked; }

private:
    static constexpr std::uint32_t awake = 0;
    static constexpr std::uint32_t parked = 1;
    std::atomic<std::uint32_t> state_{awake};
};

}  // namespace switchyard
