// chase_lev_deque<T, Capacity>: a bounded Chase-Lev work-stealing deque. Its
// owner pushes and pops at the bottom (LIFO); any other thread steals from
// the top (FIFO, the oldest and, for recursively split ranges, the largest
// item). T must be trivially copyable; its bytes are held in relaxed atomic
// words, so a thief's read that races with the owner's overwrite of a
// recycled slot is no data race (the thief's CAS on `top` then fails and the
// torn copy is dropped).
//
// Memory orders (after Le, Pop, Cohen, Zappa Nardelli, "Correct and efficient
// work-stealing for weak memory models", PPoPP 2013, with the two fences
// folded into seq_cst operations, which ThreadSanitizer also understands):
//
//   push   item stores relaxed; bottom store release (publishes the item)
//   pop    bottom store seq_cst, then top load seq_cst (the store-load order
//          that makes owner and thief agree on who takes the last item);
//          the last item is claimed with a seq_cst CAS on top
//   steal  top load seq_cst, then bottom load seq_cst (acquire: the item is
//          visible), item loads relaxed, then a seq_cst CAS on top claims it
//
// Every store to bottom is a release, so whichever one a thief reads makes
// the items below it visible. The deque never grows: push() returns false
// when it is full and the caller keeps the item (the thread pool then runs
// that range without splitting it further). Indices only increase, so a slot
// is recycled only after top has passed it.
#pragma once

#include <array>
#include <atomic>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <type_traits>

namespace switchyard {

template <class T, std::size_t Capacity = 64>
class chase_lev_deque {
    static_assert(std::is_trivially_copyable_v<T>, "chase_lev_deque<T>: T must be trivially copyable");
    static_assert(Capacity >= 2 && (Capacity & (Capacity - 1)) == 0,
                  "chase_lev_deque<T, Capacity>: Capacity must be a power of two, at least 2");

public:
    chase_lev_deque() = default;
    chase_lev_deque(chase_lev_deque const&) = delete;
    chase_lev_deque& operator=(chase_lev_deque const&) = delete;

    static constexpr std::size_t capacity() noexcept { return Capacity; }

    // Owner only. False when the deque is full (the item is not stored).
    bool push(T const& item) noexcept {
        std::int64_t const b = bottom_.load(std::memory_order_relaxed);
        std::int64_t const t = top_.load(std::memory_order_acquire);
        if (b - t >= static_cast<std::int64_t>(Capacity)) return false;
        store(slots_[static_cast<std::size_t>(b) & mask], item);
        bottom_.store(b + 1, std::memory_order_release);
        return true;
    }

    // Owner only. The most recently pushed item, unless thieves took it.
    std::optional<T> pop() noexcept {
        std::int64_t const b = bottom_.load(std::memory_order_relaxed) - 1;
        bottom_.store(b, std::memory_order_seq_cst);
        std::int64_t t = top_.load(std::memory_order_seq_cst);
        if (t > b) {  // empty
            bottom_.store(b + 1, std::memory_order_release);
            return std::nullopt;
        }
        T item = load(slots_[static_cast<std::size_t>(b) & mask]);
        if (t < b) return item;  // more than one item: no thief can reach index b
        // The last item: race the thieves for it.
        bool const won = top_.compare_exchange_strong(t, t + 1, std::memory_order_seq_cst, std::memory_order_relaxed);
        bottom_.store(b + 1, std::memory_order_release);
        if (!won) return std::nullopt;
        return item;
    }

    // Any thread. The oldest item, or nothing when the deque is empty or
    // another thread won the race for it.
    std::optional<T> steal() noexcept {
        std::int64_t t = top_.load(std::memory_order_seq_cst);
        std::int64_t const b = bottom_.load(std::memory_order_seq_cst);
        if (t >= b) return std::nullopt;
        T item = load(slots_[static_cast<std::size_t>(t) & mask]);
        if (!top_.compare_exchange_strong(t, t + 1, std::memory_order_seq_cst, std::memory_order_relaxed))
            return std::nullopt;
        return item;
    }

    // A snapshot; exact only when no other thread is using the deque.
    bool empty() const noexcept {
        return bottom_.load(std::memory_order_seq_cst) <= top_.load(std::memory_order_seq_cst);
    }

private:
    static constexpr std::size_t mask = Capacity - 1;
    static constexpr std::size_t words = (sizeof(T) + sizeof(std::uint64_t) - 1) / sizeof(std::uint64_t);

    struct slot {
        std::atomic<std::uint64_t> word[words];
    };

    static void store(slot& s, T const& item) noexcept {
        std::uint64_t raw[words] = {};
        std::memcpy(raw, &item, sizeof(T));
        for (std::size_t i = 0; i < words; ++i) s.word[i].store(raw[i], std::memory_order_relaxed);
    }
    static T load(slot const& s) noexcept {
        std::uint64_t raw[words];
        for (std::size_t i = 0; i < words; ++i) raw[i] = s.word[i].load(std::memory_order_relaxed);
        std::array<unsigned char, sizeof(T)> bytes;
        std::memcpy(bytes.data(), raw, sizeof(T));
        return std::bit_cast<T>(bytes);
    }

    // top and bottom share a cache line: in fork-join use steals are rare
    // and thieves mostly read both, so one line moves instead of two.
    alignas(64) std::atomic<std::int64_t> top_{0};
    std::atomic<std::int64_t> bottom_{0};
    alignas(64) slot slots_[Capacity]{};
};

}  // namespace switchyard
