// Experiment behind docs/benchmarks.md's "CPU fused f16/bf16 rows": transform
// over f16 and bf16 [R, 1024] (R = 256, in cache, and 4096) of x * g with g
// per row ([R, 1]) and per column ([1024]), and softplus(x), on the default
// pool (SWITCHYARD_NUM_THREADS sets its size). Medians of 40 calls, in us.
// Build it against two trees (say, a commit and its parent: `git archive
// HEAD~1 include | tar -x -C /tmp/old`) and run them alternately:
//   g++ -std=c++20 -O3 -pthread -Iinclude bench/experiments/fused_rows.cpp -o /tmp/rows
//   SWITCHYARD_NUM_THREADS=1 /tmp/rows
#include <switchyard/math.h>
#include <switchyard/transform.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

namespace sy = switchyard;

namespace {

template <typename F>
double median_us(F const& f, int calls = 40) {
    using clock = std::chrono::steady_clock;
    std::vector<double> times;
    f();
    for (int i = 0; i < calls; ++i) {
        auto const start = clock::now();
        f();
        times.push_back(std::chrono::duration<double, std::micro>(clock::now() - start).count());
    }
    std::sort(times.begin(), times.end());
    return times[times.size() / 2];
}

template <sy::dtype D>
void run(char const* name) {
    using S = sy::dtype_storage_t<D>;
    using Tag = sy::tag<sy::device_kind::cpu, D>;
    auto const cpu = sy::device_kind::cpu;
    std::int64_t const cols = 1024;
    for (std::int64_t rows : {256, 4096}) {
        std::vector<S> x(static_cast<std::size_t>(rows * cols)), per_row(static_cast<std::size_t>(rows)),
            per_column(static_cast<std::size_t>(cols)), out(x.size());
        for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<S>(static_cast<float>(i % 97) * 0.1f - 5.0f);
        for (std::size_t i = 0; i < per_row.size(); ++i) per_row[i] = static_cast<S>(static_cast<float>(i % 7) * 0.3f);
        for (std::size_t i = 0; i < per_column.size(); ++i)
            per_column[i] = static_cast<S>(static_cast<float>(i % 5) * 0.3f);
        auto const xr = sy::strided_ref::contiguous(x.data(), D, cpu, {rows, cols}, "x");
        auto const rr = sy::strided_ref::contiguous(per_row.data(), D, cpu, {rows, 1}, "g");
        auto const cr = sy::strided_ref::contiguous(per_column.data(), D, cpu, {cols}, "g");
        auto const o = sy::strided_ref::contiguous(out.data(), D, cpu, {rows, cols}, "out");
        auto const mul = [](float a, float g) { return a * g; };
        double const row = median_us([&] { sy::transform(Tag{}, o, mul, xr, rr); });
        double const column = median_us([&] { sy::transform(Tag{}, o, mul, xr, cr); });
        double const softplus = median_us([&] {
            sy::transform(
                Tag{}, o, [](float a) { return sy::softplus(a); }, xr);
        });
        std::printf("%s [%lld, 1024]: x * g per row %.1f, per column %.1f, softplus %.1f us\n", name,
                    static_cast<long long>(rows), row, column, softplus);
    }
}

}  // namespace

int main() {
    for (int round = 0; round < 3; ++round) {
        run<sy::dtype::f16>("f16");
        run<sy::dtype::bf16>("bf16");
    }
}
