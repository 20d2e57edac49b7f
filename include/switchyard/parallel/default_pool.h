// The process-wide default pool and its size:
//
//   using default_thread_pool = work_stealing_pool;
//   default_thread_pool& default_pool();            // created on first use
//   std::size_t threads_from_environment();         // its thread count
//   std::size_t parse_num_threads(char const* value);
//
// The default pool has SWITCHYARD_NUM_THREADS threads when that variable is
// set and not empty, else hardware_threads(). A value that is not a plain
// decimal integer from 1 to max_env_threads (no sign, no spaces) is an
// error, not silently replaced: default_pool() throws std::invalid_argument
// naming the variable and the value (and throws again on the next call: the
// pool is created only once the value is valid).
//
// The default pool is never destroyed: parallel_for stays usable from other
// objects' destructors at exit. Its workers sleep when idle.
#pragma once

#include <cstddef>
#include <cstdlib>
#include <stdexcept>
#include <string>

#include "switchyard/core/config.h"
#include "switchyard/parallel/work_stealing_pool.h"

namespace switchyard {

using default_thread_pool = work_stealing_pool;

// The largest accepted SWITCHYARD_NUM_THREADS (a guard against typos that
// would start a million threads).
inline constexpr std::size_t max_env_threads = max_pool_threads;

// The thread count SWITCHYARD_NUM_THREADS asks for: 0 for nullptr or "" (not
// set), else the value. Throws std::invalid_argument on anything else.
inline std::size_t parse_num_threads(char const* value) {
    if (value == nullptr || *value == '\0') return 0;
    std::size_t n = 0;
    bool valid = true;
    for (char const* p = value; *p != '\0'; ++p) {
        if (*p < '0' || *p > '9') {
            valid = false;
            break;
        }
        n = n * 10 + static_cast<std::size_t>(*p - '0');
        if (n > max_env_threads) {
            valid = false;
            break;
        }
    }
    if (!valid || n == 0) {
        throw std::invalid_argument("SWITCHYARD_NUM_THREADS must be a whole number of threads from 1 to " +
                                    std::to_string(max_env_threads) + ", got \"" + value + "\"");
    }
    return n;
}

// SWITCHYARD_NUM_THREADS if set, else hardware_threads().
inline std::size_t threads_from_environment() {
    std::size_t const n = parse_num_threads(std::getenv("SWITCHYARD_NUM_THREADS"));
    return n != 0 ? n : hardware_threads();
}

SWITCHYARD_PROCESS_STATE inline default_thread_pool& default_pool() {
    static default_thread_pool* const pool = new default_thread_pool(threads_from_environment());
    return *pool;
}

}  // namespace switchyard
