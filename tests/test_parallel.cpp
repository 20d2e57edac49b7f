// Tests of the parallel layer: the pools (most cases run for broadcast_pool,
// work_stealing_pool and a team_pool lent std::threads), the grain model,
// the Chase-Lev deque, team scopes, parallel_for on the default pool and
// SWITCHYARD_NUM_THREADS parsing.
// Correctness only: performance is bench/fork_join.cpp's job.
#include <switchyard/parallel.h>

#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <memory>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

using namespace switchyard;

namespace {

constexpr std::int64_t i64_min = std::numeric_limits<std::int64_t>::min();
constexpr std::int64_t i64_max = std::numeric_limits<std::int64_t>::max();

// Counts how often each index of [begin, end) is visited.
struct coverage {
    std::int64_t begin;
    std::vector<std::atomic<std::uint32_t>> hits;
    std::atomic<std::int64_t> stray{0};

    coverage(std::int64_t b, std::int64_t e) : begin(b), hits(static_cast<std::size_t>(e - b)) {}

    void visit(std::int64_t b, std::int64_t e) {
        for (std::int64_t i = b; i < e; ++i) {
            if (i < begin || i >= begin + static_cast<std::int64_t>(hits.size()))
                stray.fetch_add(1, std::memory_order_relaxed);
            else
                hits[static_cast<std::size_t>(i - begin)].fetch_add(1, std::memory_order_relaxed);
        }
    }
    bool exactly_once() const {
        if (stray.load() != 0) return false;
        return std::all_of(hits.begin(), hits.end(), [](auto const& h) { return h.load() == 1; });
    }
};

// Records the chunks f was called with.
struct chunk_log {
    std::mutex m;
    std::vector<std::pair<std::int64_t, std::int64_t>> chunks;

    void add(std::int64_t b, std::int64_t e) {
        std::lock_guard<std::mutex> lock(m);
        chunks.emplace_back(b, e);
    }
    // The chunks tile [begin, end) exactly (no gap, no overlap, none empty).
    bool tiles(std::int64_t begin, std::int64_t end) {
        std::sort(chunks.begin(), chunks.end());
        std::int64_t at = begin;
        for (auto [b, e] : chunks) {
            if (b != at || e <= b) return false;
            at = e;
        }
        return at == end;
    }
    std::uint64_t smallest() const {
        std::uint64_t s = std::numeric_limits<std::uint64_t>::max();
        for (auto [b, e] : chunks) s = std::min(s, static_cast<std::uint64_t>(e) - static_cast<std::uint64_t>(b));
        return s;
    }
    std::uint64_t largest() const {
        std::uint64_t s = 0;
        for (auto [b, e] : chunks) s = std::max(s, static_cast<std::uint64_t>(e) - static_cast<std::uint64_t>(b));
        return s;
    }
};

// A team_pool whose team is std::threads started for each job: a stand-in
// for a runtime that lends its threads (the torch adapter lends PyTorch's).
class thread_team : public team_pool {
public:
    explicit thread_team(std::size_t threads = hardware_threads()) : team_pool(threads, &run) {}

private:
    static void run(void*, detail::job_base& job, std::size_t n) noexcept {
        std::vector<std::thread> members;
        for (std::size_t slot = 1; slot < n; ++slot) members.emplace_back([&job, slot] { job.work(job, slot); });
        job.work(job, 0);
        for (auto& t : members) t.join();
    }
};

struct boom : std::runtime_error {
    explicit boom(int i) : std::runtime_error("boom " + std::to_string(i)), id(i) {}
    int id;
};

}  // namespace

// ---------------------------------------------------------------- ranges ----

TEMPLATE_TEST_CASE("parallel_for: an empty range calls nothing", "[parallel]", broadcast_pool, work_stealing_pool,
                   thread_team) {
    for (std::size_t threads : {1, 2, 3, 8}) {
        TestType pool(threads);
        std::atomic<int> calls{0};
        auto f = [&](std::int64_t, std::int64_t) { ++calls; };
        pool.parallel_for(0, 0, 1, f);
        pool.parallel_for(5, 5, 0, f);
        pool.parallel_for(10, 3, 1, f);
        pool.parallel_for(i64_max, i64_min, 1, f);
        CHECK(calls.load() == 0);
    }
}

