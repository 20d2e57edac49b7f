// Stress test of the parallel layer, meant to run under ThreadSanitizer:
// oversubscribed (4 pools of 4 threads plus 6 caller threads, on however
// few cores), many short jobs with random ranges and grains, exceptions,
// nested calls, concurrent callers on one pool, and pools destroyed and
// created again every round (while their workers poll or sleep).
//
//   stress_parallel [seconds]      default 8; exit 0 when every result was
//                                  right, 1 otherwise (and the first errors)
#include <switchyard/parallel.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <variant>
#include <vector>

using namespace switchyard;

namespace {

struct stress_error : std::runtime_error {
    stress_error(std::uint64_t job, std::int64_t index) : std::runtime_error("stress_error"), job_id(job), at(index) {}
    std::uint64_t job_id;
    std::int64_t at;
};

using any_pool = std::variant<std::unique_ptr<broadcast_pool>, std::unique_ptr<work_stealing_pool>>;

template <class F>
void run_on(any_pool& pool, std::int64_t b, std::int64_t e, parallel_hint h, F&& f) {
    std::visit([&](auto& p) { p->parallel_for(b, e, h, f); }, pool);
}

std::atomic<std::uint64_t> failures{0};
std::atomic<std::uint64_t> jobs_run{0};
std::atomic<std::uint64_t> exceptions_seen{0};
std::atomic<std::uint64_t> nested_run{0};
std::mutex report_mutex;

void fail(std::string const& what) {
    if (failures.fetch_add(1) < 10) {
        std::lock_guard<std::mutex> lock(report_mutex);
        std::fprintf(stderr, "stress_parallel: %s\n", what.c_str());
    }
}

// The sum of the indices of [b, e), modulo 2^64.
std::uint64_t index_sum(std::int64_t b, std::int64_t e) {
    auto const n = static_cast<std::uint64_t>(e - b);
    std::uint64_t const half = n % 2 == 0 ? (n / 2) * (n - 1) : n * ((n - 1) / 2);
    return n * static_cast<std::uint64_t>(b) + half;
}

void one_job(std::vector<any_pool>& pools, std::mt19937_64& rng, std::uint64_t job_id) {
    auto pick = [&](std::uint64_t k) { return static_cast<std::int64_t>(rng() % k); };
    any_pool& pool = pools[static_cast<std::size_t>(pick(pools.size()))];
    std::int64_t const n = pick(8) == 0 ? pick(3) : pick(2000);
    std::int64_t const b = pick(1000000) - 500000;
    std::int64_t const e = b + n;
    parallel_hint hint{pick(67) - 2, 0};
    if (pick(8) == 0) hint = parallel_hint{0, static_cast<double>(pick(400))};
    std::int64_t const throw_at = (n > 0 && pick(16) == 0) ? b + pick(n) : INT64_MIN;
    bool const nest = pick(16) == 0;

    std::vector<std::atomic<std::uint8_t>> hits(static_cast<std::size_t>(n));
    std::atomic<std::uint64_t> sum{0};
    auto body = [&](std::int64_t cb, std::int64_t ce) {
        if (cb < b || ce > e || cb >= ce) {
            fail("chunk [" + std::to_string(cb) + ", " + std::to_string(ce) + ") outside [" + std::to_string(b) + ", " +
                 std::to_string(e) + ")");
            return;
        }
        std::uint64_t s = 0;
        for (std::int64_t i = cb; i < ce; ++i) {
            if (i == throw_at) throw stress_error(job_id, i);
            hits[static_cast<std::size_t>(i - b)].fetch_add(1, std::memory_order_relaxed);
            s += static_cast<std::uint64_t>(i);
        }
        if (nest) {
            // A nested call on some pool (the same one or another): inline.
            auto const me = std::this_thread::get_id();
            std::atomic<std::uint64_t> inner{0};
            std::atomic<bool> moved{false};
            auto inner_body = [&](std::int64_t ib, std::int64_t ie) {
                if (std::this_thread::get_id() != me) moved.store(true);
                inner.fetch_add(index_sum(ib, ie), std::memory_order_relaxed);
            };
            // Pools are only destroyed between rounds, never during one.
            run_on(pools[static_cast<std::size_t>(cb) % pools.size()], 0, 100, parallel_hint{1, 0}, inner_body);
            if (inner.load() != index_sum(0, 100) || moved.load()) fail("nested call wrong or not inline");
            nested_run.fetch_add(1, std::memory_order_relaxed);
        }
        sum.fetch_add(s, std::memory_order_relaxed);
    };

    try {
        if (pick(10) == 0)
            parallel_for(b, e, hint, body);  // the default pool
        else
            run_on(pool, b, e, hint, body);
    } catch (stress_error const& x) {
        exceptions_seen.fetch_add(1, std::memory_order_relaxed);
        if (x.job_id != job_id || x.at != throw_at) fail("wrong exception rethrown");
        // Chunks after the exception may or may not have run; none twice.
        for (auto const& h : hits)
            if (h.load() > 1) fail("an index ran twice in a job that threw");
        return;
    } catch (...) {
        fail("unexpected exception type");
        return;
    }
    jobs_run.fetch_add(1, std::memory_order_relaxed);
    if (throw_at != INT64_MIN) fail("job " + std::to_string(job_id) + " should have thrown");
    for (auto const& h : hits) {
        if (h.load() != 1) {
            fail("index not visited exactly once, job " + std::to_string(job_id));
            break;
        }
    }
    if (sum.load() != index_sum(b, e)) fail("wrong sum");
}

}  // namespace

