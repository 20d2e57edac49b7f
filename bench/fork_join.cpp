// Fork-join overhead of switchyard's thread pools against OpenMP, 2 threads.
//
// Each variant runs an empty-bodied loop of 2 iterations split over 2
// threads (the caller and one worker):
//
//   work_stealing   default_thread_pool(2).parallel_for(0, 2, 1, body)
//   broadcast       broadcast_pool(2).parallel_for(0, 2, 1, body)
//   openmp          #pragma omp parallel for num_threads(2) schedule(static)
//                   for (k = 0; k < 2; ++k) body(k)
//
// in these modes:
//
//   hot        back to back                                   (the metric)
//   idle       after 2 ms of sleep, timed by hand without it  (the metric)
//   idle20ms   after 20 ms of sleep: every runtime's workers are asleep
//   hot_work   back to back, each iteration busy for 2 us: 2 us plus the
//              overhead when both threads really run an iteration each
//
// Fairness: OpenMP runs with its defaults (no OMP_WAIT_POLICY or
// GOMP_SPINCOUNT). Each benchmark starts by sleeping 20 ms, longer than our
// workers' polling window (3 ms) and libgomp's spin (about 3 ms here), so no
// runtime's polling workers take a core from another's measurement, and then
// runs one rendezvous job (both iterations wait until both threads are in)
// so the measured runtime's worker is awake when timing starts. The OpenMP
// benchmarks are registered last: libomp (clang) spins for 200 ms after a
// region, longer than the 20 ms pause. Run without
// --benchmark_enable_random_interleaving to keep that order.
#include <switchyard/parallel.h>

#include <benchmark/benchmark.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <thread>

#if defined(_OPENMP)
#include <omp.h>
#endif

namespace {

using namespace switchyard;
using clock_type = std::chrono::steady_clock;

constexpr int threads = 2;
constexpr std::int64_t iterations = 2;

inline void body(std::int64_t i) { benchmark::DoNotOptimize(i); }

void busy_for(std::chrono::nanoseconds d) {
    auto const until = clock_type::now() + d;
    while (clock_type::now() < until) {
    }
}

// Both iterations wait (up to 100 ms) until both have started.
struct rendezvous {
    std::atomic<int> arrived{0};
    void operator()() {
        arrived.fetch_add(1);
        auto const until = clock_type::now() + std::chrono::milliseconds(100);
        while (arrived.load() < threads && clock_type::now() < until) {
        }
    }
};

void settle() { std::this_thread::sleep_for(std::chrono::milliseconds(20)); }

// ------------------------------------------------------------ runtimes ----

template <class Pool>
struct pool_runtime {
    static Pool& pool() {
        static Pool p(threads);
        return p;
    }
    static void fork_join() {
        pool().parallel_for(0, iterations, 1, [](std::int64_t b, std::int64_t e) {
            for (std::int64_t i = b; i < e; ++i) body(i);
        });
    }
    static void fork_join_work() {
        pool().parallel_for(0, iterations, 1, [](std::int64_t b, std::int64_t e) {
            for (std::int64_t i = b; i < e; ++i) busy_for(std::chrono::microseconds(2));
        });
    }
    static void wake() {
        rendezvous r;
        pool().parallel_for(0, iterations, 1, [&](std::int64_t, std::int64_t) { r(); });
    }
};

#if defined(_OPENMP)
struct openmp_runtime {
    static void fork_join() {
#pragma omp parallel for num_threads(threads) schedule(static)
        for (std::int64_t i = 0; i < iterations; ++i) body(i);
    }
    static void fork_join_work() {
#pragma omp parallel for num_threads(threads) schedule(static)
        for (std::int64_t i = 0; i < iterations; ++i) busy_for(std::chrono::microseconds(2));
    }
    static void wake() {
        rendezvous r;
#pragma omp parallel for num_threads(threads) schedule(static)
        for (std::int64_t i = 0; i < iterations; ++i) r();
    }
};
#endif

// ---------------------------------------------------------------- modes ----

template <class R>
void hot(benchmark::State& state) {
    settle();
    R::wake();
    for (auto _ : state) R::fork_join();
}

template <class R>
void hot_work(benchmark::State& state) {
    settle();
    R::wake();
    for (auto _ : state) R::fork_join_work();
}

template <class R, int SleepMs>
void idle(benchmark::State& state) {
    settle();
    R::wake();
    for (auto _ : state) {
        std::this_thread::sleep_for(std::chrono::milliseconds(SleepMs));
        auto const start = clock_type::now();
        R::fork_join();
        auto const stop = clock_type::now();
        state.SetIterationTime(std::chrono::duration<double>(stop - start).count());
    }
}

template <class R>
void register_runtime(std::string const& name) {
    benchmark::RegisterBenchmark(("fork_join/hot/" + name).c_str(), hot<R>)->UseRealTime();
    benchmark::RegisterBenchmark(("fork_join/idle/" + name).c_str(), idle<R, 2>)->UseManualTime()->Iterations(400);
    benchmark::RegisterBenchmark(("fork_join/idle20ms/" + name).c_str(), idle<R, 20>)->UseManualTime()->Iterations(40);
    benchmark::RegisterBenchmark(("fork_join/hot_work/" + name).c_str(), hot_work<R>)->UseRealTime();
}

}  // namespace

int main(int argc, char** argv) {
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
    register_runtime<pool_runtime<default_thread_pool>>("work_stealing");
    register_runtime<pool_runtime<broadcast_pool>>("broadcast");
#if defined(_OPENMP)
    register_runtime<openmp_runtime>("openmp");
    benchmark::AddCustomContext("openmp", std::to_string(_OPENMP));
#endif
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}