TEMPLATE_TEST_CASE("parallel_for: one element is one call", "[parallel]", broadcast_pool, work_stealing_pool,
                   thread_team) {
    for (std::size_t threads : {1, 2, 3, 8}) {
        TestType pool(threads);
        for (std::int64_t grain : {i64_min, std::int64_t{-1}, std::int64_t{0}, std::int64_t{1}, i64_max}) {
            chunk_log log;
            pool.parallel_for(41, 42, grain, [&](std::int64_t b, std::int64_t e) { log.add(b, e); });
            REQUIRE(log.chunks.size() == 1);
            CHECK(log.chunks[0] == std::make_pair(std::int64_t{41}, std::int64_t{42}));
        }
    }
}

TEMPLATE_TEST_CASE("parallel_for: grain edge cases cover the range exactly once", "[parallel]", broadcast_pool,
                   work_stealing_pool, thread_team) {
    TestType pool(3);
    std::int64_t const n = 10007;
    for (std::int64_t grain : {i64_min, std::int64_t{-7}, std::int64_t{-1}, std::int64_t{0}, std::int64_t{1},
                               std::int64_t{2}, n - 1, n, n + 1, std::int64_t{1} << 40, i64_max}) {
        INFO("grain " << grain);
        coverage cov(-5000, -5000 + n);
        chunk_log log;
        pool.parallel_for(-5000, -5000 + n, grain, [&](std::int64_t b, std::int64_t e) {
            cov.visit(b, e);
            log.add(b, e);
        });
        CHECK(cov.exactly_once());
        CHECK(log.tiles(-5000, -5000 + n));
        if (grain > 0) {
            // Explicit grain is the minimum chunk size (the whole range when shorter).
            CHECK(log.smallest() >= std::min<std::uint64_t>(static_cast<std::uint64_t>(grain), n));
        }
        if (grain >= n) CHECK(log.chunks.size() == 1);
    }
}

TEMPLATE_TEST_CASE("parallel_for: every index exactly once over ranges, grains and thread counts", "[parallel]",
                   broadcast_pool, work_stealing_pool, thread_team) {
    for (std::size_t threads : {1, 2, 3, 8}) {
        TestType pool(threads);
        CHECK(pool.num_threads() == threads);
        for (std::int64_t n : {1, 2, 3, 5, 7, 8, 9, 63, 64, 65, 100, 1000, 4097, 65536}) {
            for (std::int64_t grain : {-3, 0, 1, 2, 3, 5, 16, 100, 5000}) {
                for (std::int64_t begin : {std::int64_t{0}, std::int64_t{-17}, std::int64_t{1} << 40}) {
                    INFO("threads " << threads << " n " << n << " grain " << grain << " begin " << begin);
                    coverage cov(begin, begin + n);
                    pool.parallel_for(begin, begin + n, grain,
                                      [&](std::int64_t b, std::int64_t e) { cov.visit(b, e); });
                    REQUIRE(cov.exactly_once());
                }
            }
        }
    }
}

TEMPLATE_TEST_CASE("parallel_for: chunk sizes follow the grain", "[parallel]", broadcast_pool, work_stealing_pool,
                   thread_team) {
    TestType pool(4);
    for (std::int64_t grain : {1, 3, 10, 333}) {
        chunk_log log;
        pool.parallel_for(0, 100000, grain, [&](std::int64_t b, std::int64_t e) { log.add(b, e); });
        CHECK(log.tiles(0, 100000));
        CHECK(log.smallest() >= static_cast<std::uint64_t>(grain));
        if constexpr (TestType::policy == scheduling::adaptive) {
            // Halving stops once a half would drop below grain.
            CHECK(log.largest() < 2 * static_cast<std::uint64_t>(grain));
        } else {
            // One block per participating thread.
            CHECK(log.chunks.size() <= pool.num_threads());
        }
    }
}

