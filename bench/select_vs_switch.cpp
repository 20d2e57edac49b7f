// select+invoke on a dispatch_table against a hand-written nested switch.
//
// Space: {cpu, cuda, webgpu} x {f16, bf16, f32, f64} x {strided, contiguous},
// 24 points, all covered. Both dispatchers call the very same kernel<Tag>
// instantiations (tags are canonical, so tag<cpu, f16, strided> written in
// the switch is the type the table instantiates), and the kernels are
// noinline, as real kernels are never inlined into a dispatcher. What differs
// is only the mechanism that maps runtime coordinates to a kernel:
//
//   table:  three axis lookups, one row-major position, one pointer load, an
//           indirect call (through the table's call_point thunk);
//   switch: switch(device) { switch(dtype) { switch(contiguity) } }, a direct
//           call. A miss throws in both.
//
// BM_*_random/N walks a fixed array of N random covered coordinates (from a
// fixed seed), so branches and the indirect call are unpredictable; BM_*_repeated uses one
// coordinate every iteration, hidden from the optimizer, so they predict
// perfectly. Each iteration of every benchmark loads one coordinate,
// dispatches, calls the kernel once and adds its result to an accumulator.
#include <switchyard/core.h>

#include <benchmark/benchmark.h>

#include <cstddef>
#include <cstdio>
#include <exception>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using namespace switchyard;

using device_axis = axis<device_kind::cpu, device_kind::cuda, device_kind::webgpu>;
using space = axes<device_axis, float_dtype_axis, full_contiguity_axis>;
static_assert(space::size == 24);

// A number that identifies the point, so every instantiation differs.
template <typename Tag>
constexpr int point_code() {
    return 1 + 16 * static_cast<int>(tag_get<device_kind>(Tag{})) + 2 * static_cast<int>(tag_get<dtype>(Tag{})) +
           static_cast<int>(tag_get<contiguity>(Tag{}));
}

template <typename Tag>
[[gnu::noinline]] int kernel(Tag, int x) {
    return x * point_code<Tag>() + 1;
}

struct bench_op {
    template <typename Tag>
    static int op(Tag t, int x) {
        return kernel(t, x);
    }
    using space = ::space;
    using subspaces = coverage<space>;
    using dispatcher = dispatch_table<space, int(int)>;
};

[[noreturn, gnu::noinline, gnu::cold]] void no_kernel(device_kind d, dtype t, contiguity c) {
    throw std::runtime_error("no kernel for " + coordinate_name(d) + ", " + coordinate_name(t) + ", " +
                             coordinate_name(c));
}

// The hand-written dispatcher, as one would write it without a table.
inline int switch_dispatch(device_kind d, dtype t, contiguity c, int x) {
    using enum device_kind;
    using enum dtype;
    using enum contiguity;
    switch (d) {
        case cpu:
            switch (t) {
                case f16:
                    switch (c) {
                        case strided: return kernel(tag<cpu, f16, strided>{}, x);
                        case contiguous: return kernel(tag<cpu, f16, contiguous>{}, x);
                        default: break;
                    }
                    break;
                case bf16:
                    switch (c) {
                        case strided: return kernel(tag<cpu, bf16, strided>{}, x);
                        case contiguous: return kernel(tag<cpu, bf16, contiguous>{}, x);
                        default: break;
                    }
                    break;
                case f32:
                    switch (c) {
                        case strided: return kernel(tag<cpu, f32, strided>{}, x);
                        case contiguous: return kernel(tag<cpu, f32, contiguous>{}, x);
                        default: break;
                    }
                    break;
                case f64:
                    switch (c) {
                        case strided: return kernel(tag<cpu, f64, strided>{}, x);
                        case contiguous: return kernel(tag<cpu, f64, contiguous>{}, x);
                        default: break;
                    }
                    break;
                default: break;
            }
            break;
        case cuda:
            switch (t) {
                case f16:
                    switch (c) {
                        case strided: return kernel(tag<cuda, f16, strided>{}, x);
                        case contiguous: return kernel(tag<cuda, f16, contiguous>{}, x);
                        default: break;
                    }
                    break;
                case bf16:
                    switch (c) {
                        case strided: return kernel(tag<cuda, bf16, strided>{}, x);
                        case contiguous: return kernel(tag<cuda, bf16, contiguous>{}, x);
                        default: break;
                    }
                    break;
                case f32:
                    switch (c) {
                        case strided: return kernel(tag<cuda, f32, strided>{}, x);
                        case contiguous: return kernel(tag<cuda, f32, contiguous>{}, x);
                        default: break;
                    }
                    break;
                case f64:
                    switch (c) {
                        case strided: return kernel(tag<cuda, f64, strided>{}, x);
                        case contiguous: return kernel(tag<cuda, f64, contiguous>{}, x);
                        default: break;
                    }
                    break;
                default: break;
            }
            break;
        case webgpu:
            switch (t) {
                case f16:
                    switch (c) {
                        case strided: return kernel(tag<webgpu, f16, strided>{}, x);
                        case contiguous: return kernel(tag<webgpu, f16, contiguous>{}, x);
                        default: break;
                    }
                    break;
                case bf16:
                    switch (c) {
                        case strided: return kernel(tag<webgpu, bf16, strided>{}, x);
                        case contiguous: return kernel(tag<webgpu, bf16, contiguous>{}, x);
                        default: break;
                    }
                    break;
                case f32:
                    switch (c) {
                        case strided: return kernel(tag<webgpu, f32, strided>{}, x);
                        case contiguous: return kernel(tag<webgpu, f32, contiguous>{}, x);
                        default: break;
                    }
                    break;
                case f64:
                    switch (c) {
                        case strided: return kernel(tag<webgpu, f64, strided>{}, x);
                        case contiguous: return kernel(tag<webgpu, f64, contiguous>{}, x);
                        default: break;
                    }
                    break;
                default: break;
            }
            break;
        default: break;
    }
    no_kernel(d, t, c);
}

