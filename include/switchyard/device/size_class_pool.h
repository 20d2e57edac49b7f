// size_class_pool: free buffers kept by size class, so that a repeated
// allocation of a similar size reuses a buffer instead of creating one.
// Classes are powers of two from 256 bytes; a request is served by a buffer
// of its class, whose capacity is the class size. Independent of any GPU API
// (Handle is whatever the device calls a buffer), so it is tested on its own.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace switchyard::detail {

template <typename Handle>
class size_class_pool {
public:
    static constexpr std::uint64_t smallest_class = 256;
    static constexpr int class_count = 64;

    // The capacity a request of `bytes` is given: the next power of two, at
    // least smallest_class. Requests above `largest` (the device's buffer
    // size limit) keep their size rounded up to 4 bytes and are not pooled.
    static std::uint64_t capacity_for(std::uint64_t bytes, std::uint64_t largest) noexcept {
        std::uint64_t const rounded = (bytes + 3) & ~std::uint64_t{3};
        if (rounded <= smallest_class) return smallest_class;
        std::uint64_t const pow2 = std::bit_ceil(rounded);
        return pow2 <= largest ? pow2 : rounded;
    }

    // A free buffer of exactly `capacity`, or a null Handle.
    Handle take(std::uint64_t capacity) {
        if (!std::has_single_bit(capacity)) return Handle{};
        auto& list = free_[std::countr_zero(capacity)];
        if (list.empty()) return Handle{};
        Handle h = list.back();
        list.pop_back();
        free_bytes_ -= capacity;
        return h;
    }

    // Keeps `h` for reuse; false if its capacity is not a pooled class (the
    // caller destroys it then).
    bool give(Handle h, std::uint64_t capacity) {
        if (!std::has_single_bit(capacity) || capacity < smallest_class) return false;
        free_[std::countr_zero(capacity)].push_back(h);
        free_bytes_ += capacity;
        return true;
    }

    // Hands every free buffer to `destroy` and forgets them.
    template <typename Destroy>
    void clear(Destroy&& destroy) {
        for (auto& list : free_) {
            for (Handle h : list) destroy(h);
            list.clear();
        }
        free_bytes_ = 0;
    }

    std::uint64_t free_bytes() const noexcept { return free_bytes_; }

private:
    std::vector<Handle> free_[class_count];
    std::uint64_t free_bytes_ = 0;
};

}  // namespace switchyard::detail