TEMPLATE_TEST_CASE("parallel_for: ranges near the ends of int64 do not overflow", "[parallel]", broadcast_pool,
                   work_stealing_pool, thread_team) {
    TestType pool(3);
    struct range {
        std::int64_t begin, end, grain;
    };
    for (auto [b, e, g] : {range{i64_min, i64_max, i64_max / 4}, range{i64_min, i64_max, i64_max},
                           range{i64_min, i64_min + 1000, 1}, range{i64_max - 1000, i64_max, 3},
                           range{i64_min, 0, std::int64_t{1} << 60}, range{-1, i64_max, std::int64_t{1} << 61}}) {
        INFO("[" << b << ", " << e << ") grain " << g);
        chunk_log log;
        pool.parallel_for(b, e, g, [&](std::int64_t cb, std::int64_t ce) { log.add(cb, ce); });
        CHECK(log.tiles(b, e));
        CHECK(log.smallest() >= static_cast<std::uint64_t>(g));
    }
}

// ------------------------------------------------------------ exceptions ----

TEMPLATE_TEST_CASE("parallel_for: the first exception is rethrown with its type", "[parallel]", broadcast_pool,
                   work_stealing_pool, thread_team) {
    for (std::size_t threads : {1, 2, 3, 8}) {
        TestType pool(threads);
        // One chunk throws: that exception, whichever thread ran it.
        for (int rep = 0; rep < 20; ++rep) {
            std::int64_t const target = (rep * 7919) % 1000;
            try {
                pool.parallel_for(0, 1000, 1, [&](std::int64_t b, std::int64_t e) {
                    if (b <= target && target < e) throw boom(static_cast<int>(target));
                });
                FAIL("no exception");
            } catch (boom const& x) {
                CHECK(x.id == target);
            }
        }
        // Other exception types pass through unchanged.
        CHECK_THROWS_AS(pool.parallel_for(0, 100, 1, [](std::int64_t, std::int64_t) { throw 42; }), int);
        CHECK_THROWS_WITH(
            pool.parallel_for(0, 100, 1, [](std::int64_t, std::int64_t) { throw std::logic_error("logic"); }), "logic");
        // The pool still works, in parallel.
        coverage cov(0, 5000);
        pool.parallel_for(0, 5000, 1, [&](std::int64_t b, std::int64_t e) { cov.visit(b, e); });
        CHECK(cov.exactly_once());
    }
}

TEMPLATE_TEST_CASE("parallel_for: chunks after an exception are not started", "[parallel]", broadcast_pool,
                   work_stealing_pool, thread_team) {
    for (std::size_t threads : {1, 2, 3, 8}) {
        TestType pool(threads);
        for (int rep = 0; rep < 20; ++rep) {
            // Every chunk throws, so each participant runs at most one chunk:
            // it stops after its own exception, and does not start one after
            // seeing another's.
            std::atomic<int> started{0};
            std::int64_t const n = threads == 1 ? 1 : 100000;
            CHECK_THROWS_AS(pool.parallel_for(0, n, 1,
                                              [&](std::int64_t b, std::int64_t) {
                                                  started.fetch_add(1);
                                                  throw boom(static_cast<int>(b));
                                              }),
                            boom);
            CHECK(started.load() >= 1);
            CHECK(started.load() <= static_cast<int>(threads));
        }
        // One early chunk throws and the rest sleep a little: far fewer than
        // all chunks run.
        std::atomic<int> started{0};
        CHECK_THROWS_AS(pool.parallel_for(0, 2000, 1,
                                          [&](std::int64_t b, std::int64_t) {
                                              started.fetch_add(1);
                                              if (b == 0) throw boom(0);
                                              std::this_thread::sleep_for(std::chrono::microseconds(200));
                                          }),
                        boom);
        CHECK(started.load() < 2000);
    }
}

