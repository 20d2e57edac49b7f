// fuzz_bytes: reads a fuzzer's input as a sequence of small decisions. Once
// the bytes run out every read returns its lowest choice, so any input,
// however short, decodes to a valid case.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>

namespace fuzz {

class bytes {
public:
    bytes(std::uint8_t const* data, std::size_t size) : data_(data), size_(size) {}

    // An integer in [lo, hi].
    std::int64_t in(std::int64_t lo, std::int64_t hi) {
        auto const span = static_cast<std::uint64_t>(hi) - static_cast<std::uint64_t>(lo);
        std::uint64_t raw = 0;
        for (std::uint64_t left = span; left != 0; left >>= 8) raw = (raw << 8) | next();
        if (span == std::numeric_limits<std::uint64_t>::max()) return static_cast<std::int64_t>(raw);
        return static_cast<std::int64_t>(static_cast<std::uint64_t>(lo) + raw % (span + 1));
    }
    bool flag() { return (next() & 1) != 0; }
    // Any int64, for values that should sometimes be extreme.
    std::int64_t any_int64() {
        return in(std::numeric_limits<std::int64_t>::min(), std::numeric_limits<std::int64_t>::max());
    }
    template <typename T>
    T raw() {
        unsigned char b[sizeof(T)];
        for (auto& c : b) c = next();
        T v;
        std::memcpy(&v, b, sizeof(T));
        return v;
    }
    bool empty() const { return at_ >= size_; }

private:
    std::uint8_t next() { return at_ < size_ ? data_[at_++] : 0; }

    std::uint8_t const* data_;
    std::size_t size_;
    std::size_t at_ = 0;
};

// FUZZ_VERBOSE=1 in the environment: targets describe each case they build.
inline bool verbose() {
    static bool const on = std::getenv("FUZZ_VERBOSE") != nullptr;
    return on;
}

// Stops the fuzzer with a message: libFuzzer records the input as a crash.
[[noreturn]] inline void fail(char const* what) {
    std::fprintf(stderr, "fuzz check failed: %s\n", what);
    std::abort();
}
#define FUZZ_CHECK(cond)                                                                 \
    do {                                                                                 \
        if (!(cond)) ::fuzz::fail(#cond " (" __FILE__ ":" FUZZ_STRINGIFY(__LINE__) ")"); \
    } while (0)
#define FUZZ_STRINGIFY(x) FUZZ_STRINGIFY2(x)
#define FUZZ_STRINGIFY2(x) #x

}  // namespace fuzz