int main(int argc, char** argv) {
    double const seconds = argc > 1 ? std::atof(argv[1]) : 8.0;
    using clock = std::chrono::steady_clock;
    auto const deadline =
        clock::now() + std::chrono::duration_cast<clock::duration>(std::chrono::duration<double>(seconds));
    constexpr int pools_per_round = 4;
    constexpr std::size_t threads_per_pool = 4;
    constexpr int callers = 6;
    std::uint64_t rounds = 0;
    std::atomic<std::uint64_t> next_job{0};

    while (clock::now() < deadline) {
        std::vector<any_pool> pools;
        for (int p = 0; p < pools_per_round; ++p) {
            std::size_t const threads = (rounds + static_cast<std::uint64_t>(p)) % 5 == 0 ? 1 : threads_per_pool;
            if ((rounds + static_cast<std::uint64_t>(p)) % 2 == 0)
                pools.emplace_back(std::make_unique<broadcast_pool>(threads));
            else
                pools.emplace_back(std::make_unique<work_stealing_pool>(threads));
        }
        auto const round_end = std::min(deadline, clock::now() + std::chrono::milliseconds(300));
        std::vector<std::thread> threads;
        for (int c = 0; c < callers; ++c) {
            threads.emplace_back([&, c] {
                std::mt19937_64 rng(rounds * 1000 + static_cast<std::uint64_t>(c));
                while (clock::now() < round_end) {
                    one_job(pools, rng, next_job.fetch_add(1));
                    if (rng() % 64 == 0) std::this_thread::sleep_for(std::chrono::microseconds(rng() % 3000));
                }
            });
        }
        for (auto& t : threads) t.join();
        // Some rounds end with a job right before destruction.
        if (rounds % 3 == 0) {
            std::atomic<std::uint64_t> s{0};
            for (auto& pool : pools)
                run_on(pool, 0, 64, parallel_hint{1, 0},
                       [&](std::int64_t b, std::int64_t e) { s.fetch_add(index_sum(b, e)); });
            if (s.load() != pools.size() * index_sum(0, 64)) fail("last job before destruction wrong");
        }
        ++rounds;
    }
    std::printf("stress_parallel: %llu rounds, %llu jobs, %llu exceptions, %llu nested calls, %llu failures\n",
                static_cast<unsigned long long>(rounds), static_cast<unsigned long long>(jobs_run.load()),
                static_cast<unsigned long long>(exceptions_seen.load()),
                static_cast<unsigned long long>(nested_run.load()), static_cast<unsigned long long>(failures.load()));
    return failures.load() == 0 && jobs_run.load() > 0 ? 0 : 1;
}