using table_type = bench_op::dispatcher;

table_type const& the_table() {
    static auto const table = dispatch_table_from_op<bench_op>("select_vs_switch");
    return table;
}

struct coordinate {
    device_kind device;
    dtype type;
    contiguity layout;
};

// `count` random covered coordinates from a fixed seed (the first 4096 are
// the same for every count).
std::vector<coordinate> make_random_coordinates(std::size_t count) {
    std::vector<coordinate> out(count);
    std::mt19937 rng(20261121u);
    std::uniform_int_distribution<std::size_t> device(0, device_axis::size - 1);
    std::uniform_int_distribution<std::size_t> type(0, float_dtype_axis::size - 1);
    std::uniform_int_distribution<std::size_t> layout(0, full_contiguity_axis::size - 1);
    for (auto& c : out)
        c = {device_axis::values[device(rng)], float_dtype_axis::values[type(rng)],
             full_contiguity_axis::values[layout(rng)]};
    return out;
}

// The two dispatchers behind one interface, so every benchmark loop is the
// same code around a different call. The table is a reference taken before
// the loop, as a caller holding a static table would have it.
struct by_table {
    table_type const& table;
    int operator()(device_kind d, dtype t, contiguity c, int x) const { return table.select(dispatch_set{d, t, c})(x); }
};
struct by_switch {
    int operator()(device_kind d, dtype t, contiguity c, int x) const { return switch_dispatch(d, t, c, x); }
};

// The argument is the length of the coordinate array, a power of two. 4096
// is the specified size; at that length this CPU's conditional-branch
// predictor learns the whole repeating sequence (the switch's ~5 branches
// per call) while the indirect-branch predictor cannot, so the 65536 run,
// which no predictor learns, is reported alongside it.
template <typename Dispatch>
void random_coordinates_loop(benchmark::State& state, Dispatch dispatch) {
    auto const count = static_cast<std::size_t>(state.range(0));
    if (count == 0 || (count & (count - 1)) != 0) {
        state.SkipWithError("the coordinate count must be a power of two");
        return;
    }
    auto const all = make_random_coordinates(count);  // before timing starts
    coordinate const* coordinates = all.data();
    std::size_t const mask = count - 1;
    std::size_t i = 0;
    int sum = 0;
    for (auto _ : state) {
        coordinate const c = coordinates[i & mask];
        sum += dispatch(c.device, c.type, c.layout, static_cast<int>(i));
        benchmark::DoNotOptimize(sum);
        ++i;
    }
    state.SetItemsProcessed(state.iterations());
}

template <typename Dispatch>
void repeated_coordinate_loop(benchmark::State& state, Dispatch dispatch) {
    device_kind d = device_kind::cuda;
    dtype t = dtype::bf16;
    contiguity c = contiguity::contiguous;
    std::size_t i = 0;
    int sum = 0;
    for (auto _ : state) {
        // Opaque every iteration: the dispatch cannot be hoisted.
        benchmark::DoNotOptimize(d);
        benchmark::DoNotOptimize(t);
        benchmark::DoNotOptimize(c);
        sum += dispatch(d, t, c, static_cast<int>(i));
        benchmark::DoNotOptimize(sum);
        ++i;
    }
    state.SetItemsProcessed(state.iterations());
}

// The table is built on first use, before any timing loop starts.
void BM_table_random(benchmark::State& state) { random_coordinates_loop(state, by_table{the_table()}); }
void BM_switch_random(benchmark::State& state) { random_coordinates_loop(state, by_switch{}); }
void BM_table_repeated(benchmark::State& state) { repeated_coordinate_loop(state, by_table{the_table()}); }
void BM_switch_repeated(benchmark::State& state) { repeated_coordinate_loop(state, by_switch{}); }

BENCHMARK(BM_table_random)->Arg(4096)->Arg(65536);
BENCHMARK(BM_switch_random)->Arg(4096)->Arg(65536);
BENCHMARK(BM_table_repeated);
BENCHMARK(BM_switch_repeated);

// Both dispatchers must reach the same kernel for every point and reject the
// same misses; a benchmark of two programs that disagree measures nothing.
bool dispatchers_agree() {
    auto const& table = the_table();
    if (table.covered_count() != space::size) return false;
    for (auto d : full_device_axis::values)
        for (auto t : full_dtype_axis::values)
            for (auto c : full_contiguity_axis::values) {
                bool const inside = device_axis::contains(d) && float_dtype_axis::contains(t);
                int from_table = 0, from_switch = 0;
                bool table_threw = false, switch_threw = false;
                try {
                    from_table = table.select(dispatch_set{d, t, c})(7);
                } catch (dispatch_lookup_error const&) {
                    table_threw = true;
                }
                try {
                    from_switch = switch_dispatch(d, t, c, 7);
                } catch (std::runtime_error const&) {
                    switch_threw = true;
                }
                if (table_threw != !inside || switch_threw != !inside || from_table != from_switch) {
                    std::fprintf(stderr, "select_vs_switch: dispatchers disagree at %s, %s, %s\n",
                                 coordinate_name(d).c_str(), coordinate_name(t).c_str(), coordinate_name(c).c_str());
                    return false;
                }
            }
    return true;
}

}  // namespace

int main(int argc, char** argv) {
    if (!dispatchers_agree()) return 2;
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}