TEMPLATE_TEST_CASE("parallel_for: exceptions on inline paths propagate", "[parallel]", broadcast_pool,
                   work_stealing_pool, thread_team) {
    TestType one(1);
    CHECK_THROWS_AS(one.parallel_for(0, 100, 1, [](std::int64_t, std::int64_t) { throw boom(1); }), boom);
    TestType pool(2);
    // A single chunk runs inline.
    CHECK_THROWS_AS(pool.parallel_for(0, 10, 100, [](std::int64_t, std::int64_t) { throw boom(2); }), boom);
    // A nested call runs inline; its exception reaches the outer call's caller.
    CHECK_THROWS_AS(pool.parallel_for(0, 4, 1,
                                      [&](std::int64_t, std::int64_t) {
                                          pool.parallel_for(0, 4, 1, [](std::int64_t, std::int64_t) { throw boom(3); });
                                      }),
                    boom);
    // The thread is no longer marked as inside a job: this call goes to the pool.
    CHECK_FALSE(detail::in_parallel_region);
    coverage cov(0, 1000);
    pool.parallel_for(0, 1000, 1, [&](std::int64_t b, std::int64_t e) { cov.visit(b, e); });
    CHECK(cov.exactly_once());
}

// ------------------------------------------------------------- nesting ----

TEMPLATE_TEST_CASE("parallel_for: nested calls run inline and are correct", "[parallel]", broadcast_pool,
                   work_stealing_pool, thread_team) {
    TestType pool(3);
    broadcast_pool other_b(2);
    work_stealing_pool other_w(2);
    std::int64_t const outer = 64;
    std::int64_t const inner = 50;
    coverage cov(0, outer * inner * 4);
    std::atomic<int> off_thread{0};
    pool.parallel_for(0, outer, 1, [&](std::int64_t b, std::int64_t e) {
        for (std::int64_t i = b; i < e; ++i) {
            auto const me = std::this_thread::get_id();
            auto visit = [&](std::int64_t part) {
                return [&, part, i](std::int64_t ib, std::int64_t ie) {
                    if (std::this_thread::get_id() != me) off_thread.fetch_add(1);
                    cov.visit((part * outer + i) * inner + ib, (part * outer + i) * inner + ie);
                };
            };
            pool.parallel_for(0, inner, 1, visit(0));
            other_b.parallel_for(0, inner, 1, visit(1));
            other_w.parallel_for(0, inner, 1, visit(2));
            parallel_for(0, inner, 1, visit(3));
        }
    });
    CHECK(cov.exactly_once());
    CHECK(off_thread.load() == 0);
}

// -------------------------------------------------------------- volume ----

TEMPLATE_TEST_CASE("parallel_for: 100000 back-to-back small jobs", "[parallel]", broadcast_pool, work_stealing_pool) {
    TestType pool(2);
    std::int64_t total = 0;
    std::atomic<std::int64_t> sum{0};
    for (int job = 0; job < 100000; ++job) {
        std::int64_t const n = 2 + job % 5;
        pool.parallel_for(job, job + n, 1, [&](std::int64_t b, std::int64_t e) {
            std::int64_t s = 0;
            for (std::int64_t i = b; i < e; ++i) s += i;
            sum.fetch_add(s, std::memory_order_relaxed);
        });
        total += n * job + n * (n - 1) / 2;
    }
    CHECK(sum.load() == total);
}

TEMPLATE_TEST_CASE("parallel_for: concurrent callers from several threads", "[parallel]", broadcast_pool,
                   work_stealing_pool, thread_team) {
    for (std::size_t threads : {1, 2, 3}) {
        TestType pool(threads);
        std::atomic<int> bad{0};
        std::vector<std::thread> callers;
        for (int c = 0; c < 4; ++c) {
            callers.emplace_back([&, c] {
                for (int job = 0; job < 500; ++job) {
                    std::int64_t const n = 1 + (job * 37 + c) % 300;
                    coverage cov(c * 1000, c * 1000 + n);
                    try {
                        pool.parallel_for(c * 1000, c * 1000 + n, job % 4, [&](std::int64_t b, std::int64_t e) {
                            cov.visit(b, e);
                            if (job % 50 == 7 && b == c * 1000) throw boom(c);
                        });
                        if (job % 50 == 7) bad.fetch_add(1);  // should have thrown
                    } catch (boom const& x) {
                        if (x.id != c || job % 50 != 7) bad.fetch_add(1);
                        continue;
                    }
                    if (!cov.exactly_once()) bad.fetch_add(1);
                }
            });
        }
        for (auto& t : callers) t.join();
        CHECK(bad.load() == 0);
    }
}

