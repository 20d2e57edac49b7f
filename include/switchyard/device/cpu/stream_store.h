// Streaming (non-temporal) stores for transform's large outputs, switched
// on by the environment variable SWITCHYARD_STREAM_STORE_BYTES: an op's
// outputs are streamed when they total at least that many bytes (0: always);
// unset, none is.
//
// A normal store first reads the line it writes (read for ownership) and
// leaves it in the cache. For an output larger than the cache that nothing
// reads soon, that gains nothing, and the reads cost a third of the traffic
// of a one-input map; streamed, the output goes to memory directly and
// leaves the cache to the inputs. But streaming costs a pass through a
// block buffer, which a kernel bound by its arithmetic pays for, and an
// output that stays cached is faster to read back. Measured
// (docs/benchmarks.md), no size made it a safe default for every kernel and
// machine, so it is the user's choice. Only x86-64 builds of g++ and clang
// stream; elsewhere outputs are stored normally.
//
// Rows stage their results in a block of compute values and stream the block
// (stream_store_block); stream_fence() then orders the streamed stores
// before the pool's join publishes them to the caller's thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "switchyard/core/config.h"
#include "switchyard/core/dtype.h"
#include "switchyard/device/cpu/convert.h"
#include "switchyard/device/cpu/isa.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__)) && !defined(__CUDACC__)
#include <immintrin.h>
#define SWITCHYARD_HAS_STREAM_STORES 1
#endif

