// A shared library that uses switchyard's process-wide state, built several
// times (tests/visibility/CMakeLists.txt): against the repository's headers
// and against a copy, with and without SWITCHYARD_SHARED_STATE, and with
// default visibility (the case an extension author gets without flags).
#include <switchyard/device/cpu/for_each.h>
#include <switchyard/device/cuda/current_stream.h>
#include <switchyard/parallel.h>
#include <switchyard/shader/trace.h>

#include <atomic>
#include <cstdint>

namespace sy = switchyard;

// The addresses of each piece of process-wide state, in one array.
extern "C" __attribute__((visibility("default"))) int switchyard_state(void const** addresses, int capacity) {
    void const* const state[] = {&sy::default_pool(), &sy::detail::uniform_for_each_pool(),
                                 &sy::detail::current_cuda_stream_slot(), &sy::shader::detail::active_trace(),
                                 &sy::detail::in_parallel_region};
    int const n = static_cast<int>(sizeof(state) / sizeof(state[0]));
    for (int i = 0; i < n && i < capacity; ++i) addresses[i] = state[i];
    return n;
}

// Work on the library's pool: the sum of 0..n-1.
extern "C" __attribute__((visibility("default"))) std::int64_t switchyard_sum(std::int64_t n) {
    std::atomic<std::int64_t> total{0};
    sy::parallel_for(std::int64_t{0}, n, std::int64_t{1024}, [&](std::int64_t begin, std::int64_t end) {
        std::int64_t part = 0;
        for (std::int64_t i = begin; i < end; ++i) part += i;
        total += part;
    });
    return total.load();
}