TEMPLATE_TEST_CASE("thread_pool: construction and destruction", "[parallel]", broadcast_pool, work_stealing_pool,
                   thread_team) {
    CHECK_THROWS_AS(TestType(0), std::invalid_argument);
    CHECK(TestType().num_threads() == hardware_threads());
    static_assert(!std::is_copy_constructible_v<TestType> && !std::is_copy_assignable_v<TestType>);
    // Created and destroyed quickly, idle or right after a job.
    for (int i = 0; i < 50; ++i) {
        TestType pool(1 + i % 4);
        if (i % 2 == 0) {
            std::atomic<int> calls{0};
            pool.parallel_for(0, 8, 1,
                              [&](std::int64_t b, std::int64_t e) { calls.fetch_add(static_cast<int>(e - b)); });
            CHECK(calls.load() == 8);
        }
    }
}

TEMPLATE_TEST_CASE("parallel_for: workers take part", "[parallel]", broadcast_pool, work_stealing_pool, thread_team) {
    // Chunks that wait for each other only finish if two threads run them.
    TestType pool(2);
    bool both = false;
    for (int attempt = 0; attempt < 50 && !both; ++attempt) {
        std::mutex m;
        std::set<std::thread::id> ids;
        pool.parallel_for(0, 2, 1, [&](std::int64_t, std::int64_t) {
            {
                std::lock_guard<std::mutex> lock(m);
                ids.insert(std::this_thread::get_id());
            }
            auto const until = std::chrono::steady_clock::now() + std::chrono::milliseconds(20);
            while (std::chrono::steady_clock::now() < until) {
                std::lock_guard<std::mutex> lock(m);
                if (ids.size() == 2) break;
            }
        });
        both = ids.size() == 2;
    }
    CHECK(both);
}

TEMPLATE_TEST_CASE("thread_pool: workers and caller that sleep at once", "[parallel]", broadcast_pool,
                   work_stealing_pool) {
    // No polling: every wait goes through park/unpark and the caller's sleep
    // on the gate, which the default 3 ms polling window rarely reaches.
    pool_options sleepy;
    sleepy.idle = spin_policy{std::chrono::nanoseconds(0), std::chrono::nanoseconds(0)};
    sleepy.join = sleepy.idle;
    for (std::size_t threads : {2, 3, 8}) {
        TestType pool(threads, sleepy);
        for (int job = 0; job < 300; ++job) {
            std::int64_t const n = 1 + (job * 131) % 2000;
            coverage cov(0, n);
            pool.parallel_for(0, n, 1 + job % 7, [&](std::int64_t b, std::int64_t e) { cov.visit(b, e); });
            REQUIRE(cov.exactly_once());
        }
        // Chunks long enough that the caller goes to sleep waiting for a
        // worker, which must wake it when it leaves.
        for (int job = 0; job < 5; ++job) {
            std::mutex m;
            std::set<std::thread::id> ids;
            pool.parallel_for(0, static_cast<std::int64_t>(threads), 1, [&](std::int64_t, std::int64_t) {
                {
                    std::lock_guard<std::mutex> lock(m);
                    ids.insert(std::this_thread::get_id());
                }
                std::this_thread::sleep_for(std::chrono::milliseconds(3));
            });
            CHECK(ids.size() >= 1);
        }
    }
}

// --------------------------------------------------------- grain model ----

