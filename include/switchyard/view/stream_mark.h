// stream_mark and find_streams: how for_each learns where a kernel's data is
// without the kernel saying so.
//
// A kernel is a closure that captures its views by value; for_each sees only
// the closure. Every flat view carries a stream_mark: its data address, its
// extent (the indices it accepts) and a check word sealed from both, the
// element size and the view's kind. find_streams(closure) reads the
// closure's bytes and reports each word triple whose check matches: the
// views the kernel captured. The CPU and CUDA for_each refuse a count beyond
// a captured output view's extent (check_count_against_outputs) and the CPU
// prefetches the contiguous ones ahead of the loop (the hardware prefetcher
// stops at every 4 KiB page and, on compute-heavy loops, restarts too late).
//
// Misreading is harmless by construction: unrelated words match with
// probability about 2^-60, and what a match is used for (a prefetch hint, a
// count check) cannot fault or change a result: at worst such a match
// refuses a call. transform (transform.h) sees its operands and needs none
// of this; for_each keeps it because its kernel is an opaque closure.
// Any closure's bytes are read, trivially copyable or not: nvcc wraps
// __host__ __device__ lambdas in a type that is not, with the lambda inside.
// Views behind pointers are not found, nor more than stream_set::max_streams.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "switchyard/core/config.h"

namespace switchyard::detail {

// What kind of view a stream_mark belongs to, sealed into its check word.
struct stream_info {
    std::uint32_t element_bytes = 0;  // 1, 2, 4, 8 or 16
    bool writable = false;            // flat_out (else flat_in)
    bool contiguous = false;          // element i is at address + i * element_bytes
};

inline constexpr std::uint64_t stream_magic = 0x73776974636879ull;  // "switchy"

SWITCHYARD_HOST_DEVICE constexpr std::uint64_t stream_mix(std::uint64_t a) noexcept {
    a ^= a >> 31;
    a *= 0x9E3779B97F4A7C15ull;
    return a ^ (a >> 29);
}

SWITCHYARD_HOST_DEVICE constexpr std::uint64_t stream_info_bits(stream_info info) noexcept {
    return info.element_bytes | (std::uint64_t{info.writable} << 8) | (std::uint64_t{info.contiguous} << 9);
}

SWITCHYARD_HOST_DEVICE constexpr std::uint64_t stream_seal(std::uint64_t address, std::uint64_t extent) noexcept {
    return stream_mix(address) ^ stream_mix(extent + stream_magic) ^ stream_magic;
}

struct stream_mark {
    std::uint64_t address = 0;
    std::uint64_t extent = 0;
    std::uint64_t check = 0;

    stream_mark() = default;
    SWITCHYARD_HOST_DEVICE stream_mark(void const* data, std::int64_t elements, stream_info info) noexcept
        : address(static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(data))),
          extent(static_cast<std::uint64_t>(elements)),
          check(stream_seal(address, extent) ^ stream_info_bits(info)) {}
};

// The streams found in one closure (at most max_streams; more are ignored).
struct stream_set {
    static constexpr int max_streams = 8;
    int count = 0;
    std::uint64_t address[max_streams] = {};
    std::int64_t extent[max_streams] = {};
    stream_info info[max_streams] = {};
};

// Decodes a check word; false when (address, extent, check) is not a stream_mark.
constexpr bool decode_stream_mark(std::uint64_t address, std::uint64_t extent, std::uint64_t check,
                                  stream_info& info) noexcept {
    if (address == 0) return false;
    std::uint64_t const bits = check ^ stream_seal(address, extent);
    if (bits >> 10) return false;
    std::uint32_t const bytes = bits & 0xFF;
    if (bytes != 1 && bytes != 2 && bytes != 4 && bytes != 8 && bytes != 16) return false;
    info = {bytes, ((bits >> 8) & 1) != 0, ((bits >> 9) & 1) != 0};
    return true;
}

template <typename F>
stream_set find_streams(F const& closure) noexcept {
    stream_set found;
    if constexpr (sizeof(F) >= 3 * sizeof(std::uint64_t)) {
        // stream_mark is 8-byte aligned inside the closure, so a word-wise
        // read of its object representation finds every mark.
        constexpr std::size_t words = sizeof(F) / sizeof(std::uint64_t);
        std::uint64_t bytes[words];
        std::memcpy(bytes, reinterpret_cast<unsigned char const*>(std::addressof(closure)),
                    words * sizeof(std::uint64_t));
        for (std::size_t w = 0; w + 2 < words && found.count < stream_set::max_streams; ++w) {
            stream_info info;
            if (!decode_stream_mark(bytes[w], bytes[w + 1], bytes[w + 2], info)) continue;
            found.address[found.count] = bytes[w];
            found.extent[found.count] = static_cast<std::int64_t>(bytes[w + 1]);
            found.info[found.count] = info;
            ++found.count;
            w += 2;  // the extent and check words are not addresses
        }
    }
    return found;
}

// The streams of `all` for which keep(info) holds.
template <typename Keep>
stream_set streams_where(stream_set const& all, Keep keep) noexcept {
    stream_set kept;
    for (int s = 0; s < all.count; ++s) {
        if (!keep(all.info[s])) continue;
        kept.address[kept.count] = all.address[s];
        kept.extent[kept.count] = all.extent[s];
        kept.info[kept.count] = all.info[s];
        ++kept.count;
    }
    return kept;
}

// for_each's contract for a captured flat_out view is one write per index,
// out[i]: a count beyond its elements would write past its memory, so it is
// refused before anything runs. Inputs may be read at other indices
// (x[i / 2]) and are not checked.
inline void check_count_against_outputs(char const* where, std::int64_t count, stream_set const& views) {
    for (int s = 0; s < views.count; ++s)
        if (views.info[s].writable && count > views.extent[s])
            throw std::invalid_argument(std::string(where) + ": count is " + std::to_string(count) +
                                        " but a captured flat_out view has " + std::to_string(views.extent[s]) +
                                        " elements");
}

}  // namespace switchyard::detail