namespace switchyard::detail {

// The least output bytes an op streams: SWITCHYARD_STREAM_STORE_BYTES when
// set and not empty, else none (the largest value). A value that is not a
// plain decimal byte count is an error naming the variable, thrown by each
// CPU transform on a build that streams (x86-64 g++ or clang) until it is
// fixed. Tests change it.
inline constexpr std::int64_t cpu_stream_store_never = std::numeric_limits<std::int64_t>::max();
inline std::int64_t parse_stream_store_bytes(char const* value) {
    std::int64_t n = 0;
    bool valid = *value != '\0';
    for (char const* p = value; valid && *p != '\0'; ++p) {
        int const digit = *p - '0';
        valid = digit >= 0 && digit <= 9 && n <= (cpu_stream_store_never - digit) / 10;
        if (valid) n = n * 10 + digit;
    }
    if (!valid)
        throw std::invalid_argument(std::string("SWITCHYARD_STREAM_STORE_BYTES must be a byte count (digits only, "
                                                "0 streams every output), got '") +
                                    value + "'");
    return n;
}
inline std::atomic<std::int64_t>& cpu_stream_store_bytes() {
    static std::atomic<std::int64_t> bytes{[] {
        char const* value = std::getenv("SWITCHYARD_STREAM_STORE_BYTES");
        if (value != nullptr && *value != '\0') return parse_stream_store_bytes(value);
        return cpu_stream_store_never;
    }()};
    return bytes;
}

// Whether an op whose outputs total `bytes` streams them. (SWITCHYARD_INLINE
// here and in stream_fence: an nvcc translation unit compiles these without
// stream stores, a g++ one with them; they must not be merged at link time.)
SWITCHYARD_INLINE bool cpu_streams_output(std::int64_t bytes) {
#if defined(SWITCHYARD_HAS_STREAM_STORES)
    return bytes >= cpu_stream_store_bytes().load(std::memory_order_relaxed);
#else
    (void)bytes;
    return false;
#endif
}

#if defined(SWITCHYARD_HAS_STREAM_STORES)
// The part [begin, end) of a copy of `bytes` to dst that streams: whole
// Align-byte vectors at aligned addresses. The rest is copied normally
// (copy_unaligned_ends). (No lambdas here: they would not inherit the
// callers' target levels.)
struct stream_span {
    std::size_t begin, end;
};
template <std::size_t Align>
SWITCHYARD_INLINE stream_span aligned_span(void const* dst, std::size_t bytes) {
    std::size_t begin = (Align - reinterpret_cast<std::uintptr_t>(dst) % Align) % Align;
    if (begin > bytes) begin = bytes;
    return {begin, begin + (bytes - begin) / Align * Align};
}
// (Empty ends are common, aligned rows, and skip the calls.)
SWITCHYARD_INLINE void copy_unaligned_ends(void* dst, void const* src, std::size_t bytes, stream_span span) {
    if (span.begin > 0) std::memcpy(dst, src, span.begin);
    if (span.end < bytes)
        std::memcpy(static_cast<char*>(dst) + span.end, static_cast<char const*>(src) + span.end, bytes - span.end);
}
// The baseline copy uses the widest stores the whole build targets (a
// -march=native build has no level variants); force-inlined, since
// translation units built with other -m flags compile it differently.
SWITCHYARD_INLINE void stream_bytes_baseline(void* dst, void const* src, std::size_t bytes) {
    auto* d = static_cast<char*>(dst);
    auto const* s = static_cast<char const*>(src);
#if defined(__AVX512F__)
    stream_span const span = aligned_span<64>(dst, bytes);
    for (std::size_t j = span.begin; j < span.end; j += 64)
        _mm512_stream_si512(reinterpret_cast<__m512i*>(d + j), _mm512_loadu_si512(s + j));
#elif defined(__AVX__)
    stream_span const span = aligned_span<32>(dst, bytes);
    for (std::size_t j = span.begin; j < span.end; j += 32)
        _mm256_stream_si256(reinterpret_cast<__m256i*>(d + j),
                            _mm256_loadu_si256(reinterpret_cast<__m256i const*>(s + j)));
#else
    stream_span const span = aligned_span<16>(dst, bytes);
    for (std::size_t j = span.begin; j < span.end; j += 16)
        _mm_stream_si128(reinterpret_cast<__m128i*>(d + j), _mm_loadu_si128(reinterpret_cast<__m128i const*>(s + j)));
#endif
    copy_unaligned_ends(dst, src, bytes, span);
}
#if defined(SWITCHYARD_CPU_ISA_VARIANTS)
[[gnu::target("arch=x86-64-v3")]] inline void stream_bytes_v3(void* dst, void const* src, std::size_t bytes) {
    stream_span const span = aligned_span<32>(dst, bytes);
    auto* d = static_cast<char*>(dst);
    auto const* s = static_cast<char const*>(src);
    for (std::size_t j = span.begin; j < span.end; j += 32)
        _mm256_stream_si256(reinterpret_cast<__m256i*>(d + j),
                            _mm256_loadu_si256(reinterpret_cast<__m256i const*>(s + j)));
    copy_unaligned_ends(dst, src, bytes, span);
}
[[gnu::target("arch=x86-64-v4")]] inline void stream_bytes_v4(void* dst, void const* src, std::size_t bytes) {
    stream_span const span = aligned_span<64>(dst, bytes);
    auto* d = static_cast<char*>(dst);
    auto const* s = static_cast<char const*>(src);
    for (std::size_t j = span.begin; j < span.end; j += 64)
        _mm512_stream_si512(reinterpret_cast<__m512i*>(d + j), _mm512_loadu_si512(s + j));
    copy_unaligned_ends(dst, src, bytes, span);
}
#endif
#endif

// bytes from src to dst, streamed with the widest stores of level I.
template <cpu_isa I>
SWITCHYARD_INLINE void stream_bytes(void* dst, void const* src, std::size_t bytes) {
#if defined(SWITCHYARD_HAS_STREAM_STORES)
#if defined(SWITCHYARD_CPU_ISA_VARIANTS)
    if constexpr (I == cpu_isa::x86_64_v4) return stream_bytes_v4(dst, src, bytes);
    if constexpr (I == cpu_isa::x86_64_v3) return stream_bytes_v3(dst, src, bytes);
#endif
    stream_bytes_baseline(dst, src, bytes);
#else
    std::memcpy(dst, src, bytes);
#endif
}

// Orders this thread's streamed stores before its later stores (the pool's
// join), so that the thread that waits on the join reads them.
SWITCHYARD_INLINE void stream_fence() {
#if defined(SWITCHYARD_HAS_STREAM_STORES)
    _mm_sfence();
#endif
}

// Calls stream_fence() when it leaves its scope, if `on`.
struct stream_fence_on_exit {
    bool on;
    explicit stream_fence_on_exit(bool on_) : on(on_) {}
    stream_fence_on_exit(stream_fence_on_exit const&) = delete;
    stream_fence_on_exit& operator=(stream_fence_on_exit const&) = delete;
    ~stream_fence_on_exit() {
        if (on) stream_fence();
    }
};

// dst[j] = src[j] as S for j in [0, n), n <= cpu_stream_block, streamed.
inline constexpr std::int64_t cpu_stream_block = 256;
template <cpu_isa I, dtype D, typename S, typename C>
SWITCHYARD_INLINE void stream_store_block(C const* src, S* dst, std::int64_t n) {
    if constexpr (std::is_same_v<S, C>) {
        stream_bytes<I>(dst, src, static_cast<std::size_t>(n) * sizeof(S));
    } else {
        S converted[cpu_stream_block];
        store_block<D>(src, converted, 1, n);
        stream_bytes<I>(dst, converted, static_cast<std::size_t>(n) * sizeof(S));
    }
}

}  // namespace switchyard::detail