TEST_CASE("plan_chunks: the grain model", "[parallel]") {
    using s = scheduling;
    // Nothing to split, or one thread.
    CHECK(plan_chunks(0, {}, 8, s::adaptive).threads == 1);
    CHECK(plan_chunks(1, {}, 8, s::adaptive).threads == 1);
    CHECK(plan_chunks(1000000, {}, 1, s::adaptive).threads == 1);
    // Explicit grain: at least one grain per thread.
    CHECK(plan_chunks(100, {10, 0}, 4, s::adaptive).threads == 4);
    CHECK(plan_chunks(100, {10, 0}, 4, s::adaptive).grain == 10);
    CHECK(plan_chunks(100, {40, 0}, 4, s::adaptive).threads == 2);
    CHECK(plan_chunks(100, {60, 0}, 4, s::uniform).threads == 1);
    CHECK(plan_chunks(100, {1000, 0}, 4, s::uniform).threads == 1);
    CHECK(plan_chunks(2, {1, 0}, 2, s::uniform).threads == 2);
    // Automatic: small work runs inline, large work uses every thread.
    CHECK(plan_chunks(1000, {0, 1.0}, 8, s::adaptive).threads == 1);      // 1 us
    CHECK(plan_chunks(9000, {0, 1.0}, 8, s::adaptive).threads == 1);      // 9 us
    CHECK(plan_chunks(10000, {0, 1.0}, 8, s::adaptive).threads == 2);     // 10 us
    CHECK(plan_chunks(1 << 20, {0, 1.0}, 8, s::adaptive).threads == 8);   // 1 ms
    CHECK(plan_chunks(100, {0, 1e6}, 8, s::adaptive).threads == 8);       // 100 ms, 100 elements
    CHECK(plan_chunks(100, {0, 1e6}, 8, s::adaptive).grain == 2);         // ~8 chunks per thread
    CHECK(plan_chunks(7, {0, 1e9}, 8, s::adaptive).threads == 7);         // never more threads than elements
    CHECK(plan_chunks(1 << 20, {0, 1.0}, 8, s::adaptive).grain >= 2000);  // chunks of >= 2 us
    CHECK(plan_chunks(1 << 20, {0, 1.0}, 8, s::uniform).grain == (1 << 20) / 8);
    // Unknown cost (0, negative, NaN) assumes 100 ns per element.
    for (double unknown : {0.0, -5.0, std::nan("")}) {
        CHECK(plan_chunks(99, {0, unknown}, 8, s::adaptive).threads == 1);  // 9.9 us
        CHECK(plan_chunks(100, {0, unknown}, 8, s::adaptive).threads == 2);
    }
    // Infinite cost and the largest ranges stay finite.
    auto const inf = plan_chunks(1000, {0, std::numeric_limits<double>::infinity()}, 8, s::adaptive);
    CHECK(inf.threads == 8);
    CHECK(inf.grain >= 1);
    auto const big = plan_chunks(std::numeric_limits<std::uint64_t>::max(), {}, 8, s::adaptive);
    CHECK(big.threads == 8);
    CHECK(big.grain >= 1);
}

TEMPLATE_TEST_CASE("parallel_for: a cost hint sends small work inline", "[parallel]", broadcast_pool,
                   work_stealing_pool, thread_team) {
    TestType pool(4);
    auto const me = std::this_thread::get_id();
    chunk_log log;
    std::atomic<int> elsewhere{0};
    pool.parallel_for(0, 1000, parallel_hint{.cost_per_element_ns = 1.0}, [&](std::int64_t b, std::int64_t e) {
        log.add(b, e);
        if (std::this_thread::get_id() != me) elsewhere.fetch_add(1);
    });
    CHECK(log.chunks.size() == 1);
    CHECK(elsewhere.load() == 0);
    coverage cov(0, 100000);
    pool.parallel_for(0, 100000, parallel_hint{.cost_per_element_ns = 50.0},
                      [&](std::int64_t b, std::int64_t e) { cov.visit(b, e); });
    CHECK(cov.exactly_once());
}

// ------------------------------------------------------------ the deque ----

TEST_CASE("chase_lev_deque: owner LIFO, thieves FIFO, bounded", "[parallel]") {
    chase_lev_deque<int, 4> d;
    CHECK(d.empty());
    CHECK_FALSE(d.pop());
    CHECK_FALSE(d.steal());
    CHECK(d.push(1));
    CHECK(d.push(2));
    CHECK(d.push(3));
    CHECK(d.push(4));
    CHECK_FALSE(d.push(5));  // full
    CHECK(d.steal() == 1);
    CHECK(d.pop() == 4);
    CHECK(d.push(6));
    CHECK(d.steal() == 2);
    CHECK(d.pop() == 6);
    CHECK(d.pop() == 3);
    CHECK_FALSE(d.pop());
    CHECK(d.empty());
    // Wrapping around many times.
    for (int i = 0; i < 1000; ++i) {
        CHECK(d.push(i));
        CHECK(d.push(i + 1));
        CHECK(d.steal() == i);
        CHECK(d.pop() == i + 1);
    }
}

TEST_CASE("chase_lev_deque: every item is taken exactly once under contention", "[parallel]") {
    struct item {
        std::int64_t a, b;  // two words: torn reads would show as a != -b
    };
    chase_lev_deque<item, 64> d;
    constexpr std::int64_t items = 200000;
    std::vector<std::atomic<std::uint8_t>> taken(items);
    std::atomic<bool> done{false};
    std::atomic<int> torn{0};
    auto take = [&](item const& it) {
        if (it.a != -it.b || it.a < 0 || it.a >= items) {
            torn.fetch_add(1);
            return;
        }
        taken[static_cast<std::size_t>(it.a)].fetch_add(1);
    };
    std::vector<std::thread> thieves;
    for (int t = 0; t < 3; ++t) {
        thieves.emplace_back([&] {
            while (!done.load()) {
                if (auto it = d.steal()) take(*it);
            }
            while (auto it = d.steal()) take(*it);
        });
    }
    std::int64_t next = 0;
    while (next < items) {
        for (int k = 0; k < 3 && next < items; ++k) {
            if (d.push(item{next, -next})) ++next;
        }
        if (next % 5 == 0) {
            if (auto it = d.pop()) take(*it);
        }
    }
    while (auto it = d.pop()) take(*it);
    done.store(true);
    for (auto& t : thieves) t.join();
    CHECK(torn.load() == 0);
    CHECK(std::all_of(taken.begin(), taken.end(), [](auto const& x) { return x.load() == 1; }));
}

// ------------------------------------------------------ the default pool ----

TEST_CASE("parse_num_threads: SWITCHYARD_NUM_THREADS values", "[parallel]") {
    CHECK(parse_num_threads(nullptr) == 0);
    CHECK(parse_num_threads("") == 0);
    CHECK(parse_num_threads("1") == 1);
    CHECK(parse_num_threads("8") == 8);
    CHECK(parse_num_threads("0016") == 16);
    CHECK(parse_num_threads("4096") == max_env_threads);
    for (char const* bad : {"0", "-1", "+4", " 4", "4 ", "4x", "abc", "2.5", "4097", "99999999999999999999999"}) {
        INFO(bad);
        try {
            parse_num_threads(bad);
            FAIL("accepted");
        } catch (std::invalid_argument const& e) {
            std::string const what = e.what();
            CHECK(what.find("SWITCHYARD_NUM_THREADS") != std::string::npos);
            CHECK(what.find(std::string("\"") + bad + "\"") != std::string::npos);
        }
    }
}

#if defined(__unix__)
TEST_CASE("threads_from_environment: reads SWITCHYARD_NUM_THREADS", "[parallel]") {
    char const* saved = std::getenv("SWITCHYARD_NUM_THREADS");
    std::string const original = saved ? saved : "";
    ::setenv("SWITCHYARD_NUM_THREADS", "3", 1);
    CHECK(threads_from_environment() == 3);
    ::setenv("SWITCHYARD_NUM_THREADS", "", 1);
    CHECK(threads_from_environment() == hardware_threads());
    ::setenv("SWITCHYARD_NUM_THREADS", "three", 1);
    CHECK_THROWS_WITH(threads_from_environment(),
                      Catch::Contains("SWITCHYARD_NUM_THREADS") && Catch::Contains("\"three\""));
    ::unsetenv("SWITCHYARD_NUM_THREADS");
    CHECK(threads_from_environment() == hardware_threads());
    if (saved) ::setenv("SWITCHYARD_NUM_THREADS", original.c_str(), 1);
}
#endif

// ---------------------------------------------------------- team pools ----

namespace {
// A team that runs its members one after another on the caller, as a
// runtime does when it is already inside one of its parallel regions.
struct one_after_another {
    std::atomic<int> jobs{0};
    static void run(void* self, detail::job_base& job, std::size_t n) noexcept {
        static_cast<one_after_another*>(self)->jobs.fetch_add(1);
        for (std::size_t slot = 0; slot < n; ++slot) job.work(job, slot);
    }
};
}  // namespace

TEST_CASE("team_pool: members run one after another still cover the range", "[parallel]") {
    one_after_another runtime;
    team_pool pool(4, &one_after_another::run, &runtime);
    for (std::int64_t n : {1, 2, 7, 1000, 100003}) {
        for (std::int64_t grain : {0, 1, 5, 64}) {
            chunk_log log;
            pool.parallel_for(-3, n - 3, grain, [&](std::int64_t b, std::int64_t e) { log.add(b, e); });
            CHECK(log.tiles(-3, n - 3));
        }
    }
    CHECK(runtime.jobs.load() > 0);
    CHECK_FALSE(detail::in_parallel_region);
}

TEST_CASE("team_scope: parallel_for runs on the thread's team while a scope lasts", "[parallel]") {
    one_after_another runtime, inner_runtime;
    team_pool team(2, &one_after_another::run, &runtime);
    team_pool inner(3, &one_after_another::run, &inner_runtime);
    auto const run_some = [] {
        coverage cov(0, 50000);
        parallel_for(0, 50000, 10, [&](std::int64_t b, std::int64_t e) { cov.visit(b, e); });
        return cov.exactly_once();
    };
    CHECK(current_team() == nullptr);
    {
        team_scope scope(team);
        CHECK(current_team() == &team);
        CHECK(run_some());
        CHECK(runtime.jobs.load() == 1);
        {
            team_scope nested(inner);
            CHECK(current_team() == &inner);
            CHECK(run_some());
            CHECK(inner_runtime.jobs.load() == 1);
        }
        CHECK(current_team() == &team);
        // Other threads keep the default pool.
        std::thread([] { CHECK(current_team() == nullptr); }).join();
    }
    CHECK(current_team() == nullptr);
    CHECK(run_some());
    CHECK(runtime.jobs.load() == 1);
}

TEST_CASE("team_pool: zero threads is refused", "[parallel]") {
    CHECK_THROWS_WITH(team_pool(0, &one_after_another::run),
                      "switchyard::team_pool: the number of threads must be at least 1");
}

TEST_CASE("default_pool: one work-stealing pool sized from the environment", "[parallel]") {
    static_assert(std::is_same_v<default_thread_pool, work_stealing_pool>);
    default_thread_pool& pool = default_pool();
    CHECK(&pool == &default_pool());
    CHECK(pool.num_threads() == threads_from_environment());
    CHECK(pool.num_threads() >= 1);
    coverage cov(0, 30000);
    parallel_for(0, 30000, 0, [&](std::int64_t b, std::int64_t e) { cov.visit(b, e); });
    CHECK(cov.exactly_once());
    coverage cov2(-10, 10);
    parallel_for(-10, 10, parallel_hint{.grain = 3}, [&](std::int64_t b, std::int64_t e) { cov2.visit(b, e); });
    CHECK(cov2.exactly_once());
    int calls = 0;
    parallel_for(3, 3, 1, [&](std::int64_t, std::int64_t) { ++calls; });
    CHECK(calls == 0);
}

// Issue 18: work_stealing_pool(2^31) threw std::bad_alloc; a count beyond
// max_pool_threads is a clear error naming the count and the limit.
TEMPLATE_TEST_CASE("a pool refuses more threads than max_pool_threads", "[parallel]", broadcast_pool,
                   work_stealing_pool, thread_team) {
    CHECK_THROWS_WITH(TestType(std::size_t{1} << 31),
                      "thread_pool: 2147483648 threads requested; a pool takes at most 4096 (max_pool_threads)");
    CHECK_THROWS_AS(TestType(static_cast<std::size_t>(-1)), std::invalid_argument);
    TestType ok(2);
    CHECK(ok.num_threads() == 2);
}
