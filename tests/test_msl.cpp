// Metal without a Mac. The MSL emitter (shader/msl.h): each kernel is traced
// for a Metal tag over host buffers, emitted as MSL, compiled by clang as C++
// against the stand-in Metal standard library in tests/metal/, loaded with
// dlopen and run once per thread position of the grid on the CPU; its
// buffers are then compared with the same C++ kernel run by the CPU; the
// golden MSL of the torch example's softplus and the emitter's errors. Then
// the library's Metal path end to end (for_each, transform, lazy chains,
// metal_device's buffers, batching and errors) over the stand-in backend
// (tests/metal/standin_backend.h), and the error a metal_device gives where
// Metal is not available. Needs SWITCHYARD_MSL_TEST_COMPILER (clang++, set
// by CMake).
#include <catch2/catch.hpp>

#include <switchyard/shader/msl.h>
#include <switchyard/switchyard.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "golden.h"
#include "lazy_chains.h"
#include "metal/standin_backend.h"
#include "torch/softplus_math.h"

namespace sy = switchyard;
using sy::contiguity;
using sy::device_kind;
using sy::dtype;

namespace {

// Traces kernel(Tag, i) for Metal, emits it, compiles it under the stand-in
// and runs it over `count` indices (the buffers are the views' host memory).
template <typename Tag, typename F>
std::string run_on_msl(std::int64_t count, F const& kernel, std::uint32_t lanes = 1, std::string const& flags = "") {
    constexpr std::int64_t placeholder = 0x5EED123456789ABBll;
    sy::shader::trace t("metal", placeholder, true);
    {
        sy::shader::trace_scope const scope(t);
        kernel(Tag{}, placeholder);
    }
    if (lanes == 4) REQUIRE(sy::shader::vectorizable(t));
    sy::shader::shader_program program = sy::shader::emit_msl(t, lanes);
    auto const threads = static_cast<std::uint32_t>(count / lanes);
    program.uniforms[0] = threads;
    std::vector<void*> buffers;
    for (std::uint32_t k : program.bindings) buffers.push_back(const_cast<void*>(t.bindings()[k].buffer));
    standin_metal::compiled_kernel const compiled(program.text, "sy_kernel", flags);
    program.uniforms.resize((program.uniforms.size() + 3) / 4 * 4);  // whole uint4s, as a Metal device pads them
    compiled.run(buffers, program.uniforms.data(), threads + 300);   // a partial last threadgroup and more
    return program.text;
}

template <auto D>
using metal_tag = sy::tag<device_kind::metal, D, contiguity::strided>;
template <auto D>
using cpu_tag = sy::tag<device_kind::cpu, D, contiguity::strided>;

double ulps(float got, float want) {
    if (std::isnan(want)) return std::isnan(got) ? 0 : INFINITY;
    if (got == want) return 0;
    double const ulp = std::nextafter(std::fabs(want), INFINITY) - std::fabs(want);
    return std::fabs(static_cast<double>(got) - want) / ulp;
}

// y = f(x) over x on Metal (through MSL) and on the CPU; the worst ulp distance.
template <typename F>
double worst_ulps(std::vector<float> const& x, F const& f, std::uint32_t lanes = 1, std::string const& flags = "") {
    auto const n = static_cast<std::int64_t>(x.size());
    std::vector<float> in = x, on_metal(x.size(), -7.0f), on_cpu(x.size());
    auto run = [&](auto tag, float* input, float* output) {
        constexpr device_kind dev = sy::tag_device_v<decltype(tag)>;
        sy::flat_in<dev, dtype::f32, contiguity::strided> const xs(
            sy::strided_ref::contiguous(input, dtype::f32, dev, {n}, "x"));
        sy::flat_out<dev, dtype::f32, contiguity::strided> const ys(
            sy::strided_ref::contiguous(output, dtype::f32, dev, {n}, "y"));
        auto const body = [=](auto, std::int64_t i) { ys[i] = f(xs[i]); };
        if constexpr (dev == device_kind::metal)
            run_on_msl<metal_tag<dtype::f32>>(n, body, lanes, flags);
        else
            sy::for_each(cpu_tag<dtype::f32>{}, n, body);
    };
    run(metal_tag<dtype::f32>{}, in.data(), on_metal.data());
    run(cpu_tag<dtype::f32>{}, in.data(), on_cpu.data());
    double worst = 0;
    for (std::size_t i = 0; i < x.size(); ++i) {
        double const d = ulps(on_metal[i], on_cpu[i]);
        if (d > worst) {
            worst = d;
            UNSCOPED_INFO("x = " << x[i] << ": metal " << on_metal[i] << ", cpu " << on_cpu[i]);
        }
    }
    return worst;
}

}  // namespace

TEST_CASE("transform_coverage adds Metal with the float dtypes it stores", "[msl]") {
    static_assert(sy::transform_runs_on(device_kind::metal));
    static_assert(std::is_same_v<
                  sy::transform_coverage<sy::float_dtype_axis>,
                  sy::coverage<sy::axes<sy::axis<device_kind::cpu>, sy::float_dtype_axis>,
                               sy::axes<sy::axis<device_kind::metal>, sy::axis<dtype::f16, dtype::bf16, dtype::f32>>>>);
    SUCCEED("checked at compile time");
}

TEST_CASE("msl: every math function agrees with switchyard/math.h", "[msl][math]") {
    std::vector<float> wide, positive, unit;
    for (int k = -4000; k <= 4000; ++k) wide.push_back(static_cast<float>(k) * 0.02173f);
    for (int k = 1; k <= 8000; ++k)
        positive.push_back(std::ldexp(1.0f + static_cast<float>(k % 97) / 97.0f, k % 120 - 60));
    for (int k = -3999; k <= 4000; ++k) unit.push_back(static_cast<float>(k) / 4001.0f);
    float const inf = INFINITY, nan = NAN;
    for (auto* v : {&wide, &positive, &unit}) v->insert(v->end(), {inf, -inf, nan, 0.0f, -0.0f});
    // IEEE arithmetic as written, and with every a * b + c contracted into an
    // FMA (which Apple's compiler may do even in its safe math mode).
    for (std::string const flags : {"-ffp-contract=off", "-march=x86-64-v3 -ffp-contract=fast"}) {
        INFO("stand-in flags: " << flags);
        CHECK(worst_ulps(
                  wide, [](auto v) { return sy::exp(v); }, 1, flags) <= 1);
        CHECK(worst_ulps(
                  wide, [](auto v) { return sy::expm1(v); }, 1, flags) <= 1);
        CHECK(worst_ulps(
                  positive, [](auto v) { return sy::log(v); }, 1, flags) <= 1);
        CHECK(worst_ulps(
                  unit, [](auto v) { return sy::log1p(v); }, 1, flags) <= 1);
        CHECK(worst_ulps(
                  wide, [](auto v) { return sy::tanh(v); }, 1, flags) <= 1);
        CHECK(worst_ulps(
                  wide, [](auto v) { return sy::sigmoid(v); }, 1, flags) <= 1);
        CHECK(worst_ulps(
                  wide, [](auto v) { return sy::softplus(v); }, 1, flags) <= 1);
        CHECK(worst_ulps(
                  positive, [](auto v) { return sy::sqrt(v); }, 1, flags) == 0);
    }
    CHECK(worst_ulps(wide, [](auto v) { return sy::abs(v) * 2.0f - 1.0f; }) == 0);
    // The vector form: four indices per thread (a count divisible by 4),
    // helpers per component. Two terms of one sign: the CPU's exp and the
    // shaders' may differ by an ulp (math.h's drops r's error term), which a
    // cancelling sum would magnify.
    wide.resize(wide.size() / 4 * 4);
    CHECK(worst_ulps(
              wide, [](auto v) { return sy::exp(v) + sy::abs(sy::tanh(v)); }, 4) <= 2);
}

namespace {

// One C++ kernel body run on Metal (through MSL) and on the CPU over views
// made by make_views(device, storage) from the same host data: `views`
// returns a tuple-like of views, body(tag, i, views) is the kernel.
template <auto D, contiguity Contig = contiguity::strided>
using metal_of = sy::tag<device_kind::metal, D, Contig>;
template <auto D, contiguity Contig = contiguity::strided>
using cpu_of = sy::tag<device_kind::cpu, D, Contig>;

// The torch example's softplus over x [rows, cols] (read transposed or not).
template <auto D, contiguity Contig = contiguity::strided>
std::string softplus_case(std::int64_t rows, std::int64_t cols, bool transposed, std::uint32_t lanes) {
    using S = sy::dtype_storage_t<D>;
    using C = sy::dtype_compute_t<D>;
    std::vector<S> x(static_cast<std::size_t>(rows * cols)), on_metal(x.size()), on_cpu(x.size());
    for (std::size_t k = 0; k < x.size(); ++k)
        x[k] = static_cast<S>(static_cast<C>(static_cast<float>(k % 301) * 0.13f - 19.0f));
    std::string text;
    auto run = [&](auto tag, S* out) {
        constexpr device_kind dev = sy::tag_device_v<decltype(tag)>;
        auto const xr = transposed ? sy::strided_ref::make(x.data(), D, dev, {rows, cols}, {1, rows}, "x")
                                   : sy::strided_ref::contiguous(x.data(), D, dev, {rows, cols}, "x");
        sy::flat_in<dev, D, Contig> const in(xr);
        sy::flat_out<dev, D, Contig> const o(sy::strided_ref::contiguous(out, D, dev, {rows, cols}, "y"));
        auto const body = [=](auto tag_of_call, std::int64_t i) {
            using storage = sy::storage_t<decltype(tag_of_call)>;  // shader values on Metal
            using compute = sy::compute_t<decltype(tag_of_call)>;
            compute const beta(1.5f), inv_beta(1.0f / 1.5f), threshold(20.0f);
            o[i] = static_cast<storage>(
                switchyard_examples::softplus_scalar<storage>(static_cast<compute>(in[i]), beta, inv_beta, threshold));
        };
        if constexpr (dev == device_kind::metal)
            text = run_on_msl<decltype(tag)>(rows * cols, body, lanes);
        else
            sy::for_each(decltype(tag){}, rows * cols, body);
    };
    run(metal_of<D, Contig>{}, on_metal.data());
    run(cpu_of<D, Contig>{}, on_cpu.data());
    double worst = 0;
    for (std::size_t k = 0; k < x.size(); ++k)
        worst = std::max(worst, ulps(static_cast<float>(on_metal[k]), static_cast<float>(on_cpu[k])));
    INFO(text);
    CHECK(worst <= 1);
    return text;
}

}  // namespace

TEST_CASE("msl: the torch example's softplus, f32 and f16, contiguous, vec4 and transposed", "[msl]") {
    softplus_case<dtype::f32>(300, 457, false, 1);
    std::string const vec = softplus_case<dtype::f32, contiguity::contiguous>(256, 100, false, 4);
    CHECK(vec.find("device float4* b1") != std::string::npos);
    softplus_case<dtype::f32>(300, 457, true, 1);
    std::string const half = softplus_case<dtype::f16>(300, 457, true, 1);
    CHECK(half.find("device const half* b0") != std::string::npos);
    softplus_case<dtype::f16, contiguity::contiguous>(64, 64, false, 4);
}

TEST_CASE("msl: golden MSL of the torch example's softplus", "[msl][golden]") {
    std::string const msl = softplus_case<dtype::f32>(4, 8, false, 1);
    check_golden(msl, "softplus_f32.metal");
}

TEST_CASE("msl: broadcasting, integers and bools, gather and scatter", "[msl]") {
    // out = x * sigmoid(gate), gate [cols] broadcast over rows (stride 0).
    std::int64_t const rows = 37, cols = 301, n = rows * cols;
    std::vector<float> x(static_cast<std::size_t>(n)), gate(static_cast<std::size_t>(cols));
    for (std::size_t k = 0; k < x.size(); ++k) x[k] = std::sin(0.1f * static_cast<float>(k)) * 4.0f;
    for (std::size_t k = 0; k < gate.size(); ++k) gate[k] = static_cast<float>(k) * 0.05f - 7.0f;
    std::vector<float> on_metal(x.size()), on_cpu(x.size());
    auto mul_sigmoid = [&](auto tag, float* out) {
        constexpr device_kind dev = sy::tag_device_v<decltype(tag)>;
        sy::flat_in<dev, dtype::f32, contiguity::strided> const xs(
            sy::strided_ref::contiguous(x.data(), dtype::f32, dev, {rows, cols}, "x"));
        sy::flat_in<dev, dtype::f32, contiguity::strided> const gs(
            sy::strided_ref::make(gate.data(), dtype::f32, dev, {rows, cols}, {0, 1}, "gate"));
        sy::flat_out<dev, dtype::f32, contiguity::strided> const o(
            sy::strided_ref::contiguous(out, dtype::f32, dev, {rows, cols}, "out"));
        auto const body = [=](auto, std::int64_t i) { o[i] = xs[i] * sy::sigmoid(gs[i]); };
        if constexpr (dev == device_kind::metal)
            run_on_msl<decltype(tag)>(n, body);
        else
            sy::for_each(decltype(tag){}, n, body);
    };
    mul_sigmoid(metal_of<dtype::f32>{}, on_metal.data());
    mul_sigmoid(cpu_of<dtype::f32>{}, on_cpu.data());
    double worst = 0;
    for (std::size_t k = 0; k < x.size(); ++k) worst = std::max(worst, ulps(on_metal[k], on_cpu[k]));
    CHECK(worst <= 2);  // sigmoid within 1 ulp, then a product

    // i32 arithmetic, bit operations, comparisons and bools, and a convert.
    std::vector<std::int32_t> a(1000), b(1000), ints_metal(1000), ints_cpu(1000);
    for (int k = 0; k < 1000; ++k)
        a[static_cast<std::size_t>(k)] = k * 37 - 9000, b[static_cast<std::size_t>(k)] = k % 13 + 1;
    auto integers = [&](auto tag, std::int32_t* out) {
        constexpr device_kind dev = sy::tag_device_v<decltype(tag)>;
        sy::flat_in<dev, dtype::i32, contiguity::strided> const as(
            sy::strided_ref::contiguous(a.data(), dtype::i32, dev, {1000}, "a"));
        sy::flat_in<dev, dtype::i32, contiguity::strided> const bs(
            sy::strided_ref::contiguous(b.data(), dtype::i32, dev, {1000}, "b"));
        sy::flat_out<dev, dtype::i32, contiguity::strided> const o(
            sy::strided_ref::contiguous(out, dtype::i32, dev, {1000}, "out"));
        auto const body = [=](auto, std::int64_t i) {
            auto const p = as[i], q = bs[i];
            auto const big = p > 0 && q != 3;
            o[i] = sy::select(big, (p % q) ^ (p & 0xff), -p / q) + sy::select(q > 6, 100, 0);
        };
        if constexpr (dev == device_kind::metal)
            run_on_msl<decltype(tag)>(1000, body);
        else
            sy::for_each(decltype(tag){}, 1000, body);
    };
    integers(metal_of<dtype::i32>{}, ints_metal.data());
    integers(cpu_of<dtype::i32>{}, ints_cpu.data());
    CHECK(ints_metal == ints_cpu);

    // Gather from a table and scatter through a permutation (tensor views).
    std::int64_t const m = 1000;
    std::vector<float> table(7), gathered_metal(m), scattered_metal(m), gathered_cpu(m), scattered_cpu(m);
    for (std::size_t k = 0; k < table.size(); ++k) table[k] = 1.5f * static_cast<float>(k) - 2.0f;
    std::vector<std::int32_t> index(static_cast<std::size_t>(m)), permutation(static_cast<std::size_t>(m));
    for (std::int64_t k = 0; k < m; ++k) {
        index[static_cast<std::size_t>(k)] = static_cast<std::int32_t>((k * 5) % 7);
        permutation[static_cast<std::size_t>(k)] = static_cast<std::int32_t>((k * 7) % m);
    }
    auto gather_scatter = [&](auto tag, float* gathered, float* scattered) {
        constexpr device_kind dev = sy::tag_device_v<decltype(tag)>;
        sy::tensor_in<dev, dtype::f32, 1, contiguity::contiguous> const lookup(
            sy::strided_ref::contiguous(table.data(), dtype::f32, dev, {7}, "table"));
        sy::flat_in<dev, dtype::i32, contiguity::contiguous> const idx(
            sy::strided_ref::contiguous(index.data(), dtype::i32, dev, {m}, "index"));
        sy::flat_in<dev, dtype::i32, contiguity::contiguous> const perm(
            sy::strided_ref::contiguous(permutation.data(), dtype::i32, dev, {m}, "perm"));
        sy::flat_out<dev, dtype::f32, contiguity::contiguous> const g(
            sy::strided_ref::contiguous(gathered, dtype::f32, dev, {m}, "gathered"));
        sy::tensor_out<dev, dtype::f32, 1, contiguity::contiguous> const s(
            sy::strided_ref::contiguous(scattered, dtype::f32, dev, {m}, "scattered"));
        auto const body = [=](auto, std::int64_t i) {
            auto const v = lookup(idx[i]);
            g[i] = v;
            s(perm[i]) = v * 2.0f;
        };
        if constexpr (dev == device_kind::metal)
            run_on_msl<decltype(tag)>(m, body);
        else
            sy::for_each(decltype(tag){}, m, body);
    };
    gather_scatter(metal_of<dtype::f32, contiguity::contiguous>{}, gathered_metal.data(), scattered_metal.data());
    gather_scatter(cpu_of<dtype::f32, contiguity::contiguous>{}, gathered_cpu.data(), scattered_cpu.data());
    CHECK(gathered_metal == gathered_cpu);
    CHECK(scattered_metal == scattered_cpu);
}

TEST_CASE("msl: more than 65535 x 256 threads, and no thread past the count writes", "[msl]") {
    std::int64_t const n = 65535 * 256 + 1000;
    std::vector<float> x(static_cast<std::size_t>(n) + 300, 1.0f), y(x.size(), -1.0f);
    for (std::size_t k = 0; k < static_cast<std::size_t>(n); ++k) x[k] = static_cast<float>(k % 1024);
    sy::flat_in<device_kind::metal, dtype::f32, contiguity::contiguous> const in(
        sy::strided_ref::contiguous(x.data(), dtype::f32, device_kind::metal, {n}, "x"));
    sy::flat_out<device_kind::metal, dtype::f32, contiguity::contiguous> const out(
        sy::strided_ref::contiguous(y.data(), dtype::f32, device_kind::metal, {n}, "y"));
    run_on_msl<metal_of<dtype::f32, contiguity::contiguous>>(
        n, [=](auto, std::int64_t i) { out[i] = in[i] * 2.0f + 1.0f; });
    std::size_t wrong = 0;
    for (std::size_t k = 0; k < static_cast<std::size_t>(n); ++k) wrong += y[k] != x[k] * 2.0f + 1.0f;
    CHECK(wrong == 0);
    for (std::size_t k = static_cast<std::size_t>(n); k < y.size(); ++k) CHECK(y[k] == -1.0f);
}

TEST_CASE("msl: a kernel needing more than 31 buffers is refused, naming the limit", "[msl]") {
    std::vector<std::vector<float>> inputs(31, std::vector<float>(16, 1.0f));
    std::vector<float> y(16);
    std::vector<sy::flat_in<device_kind::metal, dtype::f32, contiguity::contiguous>> views;
    for (auto& v : inputs)
        views.emplace_back(sy::strided_ref::contiguous(v.data(), dtype::f32, device_kind::metal, {16}, "x"));
    sy::flat_out<device_kind::metal, dtype::f32, contiguity::contiguous> const out(
        sy::strided_ref::contiguous(y.data(), dtype::f32, device_kind::metal, {16}, "y"));
    sy::shader::trace t("metal", 7, true);
    {
        sy::shader::trace_scope const scope(t);
        auto sum = views[0][7] + 0.0f;
        for (std::size_t k = 1; k < views.size(); ++k) sum = sum + views[k][7];
        out[7] = sum;
    }
    CHECK_THROWS_WITH(sy::shader::emit_msl(t), Catch::Contains("needs 33") && Catch::Contains("at most 31 buffers"));
    // f64 views are refused when made, naming dtype and device.
    std::vector<double> d(4);
    CHECK_THROWS_WITH((sy::flat_in<device_kind::metal, dtype::f64, contiguity::contiguous>(
                          sy::strided_ref::contiguous(d.data(), dtype::f64, device_kind::metal, {4}, "d"))),
                      Catch::Contains("'d'") && Catch::Contains("f64") && Catch::Contains("metal"));
}

namespace {

// A metal_device, current on this thread while it lives: over the stand-in
// backend, or (system = true, on Apple systems only) over Metal itself, so
// that on a Mac the same cases also run on the GPU (docs/metal.md).
struct metal_under_test {
    explicit metal_under_test(bool system)
        : standin(system ? nullptr : new standin_metal::backend()),
          device(system ? sy::metal_device() : sy::metal_device(std::unique_ptr<sy::metal_backend>(standin))),
          use(device) {}

    standin_metal::backend* standin;  // null on Metal itself
    sy::metal_device device;
    sy::metal_device_guard use;

    template <typename T>
    void* upload(std::vector<T> const& host) {
        void* const p = device.alloc(host.size() * sizeof(T));
        device.copy_from_host(p, host.data(), host.size() * sizeof(T));
        return p;
    }
    template <typename T>
    std::vector<T> read(void const* p, std::size_t n) {
        std::vector<T> host(n);
        device.copy_to_host(host.data(), p, n * sizeof(T));
        return host;
    }
};

// The devices the Metal cases run on: the stand-in, and Metal on Apple systems.
#if defined(__APPLE__)
constexpr bool metal_systems[] = {false, true};
#else
constexpr bool metal_systems[] = {false};
#endif

}  // namespace

TEST_CASE("metal: transform and for_each run through metal_device, recorded until a readback", "[msl][metal]") {
    for (bool system : metal_systems) {
        INFO((system ? "Metal" : "stand-in"));
        metal_under_test d(system);
        std::int64_t const rows = 64, cols = 300, n = rows * cols;
        std::vector<float> x(static_cast<std::size_t>(n)), gate(static_cast<std::size_t>(cols));
        for (std::size_t k = 0; k < x.size(); ++k) x[k] = std::sin(0.01f * static_cast<float>(k)) * 5.0f;
        for (std::size_t k = 0; k < gate.size(); ++k) gate[k] = static_cast<float>(k) * 0.03f - 4.0f;
        void* const dx = d.upload(x);
        void* const dgate = d.upload(gate);
        void* const dout = d.device.alloc(x.size() * sizeof(float));
        auto const metal = device_kind::metal;
        auto const xs = sy::strided_ref::contiguous(dx, dtype::f32, metal, {rows, cols}, "x");
        auto const gs = sy::strided_ref::contiguous(dgate, dtype::f32, metal, {cols}, "gate");  // broadcast over rows
        auto const os = sy::strided_ref::contiguous(dout, dtype::f32, metal, {rows, cols}, "out");
        auto const mul_sigmoid = [](auto v, auto g) { return v * sy::sigmoid(g); };
        using metal_f32 = sy::tag<device_kind::metal, dtype::f32>;
        sy::transform(metal_f32{}, os, mul_sigmoid, xs, gs);
        // Recorded, not run: the stand-in's memory is still zero.
        CHECK(d.device.counters().dispatches == 1);
        CHECK(d.device.counters().commits == 0);
        if (d.standin) CHECK(static_cast<float const*>(dout)[5] == 0.0f);
        std::vector<float> const got = d.read<float>(dout, x.size());
        CHECK(d.device.counters().commits == 1);
        if (d.standin) CHECK(d.standin->commits_run == 1);
        std::vector<float> want(x.size());
        sy::transform(sy::tag<device_kind::cpu, dtype::f32>{},
                      sy::strided_ref::contiguous(want.data(), dtype::f32, device_kind::cpu, {rows, cols}, "out"),
                      mul_sigmoid,
                      sy::strided_ref::contiguous(x.data(), dtype::f32, device_kind::cpu, {rows, cols}, "x"),
                      sy::strided_ref::contiguous(gate.data(), dtype::f32, device_kind::cpu, {cols}, "gate"));
        double worst = 0;
        for (std::size_t k = 0; k < x.size(); ++k) worst = std::max(worst, ulps(got[k], want[k]));
        CHECK(worst <= 2);

        // Two more ops recorded into one command buffer: in place, then a
        // for_each reading its result; one commit runs both, in order, and the
        // second op's pipeline is new but the first's is reused.
        sy::transform(metal_f32{}, os, mul_sigmoid, xs, gs);
        sy::transform(
            metal_f32{}, os, [](auto v) { return v * 2.0f + 1.0f; }, os);
        CHECK(d.device.cached_pipelines() == 2);
        sy::flat_in<metal, dtype::f32, contiguity::contiguous> const in(os);
        sy::flat_out<metal, dtype::f32, contiguity::contiguous> const out(xs);
        sy::for_each(sy::tag<device_kind::metal, dtype::f32, contiguity::contiguous>{}, n,
                     [=](auto, std::int64_t i) { out[i] = in[i] - 1.0f; });
        CHECK(d.device.counters().dispatches == 4);
        d.device.sync();
        CHECK(d.device.counters().commits == 2);
        std::vector<float> const again = d.read<float>(dx, x.size());
        worst = 0;
        for (std::size_t k = 0; k < x.size(); ++k) {
            // got[k] is within 2 ulp of want[k]; the same steps from it:
            float const twice = got[k] * 2.0f + 1.0f;
            worst = std::max(worst, ulps(again[k], twice - 1.0f));
        }
        CHECK(worst == 0);
        // A buffer freed while work reading it is recorded stays valid (and
        // unused by new allocations) until that work is committed.
        void* const tmp = d.upload(x);
        std::uint64_t const commits = d.device.counters().commits;
        sy::transform(
            metal_f32{}, os, [](auto v) { return v + 1.0f; },
            sy::strided_ref::contiguous(tmp, dtype::f32, metal, {rows, cols}, "tmp"));
        d.device.free(tmp);
        void* const other = d.device.alloc(x.size() * sizeof(float));
        CHECK(other != tmp);
        CHECK(d.device.counters().commits == commits);
        std::vector<float> const plus_one = d.read<float>(dout, x.size());
        std::size_t wrong = 0;
        for (std::size_t k = 0; k < x.size(); ++k) wrong += plus_one[k] != x[k] + 1.0f;
        CHECK(wrong == 0);
        for (void* p : {dx, dgate, dout, other}) d.device.free(p);
        CHECK(d.device.counters().live_bytes == 0);
    }
}

TEST_CASE("metal: f16, transposed operands and several outputs", "[msl][metal]") {
    for (bool system : metal_systems) {
        INFO((system ? "Metal" : "stand-in"));
        metal_under_test d(system);
        std::int64_t const rows = 33, cols = 70;
        std::vector<sy::half> x(static_cast<std::size_t>(rows * cols));
        for (std::size_t k = 0; k < x.size(); ++k) x[k] = sy::half(static_cast<float>(k % 50) * 0.25f - 6.0f);
        void* const dx = d.upload(x);
        void* const dsum = d.device.alloc(x.size() * 2);
        void* const dexp = d.device.alloc(x.size() * 2);
        auto const metal = device_kind::metal;
        // x read transposed: [cols, rows] with strides (1, cols).
        auto const xt = sy::strided_ref::make(dx, dtype::f16, metal, {cols, rows}, {1, cols}, "x.T");
        auto const sum = sy::strided_ref::contiguous(dsum, dtype::f16, metal, {cols, rows}, "sum");
        auto const e = sy::strided_ref::contiguous(dexp, dtype::f16, metal, {cols, rows}, "exp");
        auto const two = [](auto v) { return sy::results{v + v, sy::exp(v * 0.5f)}; };
        sy::transform(sy::tag<device_kind::metal, dtype::f16>{}, sy::outputs(sum, e), two, xt);
        std::vector<sy::half> const got_sum = d.read<sy::half>(dsum, x.size()),
                                    got_exp = d.read<sy::half>(dexp, x.size());
        std::size_t wrong = 0;
        for (std::int64_t c = 0; c < cols; ++c)
            for (std::int64_t r = 0; r < rows; ++r) {
                float const v = static_cast<float>(x[static_cast<std::size_t>(r * cols + c)]);
                auto const at = static_cast<std::size_t>(c * rows + r);
                wrong += static_cast<float>(got_sum[at]) != static_cast<float>(sy::half(v + v));
                wrong += static_cast<float>(got_exp[at]) != static_cast<float>(sy::half(sy::exp(v * 0.5f)));
            }
        CHECK(wrong == 0);
    }
}

TEST_CASE("metal: borrowed buffers bind from a view's offset, vec4 only where it is aligned", "[msl][metal]") {
    // The stand-in's buffers are host memory: a borrowed "MTLBuffer" here is
    // a vector the test reads directly after sync().
    metal_under_test d(false);
    std::int64_t const n = 400;
    std::vector<float> x_storage(static_cast<std::size_t>(n + 16)),
        out_storage(static_cast<std::size_t>(n + 16), -1.0f);
    for (std::size_t k = 0; k < x_storage.size(); ++k) x_storage[k] = static_cast<float>(k) * 0.05f - 9.0f;
    std::uint64_t const x_bytes = x_storage.size() * sizeof(float), out_bytes = out_storage.size() * sizeof(float);
    void* const x_at = d.device.borrow(x_storage.data(), x_bytes);
    void* const out_at = d.device.borrow(out_storage.data(), out_bytes);
    CHECK(x_at != x_storage.data());  // an address range of its own
    CHECK(d.device.resolve(static_cast<char*>(x_at) + 12).buffer == x_storage.data());
    CHECK(d.device.resolve(static_cast<char*>(x_at) + 12).offset == 12);
    CHECK_FALSE(d.device.owns(x_at));
    using metal_f32 = sy::tag<device_kind::metal, dtype::f32>;
    auto const softplus = [](auto v) { return sy::softplus(v); };
    auto const at = [](void* base, std::int64_t element) { return static_cast<float*>(base) + element; };
    // (x offset, out offset) in elements: both 16-byte aligned (vec4), then
    // neither (one index per thread).
    for (auto const& [xo, oo] : {std::pair<std::int64_t, std::int64_t>{4, 8}, {3, 1}}) {
        INFO("x from element " << xo << ", out from element " << oo);
        std::fill(out_storage.begin(), out_storage.end(), -1.0f);
        sy::transform(metal_f32{},
                      sy::strided_ref::contiguous(at(out_at, oo), dtype::f32, device_kind::metal, {n}, "out"), softplus,
                      sy::strided_ref::contiguous(at(x_at, xo), dtype::f32, device_kind::metal, {n}, "x"));
        d.device.sync();
        std::size_t wrong = 0;
        for (std::int64_t k = 0; k < n; ++k) {
            float const want = sy::softplus(x_storage[static_cast<std::size_t>(xo + k)]);
            wrong += ulps(out_storage[static_cast<std::size_t>(oo + k)], want) > 2;
        }
        CHECK(wrong == 0);
        CHECK(out_storage[static_cast<std::size_t>(oo - 1)] == -1.0f);  // nothing before the view written
        CHECK(out_storage[static_cast<std::size_t>(oo + n)] == -1.0f);  // nor after it
    }
    CHECK(d.device.cached_pipelines() == 2);  // the vec4 kernel and the one of one index per thread
    // A reduction reads a borrowed view from its offset too.
    void* const total = d.device.alloc(sizeof(float));
    sy::reduce(metal_f32{}, sy::strided_ref::contiguous(total, dtype::f32, device_kind::metal, {}, "total"),
               sy::all_dims, sy::sum,
               sy::strided_ref::contiguous(at(x_at, 5), dtype::f32, device_kind::metal, {n}, "x"));
    double want_total = 0;
    for (std::int64_t k = 0; k < n; ++k) want_total += x_storage[static_cast<std::size_t>(5 + k)];
    CHECK(d.read<float>(total, 1)[0] == Approx(want_total).epsilon(1e-5));
    // A view past the borrowed bytes, copies and free of a borrowed address,
    // and a view after end_borrow are refused.
    CHECK_THROWS_WITH(
        sy::transform(metal_f32{}, sy::strided_ref::contiguous(at(out_at, 0), dtype::f32, device_kind::metal, {n}, "o"),
                      softplus, sy::strided_ref::contiguous(at(x_at, 20), dtype::f32, device_kind::metal, {n}, "x")),
        Catch::Contains("'x' reaches 1600 bytes from byte 80 of a buffer of 1664"));
    std::vector<float> back(4);
    CHECK_THROWS_WITH(d.device.copy_to_host(back.data(), x_at, 16), Catch::Contains("not a live buffer"));
    CHECK_THROWS_WITH(d.device.free(x_at), Catch::Contains("did not allocate"));
    d.device.end_borrow(x_at);
    CHECK_THROWS_WITH(d.device.end_borrow(x_at),
                      Catch::Contains("end_borrow of an address that borrow() did not return"));
    CHECK_THROWS_WITH(
        sy::transform(metal_f32{}, sy::strided_ref::contiguous(at(out_at, 0), dtype::f32, device_kind::metal, {n}, "o"),
                      softplus, sy::strided_ref::contiguous(at(x_at, 0), dtype::f32, device_kind::metal, {n}, "x")),
        Catch::Contains("'x'") && Catch::Contains("not a live buffer"));
    // An f32 view must start on a 4-byte boundary: Metal binds from offsets
    // aligned to the element read.
    CHECK_THROWS_WITH(
        sy::transform(
            metal_f32{}, sy::strided_ref::contiguous(at(out_at, 100), dtype::f32, device_kind::metal, {8}, "o"),
            softplus,
            sy::strided_ref::contiguous(static_cast<char*>(out_at) + 2, dtype::f32, device_kind::metal, {8}, "x")),
        Catch::Contains("'x' starts at byte 2 of its buffer, which is not a multiple of its 4-byte elements"));
    CHECK_THROWS_WITH(d.device.borrow(nullptr, 16), Catch::Contains("borrow of a null buffer"));
    // flush() commits what is recorded, once; the readback after it waits
    // but commits nothing more.
    std::uint64_t const commits = d.device.counters().commits;
    int const run = d.standin->commits_run;
    sy::transform(metal_f32{}, sy::strided_ref::contiguous(at(out_at, 0), dtype::f32, device_kind::metal, {n}, "o"),
                  softplus, sy::strided_ref::contiguous(total, dtype::f32, device_kind::metal, {}, "t"));
    d.device.flush();
    d.device.flush();
    CHECK(d.device.counters().commits == commits + 1);
    CHECK(d.standin->commits_run == run + 1);
    float const t = d.read<float>(total, 1)[0];
    CHECK(d.device.counters().commits == commits + 1);
    CHECK(out_storage[7] == sy::softplus(t));
    d.device.end_borrow(out_at);
    // A zero-byte borrow binds nothing but is a valid address to end.
    void* const empty_at = d.device.borrow(out_storage.data(), 0);
    CHECK(d.device.resolve(empty_at).buffer == out_storage.data());
    d.device.end_borrow(empty_at);
    d.device.free(total);
    d.device.sync();  // no recorded work may outlive the borrowed vectors
}

TEST_CASE("metal: bad input is refused, naming what was wrong", "[msl][metal]") {
    metal_under_test d(false);
    std::vector<float> host(16, 1.0f);
    void* const dy = d.device.alloc(16 * sizeof(float));
    auto const y = sy::strided_ref::contiguous(dy, dtype::f32, device_kind::metal, {16}, "y");
    using metal_f32 = sy::tag<device_kind::metal, dtype::f32>;
    // Host memory passed as a Metal operand.
    auto const x = sy::strided_ref::contiguous(host.data(), dtype::f32, device_kind::metal, {16}, "x");
    CHECK_THROWS_WITH(sy::transform(
                          metal_f32{}, y, [](auto v) { return v; }, x),
                      Catch::Contains("'x'") && Catch::Contains("not a live buffer of the current metal device"));
    // A CPU operand with a Metal one.
    auto const cpu_x = sy::strided_ref::contiguous(host.data(), dtype::f32, device_kind::cpu, {16}, "x");
    CHECK_THROWS_WITH(sy::transform(
                          metal_f32{}, y, [](auto v) { return v; }, cpu_x),
                      Catch::Contains("'x'") && Catch::Contains("cpu"));
    // A view reaching past its buffer.
    void* const small = d.device.alloc(256);
    auto const big = sy::strided_ref::contiguous(small, dtype::f32, device_kind::metal, {100}, "big");
    auto const big_out = sy::strided_ref::contiguous(d.device.alloc(400), dtype::f32, device_kind::metal, {100}, "o");
    CHECK_THROWS_WITH(sy::transform(
                          metal_f32{}, big_out, [](auto v) { return v; }, big),
                      Catch::Contains("'big'") && Catch::Contains("bytes into a buffer of 256"));
    // Past the bytes asked for, though inside the pool's size class the
    // buffer came from: refused too, by kernels, reductions and copies.
    void* const odd = d.device.alloc(300);
    CHECK(d.device.capacity(odd) > 300);
    auto const past = sy::strided_ref::contiguous(odd, dtype::f32, device_kind::metal, {80}, "past");
    auto const out80 = sy::strided_ref::contiguous(d.device.alloc(320), dtype::f32, device_kind::metal, {80}, "o80");
    CHECK_THROWS_WITH(sy::transform(
                          metal_f32{}, out80, [](auto v) { return v; }, past),
                      Catch::Contains("'past' reaches 320 bytes into a buffer of 300"));
    CHECK_THROWS_WITH(
        sy::reduce(metal_f32{}, sy::strided_ref::contiguous(small, dtype::f32, device_kind::metal, {}, "s"),
                   sy::all_dims, sy::sum, past),
        Catch::Contains("reduce on metal: 'past' reaches 320 bytes into a buffer of 300"));
    // A pass of 2^24 threadgroups is refused before anything is recorded:
    // Metal's 32-bit thread positions would wrap (a row of 2 per output,
    // read broadcast from 8 bytes).
    std::int64_t const outputs = std::int64_t{1} << 24;
    auto const many = sy::strided_ref::contiguous(d.device.alloc(static_cast<std::size_t>(outputs) * 4), dtype::f32,
                                                  device_kind::metal, {outputs}, "many");
    auto const pairs = sy::strided_ref::make(small, dtype::f32, device_kind::metal, {outputs, 2}, {0, 1}, "pairs");
    auto const dispatches = d.device.counters().dispatches;
    CHECK_THROWS_WITH(sy::reduce(metal_f32{}, many, sy::dims{1}, sy::sum, pairs),
                      Catch::Contains("reduce on metal: the reduction needs 16777216 threadgroups"));
    CHECK(d.device.counters().dispatches == dispatches);
    std::vector<float> back(80);
    CHECK_THROWS_WITH(d.device.copy_to_host(back.data(), odd, 320),
                      Catch::Contains("copy_to_host of 320 bytes exceeds the buffer's 300"));
    // f64 has no Metal type.
    using metal_f64 = sy::tag<device_kind::metal, dtype::f64>;
    void* const dd = d.device.alloc(64);
    auto const dref = sy::strided_ref::contiguous(dd, dtype::f64, device_kind::metal, {8}, "d");
    CHECK_THROWS_WITH(sy::transform(
                          metal_f64{}, dref, [](auto v) { return v; }, dref),
                      Catch::Contains("f64") && Catch::Contains("metal"));
    CHECK_THROWS_WITH(d.device.free(host.data()), Catch::Contains("did not allocate"));
    sy::metal_device first(std::make_unique<standin_metal::backend>());
    sy::metal_device second = std::move(first);
    CHECK_THROWS_WITH(first.alloc(16),
                      Catch::Contains("moved-from metal_device"));  // NOLINT: use after move, on purpose
    CHECK(second.alloc(0) == nullptr);
}

#if !defined(__APPLE__)
TEST_CASE("metal: reductions over rows, columns and all, every combine, several passes", "[msl][metal][reduce]") {
    for (bool system : metal_systems) {
        INFO((system ? "Metal" : "stand-in"));
        metal_under_test d(system);
        auto const metal = device_kind::metal;
        using metal_f32 = sy::tag<device_kind::metal, dtype::f32>;
        using cpu_f32 = sy::tag<device_kind::cpu, dtype::f32>;
        // Generic, for both devices: values are floats on the CPU and traced on Metal.
        auto const weighted = [](auto a, auto b) { return a * b + 1.0f; };
        auto const near_one = [](auto a) { return 1.0f + (a - 1.0f) * 0.001f; };  // products stay finite
        auto const user_max = sy::combine([](auto a, auto b) { return sy::max(a, b); }, -INFINITY);
        // Rows of 9000 take two passes (partials of 8192-value blocks, then
        // their fold), all of [5, 9000] too; columns of 300 one. Sizes are
        // small in groups: the stand-in runs a group's 256 threads as threads.
        struct shape {
            char const* what;
            std::int64_t rows, cols;
            sy::dims over;
            std::int64_t out_size;  // 0: a scalar
        };
        std::vector<shape> const shapes = {{"rows", 5, 9000, sy::dims{-1}, 5},
                                           {"columns", 300, 12, sy::dims{0}, 12},
                                           {"all", 5, 9000, sy::all_dims, 0}};
        for (shape const& sh : shapes) {
            INFO(sh.what);
            std::vector<float> x(static_cast<std::size_t>(sh.rows * sh.cols)), w(static_cast<std::size_t>(sh.cols));
            for (std::size_t k = 0; k < x.size(); ++k) x[k] = 0.9f + 0.2f * std::sin(0.37f * static_cast<float>(k));
            for (std::size_t k = 0; k < w.size(); ++k) w[k] = std::cos(0.01f * static_cast<float>(k));
            void* const dx = d.upload(x);
            void* const dw = d.upload(w);
            void* const dout = d.device.alloc(static_cast<std::size_t>(sh.cols) * sizeof(float));
            auto const xs = sy::strided_ref::contiguous(dx, dtype::f32, metal, {sh.rows, sh.cols}, "x");
            auto const ws = sy::strided_ref::contiguous(dw, dtype::f32, metal, {sh.cols}, "w");  // broadcast
            std::int64_t const one = 1;
            auto const out = sy::strided_ref::make(dout, dtype::f32, metal, &sh.out_size, &one, sh.out_size > 0, "out");
            std::vector<float> want(static_cast<std::size_t>(sh.out_size > 0 ? sh.out_size : 1));
            auto const host_out = sy::strided_ref::make(want.data(), dtype::f32, device_kind::cpu, &sh.out_size, &one,
                                                        sh.out_size > 0, "out");
            auto const host_x =
                sy::strided_ref::contiguous(x.data(), dtype::f32, device_kind::cpu, {sh.rows, sh.cols}, "x");
            auto const host_w = sy::strided_ref::contiguous(w.data(), dtype::f32, device_kind::cpu, {sh.cols}, "w");
            // Each reduction against the CPU's; sums within a few roundings of
            // their magnitude, the others exactly (max, min) or nearly (prod).
            auto const check = [&](char const* which, double tolerance, auto&& on) {
                INFO(which);
                std::uint64_t const commits = d.device.counters().commits;
                on(metal_f32{}, out, xs, ws);
                CHECK(d.device.counters().commits == commits);  // recorded, not run
                on(cpu_f32{}, host_out, host_x, host_w);
                std::vector<float> const got = d.read<float>(dout, want.size());
                double worst = 0;
                for (std::size_t k = 0; k < want.size(); ++k)
                    worst = std::max(worst,
                                     std::fabs(double(got[k]) - want[k]) / std::max(1.0, std::fabs(double(want[k]))));
                CHECK(worst <= tolerance);
                on(metal_f32{}, out, xs, ws);  // again: the same bits
                CHECK(d.read<float>(dout, want.size()) == got);
            };
            check("sum of x * w + 1", 1e-6, [&](auto tag, auto const& o, auto const& a, auto const& b) {
                sy::transform_reduce(tag, o, sh.over, sy::sum, weighted, a, b);
            });
            check("prod", 1e-5, [&](auto tag, auto const& o, auto const& a, auto const&) {
                sy::transform_reduce(tag, o, sh.over, sy::prod, near_one, a);
            });
            check("amax", 0, [&](auto tag, auto const& o, auto const& a, auto const&) {
                sy::reduce(tag, o, sh.over, sy::amax, a);
            });
            check("amin", 0, [&](auto tag, auto const& o, auto const& a, auto const&) {
                sy::reduce(tag, o, sh.over, sy::amin, a);
            });
            check("a user's combine", 0, [&](auto tag, auto const& o, auto const& a, auto const&) {
                sy::reduce(tag, o, sh.over, user_max, a);
            });
            // Two passes for rows of 9000: two dispatches, in one commit.
            std::uint64_t const dispatches = d.device.counters().dispatches;
            sy::reduce(metal_f32{}, out, sh.over, sy::sum, xs);
            CHECK(d.device.counters().dispatches == dispatches + (sh.cols > 8192 ? 2 : 1));
            for (void* p : {dx, dw, dout}) d.device.free(p);
        }
    }
}

TEST_CASE("metal: reductions of f16 and i32, NaN, empty reductions and bad input", "[msl][metal][reduce]") {
    for (bool system : metal_systems) {
        INFO((system ? "Metal" : "stand-in"));
        metal_under_test d(system);
        auto const metal = device_kind::metal;
        // f16 accumulates in f32, across passes too: an f16 accumulator
        // would stall at 256.
        std::int64_t const length = 9000;
        std::vector<sy::half> h(static_cast<std::size_t>(3 * length), sy::half(0.1f));
        void* const dh = d.upload(h);
        void* const dhout = d.device.alloc(3 * sizeof(sy::half));
        sy::reduce(sy::tag<device_kind::metal, dtype::f16>{},
                   sy::strided_ref::contiguous(dhout, dtype::f16, metal, {3}, "out"), sy::dims{1}, sy::sum,
                   sy::strided_ref::contiguous(dh, dtype::f16, metal, {3, length}, "x"));
        float const want_half = float(sy::half(float(length) * float(sy::half(0.1f))));
        for (sy::half v : d.read<sy::half>(dhout, 3)) CHECK(float(v) == want_half);

        // i32: a map's sum, exactly.
        std::vector<std::int32_t> ints(1000);
        for (std::size_t i = 0; i < ints.size(); ++i) ints[i] = std::int32_t(i * 7919 % 2001) - 1000;
        void* const di = d.upload(ints);
        void* const diout = d.device.alloc(4);
        using metal_i32 = sy::tag<device_kind::metal, dtype::i32>;
        sy::transform_reduce(
            metal_i32{}, sy::strided_ref::contiguous(diout, dtype::i32, metal, {}, "out"), sy::all_dims, sy::sum,
            [](sy::compute_t<metal_i32> v) { return v * 3; },
            sy::strided_ref::contiguous(di, dtype::i32, metal, {1000}, "x"));
        std::int64_t want_int = 0;
        for (auto v : ints) want_int += 3 * v;
        CHECK(d.read<std::int32_t>(diout, 1)[0] == std::int32_t(want_int));

        // amax and amin propagate NaN; an empty sum writes 0.
        using metal_f32 = sy::tag<device_kind::metal, dtype::f32>;
        std::vector<float> x = {1.0f, NAN, 3.0f, -2.0f, 5.0f, 4.0f};
        void* const dx = d.upload(x);
        void* const dout = d.device.alloc(2 * sizeof(float));
        auto const xs = sy::strided_ref::contiguous(dx, dtype::f32, metal, {2, 3}, "x");
        auto const out = sy::strided_ref::contiguous(dout, dtype::f32, metal, {2}, "out");
        sy::reduce(metal_f32{}, out, sy::dims{1}, sy::amax, xs);
        std::vector<float> got = d.read<float>(dout, 2);
        CHECK(std::isnan(got[0]));
        CHECK(got[1] == 5.0f);
        sy::reduce(metal_f32{}, out, sy::dims{1}, sy::amin, xs);
        got = d.read<float>(dout, 2);
        CHECK(std::isnan(got[0]));
        CHECK(got[1] == -2.0f);
        auto const empty = sy::strided_ref::contiguous(dx, dtype::f32, metal, {2, 0}, "x");
        sy::reduce(metal_f32{}, out, sy::dims{1}, sy::sum, empty);
        CHECK(d.read<float>(dout, 2) == std::vector<float>{0.0f, 0.0f});
        CHECK_THROWS_WITH(sy::reduce(metal_f32{}, out, sy::dims{1}, sy::amax, empty),
                          Catch::Contains("amax over zero elements"));

        // Refused, naming the op, the device and the operand.
        std::vector<double> d64(4);
        CHECK_THROWS_WITH(sy::reduce(sy::tag<device_kind::metal, dtype::f64>{},
                                     sy::strided_ref::contiguous(dout, dtype::f64, metal, {}, "out"), sy::all_dims,
                                     sy::sum, sy::strided_ref::contiguous(dx, dtype::f64, metal, {2}, "x")),
                          Catch::Contains("reduce on metal: dtype f64 is not supported"));
        float host[4] = {};
        CHECK_THROWS_WITH(
            sy::reduce(metal_f32{}, sy::strided_ref::contiguous(dout, dtype::f32, metal, {}, "out"), sy::all_dims,
                       sy::sum, sy::strided_ref::contiguous(host, dtype::f32, metal, {4}, "stray")),
            Catch::Contains("input 'stray' is not a live buffer of the current metal device"));
        for (void* p : {dh, dhout, di, diout, dx, dout}) d.device.free(p);
    }
}

TEST_CASE("metal: argmax and argmin give the CPU's index: rows, columns, all, ties, NaN, two passes",
          "[msl][metal][reduce]") {
    for (bool system : metal_systems) {
        INFO((system ? "Metal" : "stand-in"));
        metal_under_test d(system);
        auto const metal = device_kind::metal;
        using metal_f32 = sy::tag<device_kind::metal, dtype::f32>;
        using cpu_f32 = sy::tag<device_kind::cpu, dtype::f32>;
        struct shape {
            char const* what;
            std::int64_t rows, cols;
            bool transposed;  // x's memory is [cols, rows]
            sy::dims over;
            std::int64_t out_size;  // 0: a scalar
        };
        // Rows of 9000 take two passes: (value, index) partials, then their fold.
        std::vector<shape> const shapes = {{"rows", 5, 9000, false, sy::dims{-1}, 5},
                                           {"columns", 300, 12, false, sy::dims{0}, 12},
                                           {"transposed rows", 12, 300, true, sy::dims{-1}, 12},
                                           {"all", 5, 9000, false, sy::all_dims, 0}};
        for (shape const& sh : shapes) {
            for (int values = 0; values < 3; ++values) {
                INFO(sh.what << (values == 0 ? ", distinct" : values == 1 ? ", ties" : ", NaN"));
                std::vector<float> x(static_cast<std::size_t>(sh.rows * sh.cols));
                for (std::size_t k = 0; k < x.size(); ++k) {
                    x[k] = 4.0f * std::sin(0.37f * static_cast<float>(k));
                    if (values >= 1) x[k] = std::round(x[k]);  // 9 levels
                    if (values == 2 && k % 97 == 5) x[k] = NAN;
                }
                void* const dx = d.upload(x);
                std::size_t const n = static_cast<std::size_t>(sh.out_size > 0 ? sh.out_size : 1);
                void* const dout = d.device.alloc(n * 8);
                std::vector<std::int64_t> want(n);
                std::int64_t const sizes[] = {sh.rows, sh.cols};
                std::int64_t const strides[] = {sh.transposed ? 1 : sh.cols, sh.transposed ? sh.rows : 1};
                auto const xs = sy::strided_ref::make(dx, dtype::f32, metal, sizes, strides, 2, "x");
                auto const host_x =
                    sy::strided_ref::make(x.data(), dtype::f32, device_kind::cpu, sizes, strides, 2, "x");
                std::int64_t const one = 1;
                auto const out =
                    sy::strided_ref::make(dout, dtype::i64, metal, &sh.out_size, &one, sh.out_size > 0, "i");
                auto const host_out = sy::strided_ref::make(want.data(), dtype::i64, device_kind::cpu, &sh.out_size,
                                                            &one, sh.out_size > 0, "i");
                auto const both = [&](auto combine, char const* name) {
                    INFO(name);
                    std::vector<std::int64_t> const garbage(n, -1);
                    d.device.copy_from_host(dout, garbage.data(), n * 8);  // the high words too
                    sy::reduce(metal_f32{}, out, sh.over, combine, xs);
                    sy::reduce(cpu_f32{}, host_out, sh.over, combine, host_x);
                    CHECK(d.read<std::int64_t>(dout, n) == want);
                };
                both(sy::argmax, "argmax");
                both(sy::argmin, "argmin");
                for (void* p : {dx, dout}) d.device.free(p);
            }
        }
        // i32, with ties: the first of the largest.
        std::vector<std::int32_t> ints(3000);
        for (std::size_t i = 0; i < ints.size(); ++i) ints[i] = std::int32_t(i * 7919 % 613) - 300;
        void* const di = d.upload(ints);
        void* const dindex = d.device.alloc(3 * 8);
        sy::reduce(sy::tag<device_kind::metal, dtype::i32>{},
                   sy::strided_ref::contiguous(dindex, dtype::i64, metal, {3}, "index"), sy::dims{1}, sy::argmax,
                   sy::strided_ref::contiguous(di, dtype::i32, metal, {3, 1000}, "x"));
        std::vector<std::int64_t> const got = d.read<std::int64_t>(dindex, 3);
        for (std::size_t r = 0; r < 3; ++r) {
            auto const row = ints.begin() + std::ptrdiff_t(r * 1000);
            CHECK(got[r] == std::max_element(row, row + 1000) - row);
        }
        for (void* p : {di, dindex}) d.device.free(p);

        // f16 and bf16 rows of 9000 (two passes; compared in f32), and a map of
        // two inputs with a host number: argmax |x - w| + 0.25, w broadcast
        // (no multiply, which an FMA could round differently on the CPU).
        std::vector<float> values(static_cast<std::size_t>(2 * 9000));
        for (std::size_t k = 0; k < values.size(); ++k) values[k] = std::round(4.0f * std::sin(0.37f * float(k)));
        values[8700] = 6.0f;  // row 0's largest, in its second block
        std::vector<sy::half> halves(values.begin(), values.end());
        std::vector<sy::bfloat16> bhalves(values.begin(), values.end());
        void* const dhalf = d.upload(halves);
        void* const dbf = d.upload(bhalves);
        void* const drows = d.device.alloc(2 * 8);
        auto const rows_out = sy::strided_ref::contiguous(drows, dtype::i64, metal, {2}, "index");
        std::vector<std::int64_t> want(2);
        auto const host_rows = sy::strided_ref::contiguous(want.data(), dtype::i64, device_kind::cpu, {2}, "index");
        sy::reduce(sy::tag<device_kind::metal, dtype::f16>{}, rows_out, sy::dims{1}, sy::argmax,
                   sy::strided_ref::contiguous(dhalf, dtype::f16, metal, {2, 9000}, "x"));
        sy::reduce(sy::tag<device_kind::cpu, dtype::f16>{}, host_rows, sy::dims{1}, sy::argmax,
                   sy::strided_ref::contiguous(halves.data(), dtype::f16, device_kind::cpu, {2, 9000}, "x"));
        CHECK(want[0] == 8700);
        CHECK(d.read<std::int64_t>(drows, 2) == want);
        if (d.device.has_bf16()) {
            sy::reduce(sy::tag<device_kind::metal, dtype::bf16>{}, rows_out, sy::dims{1}, sy::argmin,
                       sy::strided_ref::contiguous(dbf, dtype::bf16, metal, {2, 9000}, "x"));
            sy::reduce(sy::tag<device_kind::cpu, dtype::bf16>{}, host_rows, sy::dims{1}, sy::argmin,
                       sy::strided_ref::contiguous(bhalves.data(), dtype::bf16, device_kind::cpu, {2, 9000}, "x"));
            CHECK(d.read<std::int64_t>(drows, 2) == want);
        }
        std::vector<float> w(9000);
        for (std::size_t k = 0; k < w.size(); ++k) w[k] = std::cos(0.01f * float(k));
        void* const dvalues = d.upload(values);
        void* const dw = d.upload(w);
        auto const distance = [](auto a, auto b) { return sy::abs(a - b) + 0.25f; };  // traced on Metal
        sy::transform_reduce(metal_f32{}, rows_out, sy::dims{1}, sy::argmax, distance,
                             sy::strided_ref::contiguous(dvalues, dtype::f32, metal, {2, 9000}, "x"),
                             sy::strided_ref::contiguous(dw, dtype::f32, metal, {9000}, "w"));
        sy::transform_reduce(cpu_f32{}, host_rows, sy::dims{1}, sy::argmax, distance,
                             sy::strided_ref::contiguous(values.data(), dtype::f32, device_kind::cpu, {2, 9000}, "x"),
                             sy::strided_ref::contiguous(w.data(), dtype::f32, device_kind::cpu, {9000}, "w"));
        CHECK(d.read<std::int64_t>(drows, 2) == want);
        for (void* p : {dhalf, dbf, drows, dvalues, dw}) d.device.free(p);
    }
}

TEST_CASE("metal: transform_rows (softmax, as separate calls) matches the CPU", "[msl][metal][rows]") {
    for (bool system : metal_systems) {
        INFO((system ? "Metal" : "stand-in"));
        metal_under_test d(system);
        auto const metal = device_kind::metal;
        std::int64_t const rows = 6, cols = 700;
        std::vector<float> x(static_cast<std::size_t>(rows * cols));
        for (std::size_t k = 0; k < x.size(); ++k) x[k] = 4.0f * std::sin(0.11f * static_cast<float>(k));
        void* const dx = d.upload(x);
        void* const dout = d.device.alloc(x.size() * sizeof(float));
        auto const softmax = [](auto tag, sy::strided_ref const& out, sy::strided_ref const& in) {
            using C = sy::compute_t<decltype(tag)>;
            // exp_to, as the softmax example writes it: traced, it is the shader's exp.
            auto const shifted_exp = [](C v, C max) { return sy::exp_to<sy::storage_t<decltype(tag)>>(v - max); };
            auto const normalized = [](C, C e, C, C sum) { return e * (C(1) / sum); };
            auto const stats = sy::row_stats(sy::amax, sy::row_stat(sy::sum, shifted_exp).with_values());
            sy::transform_rows(tag, out, stats, normalized, in);
        };
        softmax(sy::tag<device_kind::metal, dtype::f32>{},
                sy::strided_ref::contiguous(dout, dtype::f32, metal, {rows, cols}, "out"),
                sy::strided_ref::contiguous(dx, dtype::f32, metal, {rows, cols}, "x"));
        std::vector<float> want(x.size());
        softmax(sy::tag<device_kind::cpu, dtype::f32>{},
                sy::strided_ref::contiguous(want.data(), dtype::f32, device_kind::cpu, {rows, cols}, "out"),
                sy::strided_ref::contiguous(x.data(), dtype::f32, device_kind::cpu, {rows, cols}, "x"));
        std::vector<float> const got = d.read<float>(dout, x.size());
        double worst = 0;
        for (std::size_t k = 0; k < x.size(); ++k) worst = std::max(worst, ulps(got[k], want[k]));
        CHECK(worst <= 8);  // the sums fold in other orders
        d.device.free(dx);
        d.device.free(dout);
    }
}

TEST_CASE("metal: bf16 (MSL 3.1's bfloat) computes in float and rounds once", "[msl][metal][bf16]") {
    for (bool system : metal_systems) {
        INFO((system ? "Metal" : "stand-in"));
        metal_under_test d(system);
        auto const metal = device_kind::metal;
        using metal_bf16 = sy::tag<device_kind::metal, dtype::bf16>;
        using cpu_bf16 = sy::tag<device_kind::cpu, dtype::bf16>;
        std::int64_t const rows = 48, cols = 300;
        std::vector<sy::bfloat16> x(static_cast<std::size_t>(rows * cols));
        for (std::size_t k = 0; k < x.size(); ++k) x[k] = sy::bfloat16(6.0f * std::sin(0.013f * static_cast<float>(k)));
        void* const dx = d.upload(x);
        void* const dout = d.device.alloc(x.size() * sizeof(sy::bfloat16));
        auto const softplus = [](auto v) { return sy::softplus(v) * 0.5f; };
        // Contiguous (four values a thread, bfloat4) and transposed (one).
        for (bool transposed : {false, true}) {
            INFO((transposed ? "transposed" : "contiguous"));
            std::int64_t const sizes[] = {transposed ? cols : rows, transposed ? rows : cols};
            std::int64_t const strides[] = {transposed ? 1 : cols, transposed ? cols : 1};
            sy::transform(metal_bf16{}, sy::strided_ref::make(dout, dtype::bf16, metal, sizes, strides, 2, "out"),
                          softplus, sy::strided_ref::make(dx, dtype::bf16, metal, sizes, strides, 2, "x"));
            std::vector<sy::bfloat16> want(x.size());
            sy::transform(
                cpu_bf16{}, sy::strided_ref::make(want.data(), dtype::bf16, device_kind::cpu, sizes, strides, 2, "out"),
                softplus, sy::strided_ref::make(x.data(), dtype::bf16, device_kind::cpu, sizes, strides, 2, "x"));
            std::vector<sy::bfloat16> const got = d.read<sy::bfloat16>(dout, x.size());
            // Float results within 2 ulp of float round to the same bf16 or a neighbour.
            int worst = 0;
            for (std::size_t k = 0; k < x.size(); ++k) {
                std::uint16_t a, b;
                std::memcpy(&a, &got[k], 2);
                std::memcpy(&b, &want[k], 2);
                worst = std::max(worst, std::abs(int(a) - int(b)));
            }
            CHECK(worst <= 1);
        }
        // Reductions accumulate bf16 in f32, across passes too.
        std::int64_t const length = 9000;
        std::vector<sy::bfloat16> tenths(static_cast<std::size_t>(3 * length), sy::bfloat16(0.1f));
        void* const dt = d.upload(tenths);
        sy::reduce(metal_bf16{}, sy::strided_ref::contiguous(dout, dtype::bf16, metal, {3}, "out"), sy::dims{1},
                   sy::sum, sy::strided_ref::contiguous(dt, dtype::bf16, metal, {3, length}, "x"));
        float const want_sum = float(sy::bfloat16(float(length) * float(sy::bfloat16(0.1f))));
        for (sy::bfloat16 v : d.read<sy::bfloat16>(dout, 3)) CHECK(float(v) == want_sum);
        // A lazy chain in bf16: computes in float, rounds once at the store.
        auto const xs = sy::strided_ref::contiguous(dx, dtype::bf16, metal, {rows, cols}, "x");
        std::vector<sy::bfloat16> const chained = sy::lazy(xs).sub(1.0f).div(4.0f).relu().to_host<sy::bfloat16>();
        std::size_t wrong = 0;
        for (std::size_t k = 0; k < x.size(); ++k)
            wrong += float(chained[k]) != float(sy::bfloat16(std::max((float(x[k]) - 1.0f) / 4.0f, 0.0f)));
        CHECK(wrong == 0);
        for (void* p : {dx, dout, dt}) d.device.free(p);
    }
}

TEST_CASE("metal: a metal_device where Metal is not available says so", "[msl][metal]") {
    CHECK_THROWS_WITH(sy::metal_device{}, Catch::Contains("metal: Metal is not available on this system"));
}
#endif

namespace {

// f16 values between got and want (0 for two NaNs).
double half_ulps(sy::half got, sy::half want) {
    if (std::isnan(static_cast<float>(want))) return std::isnan(static_cast<float>(got)) ? 0 : INFINITY;
    auto const ordered = [](sy::half h) {
        int const magnitude = h.bits & 0x7fff;
        return (h.bits & 0x8000) != 0 ? -magnitude : magnitude;
    };
    return std::abs(ordered(got) - ordered(want));
}

template <typename S>
double worst_distance(std::vector<S> const& got, std::vector<S> const& want) {
    REQUIRE(got.size() == want.size());
    double worst = 0;
    for (std::size_t k = 0; k < got.size(); ++k) {
        if constexpr (std::is_same_v<S, sy::half>)
            worst = std::max(worst, half_ulps(got[k], want[k]));
        else
            worst = std::max(worst, ulps(got[k], want[k]));
    }
    return worst;
}

template <typename S>
bool same_bits(std::vector<S> const& a, std::vector<S> const& b) {
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(S)) == 0;
}

// The chain of the Metal lazy case, on any device: six steps, y of x's shape
// and bias broadcast over rows.
auto metal_lazy_chain(sy::strided_ref const& x, sy::strided_ref const& y, sy::strided_ref const& bias) {
    return sy::lazy(x).mul(y).add(bias).relu().map([](auto v) { return sy::sigmoid(v); }).mul(3.0).div(4.0);
}

// metal_lazy_chain over [rows, cols] on Metal, fused and per step, against
// the CPU. Within `bound` ulps: sigmoid is within 1, the rest is correctly
// rounded on both.
template <typename S>
void metal_lazy_matches_cpu(metal_under_test& d, double bound) {
    std::int64_t const rows = 37, cols = 301, n = rows * cols;  // not whole threadgroups
    constexpr dtype type = sy::dtype_of_v<S>;
    auto const size = static_cast<std::size_t>(n);
    std::vector<S> x(size), y(size), bias(static_cast<std::size_t>(cols)), sentinel(size, S(-7.0f));
    for (std::size_t k = 0; k < size; ++k) {
        x[k] = S(std::sin(0.01f * static_cast<float>(k)) * 3.0f);
        y[k] = S(static_cast<float>(k % 23) * 0.125f - 1.0f);
    }
    for (std::size_t k = 0; k < bias.size(); ++k) bias[k] = S(static_cast<float>(k % 41) * 0.1f - 2.0f);
    auto const cpu_chain =
        metal_lazy_chain(sy::strided_ref::contiguous(x.data(), type, device_kind::cpu, {rows, cols}, "x"),
                         sy::strided_ref::contiguous(y.data(), type, device_kind::cpu, {rows, cols}, "y"),
                         sy::strided_ref::contiguous(bias.data(), type, device_kind::cpu, {cols}, "bias"));
    std::vector<S> const want = cpu_chain.template to_host<S>();
    std::vector<S> const want_per_step = cpu_chain.template to_host<S>(sy::fusion::per_step);

    void* const dx = d.upload(x);
    void* const dy = d.upload(y);
    void* const dbias = d.upload(bias);
    void* const dout = d.upload(sentinel);
    auto const metal = device_kind::metal;
    auto const chain = metal_lazy_chain(sy::strided_ref::contiguous(dx, type, metal, {rows, cols}, "x"),
                                        sy::strided_ref::contiguous(dy, type, metal, {rows, cols}, "y"),
                                        sy::strided_ref::contiguous(dbias, type, metal, {cols}, "bias"));
    STATIC_REQUIRE(decltype(chain)::steps == 6);

    // Fused into memory of ours: one dispatch recorded, nothing run until the readback.
    sy::metal_counters const before = d.device.counters();
    chain.compute(sy::strided_ref::contiguous(dout, type, metal, {rows, cols}, "out"));
    CHECK(d.device.counters().dispatches == before.dispatches + 1);
    CHECK(d.device.counters().commits == before.commits);
    if (d.standin)
        CHECK(same_bits(std::vector<S>(static_cast<S const*>(dout), static_cast<S const*>(dout) + n), sentinel));
    std::vector<S> const got = d.read<S>(dout, size);
    CHECK(d.device.counters().commits == before.commits + 1);
    CHECK(worst_distance(got, want) <= bound);

    // to_host: into a result of the chain's own (freed after), one commit, one readback.
    sy::metal_counters const owned = d.device.counters();
    CHECK(same_bits(chain.template to_host<S>(), got));
    CHECK(d.device.counters().dispatches == owned.dispatches + 1);
    CHECK(d.device.counters().commits == owned.commits + 1);
    CHECK(d.device.counters().readbacks == owned.readbacks + 1);
    CHECK(d.device.counters().live_bytes == owned.live_bytes);

    // One kernel per step, still one commit; f16 rounds after every step, as on the CPU.
    sy::metal_counters const steps = d.device.counters();
    std::vector<S> const per_step = chain.template to_host<S>(sy::fusion::per_step);
    CHECK(d.device.counters().dispatches == steps.dispatches + 6);
    CHECK(d.device.counters().commits == steps.commits + 1);
    CHECK(worst_distance(per_step, want_per_step) <= bound);
    for (void* p : {dx, dy, dbias, dout}) d.device.free(p);
}

}  // namespace

TEST_CASE("metal lazy: chains fuse into one recorded dispatch, split into kernels of 14 arrays, as on the CPU",
          "[msl][metal][lazy]") {
    for (bool system : metal_systems) {
        INFO((system ? "Metal" : "stand-in"));
        metal_under_test d(system);
        metal_lazy_matches_cpu<float>(d, 2);  // sigmoid's ulp, then a product
        metal_lazy_matches_cpu<sy::half>(d, 1);

        // 40 arrays, half of them broadcast rows: one kernel reads at most 14
        // (transform's 16 operands; Metal's 31 buffers per stage allow them,
        // with the uniforms), so 3 kernels of whole steps.
        constexpr std::size_t arrays = 40;
        std::int64_t const rows = 20, cols = 150, n = rows * cols;
        std::vector<float> x(static_cast<std::size_t>(n));
        for (std::size_t k = 0; k < x.size(); ++k) x[k] = static_cast<float>(k % 97) * 0.37f - 11.0f;
        std::vector<std::vector<float>> hosts;
        std::vector<sy::strided_ref> on_cpu, on_metal;
        std::vector<void*> buffers{d.upload(x)};
        for (std::size_t k = 0; k < arrays; ++k) {
            bool const row = k % 2 == 0;
            auto const ref = [&](void* p, device_kind dev) {
                return row ? sy::strided_ref::contiguous(p, dtype::f32, dev, {cols}, "y")
                           : sy::strided_ref::contiguous(p, dtype::f32, dev, {rows, cols}, "y");
            };
            hosts.emplace_back(static_cast<std::size_t>(row ? cols : n));
            for (std::size_t i = 0; i < hosts.back().size(); ++i)
                hosts.back()[i] = static_cast<float>((i * 7 + k) % 13) * 0.25f;
            buffers.push_back(d.upload(hosts.back()));
            on_cpu.push_back(ref(hosts.back().data(), device_kind::cpu));
            on_metal.push_back(ref(buffers.back(), device_kind::metal));
        }
        auto const chain = switchyard_tests::add_all<arrays>(
            sy::lazy(sy::strided_ref::contiguous(buffers[0], dtype::f32, device_kind::metal, {rows, cols}, "x")),
            on_metal);
        std::vector<float> const want =
            switchyard_tests::add_all<arrays>(
                sy::lazy(sy::strided_ref::contiguous(x.data(), dtype::f32, device_kind::cpu, {rows, cols}, "x")),
                on_cpu)
                .to_host<float>();
        sy::metal_counters const before = d.device.counters();
        CHECK(same_bits(chain.to_host<float>(), want));  // the same additions in the same order
        CHECK(d.device.counters().dispatches == before.dispatches + 3);
        CHECK(d.device.counters().commits == before.commits + 1);
        CHECK(same_bits(chain.to_host<float>(sy::fusion::per_step), want));
        CHECK(d.device.counters().dispatches == before.dispatches + 3 + arrays);
        for (void* p : buffers) d.device.free(p);
        CHECK(d.device.counters().live_bytes == 0);
    }

    // A chain ending in a reduction: the chain fused into the reduction's
    // map, one dispatch; then bad input, named: a CPU operand, host memory
    // passed as Metal memory, f64.
    metal_under_test d(false);
    std::vector<float> host(16, 1.0f);
    void* const dx = d.upload(host);
    auto const x = sy::strided_ref::contiguous(dx, dtype::f32, device_kind::metal, {16}, "x");
    auto const cpu_y = sy::strided_ref::contiguous(host.data(), dtype::f32, device_kind::cpu, {16}, "y");
    CHECK_THROWS_WITH(sy::lazy(x).add(cpu_y).to_host<float>(),
                      Catch::Contains("lazy chain: 'y' is on cpu:0 but the chain's input 'x' is on metal:0"));
    auto const fake = sy::strided_ref::contiguous(host.data(), dtype::f32, device_kind::metal, {16}, "fake");
    CHECK_THROWS_WITH(sy::lazy(x).mul(fake).to_host<float>(),
                      Catch::Contains("'fake'") && Catch::Contains("not a live buffer of the current metal device"));
    void* const dd = d.device.alloc(16 * sizeof(double));
    auto const wide = sy::strided_ref::contiguous(dd, dtype::f64, device_kind::metal, {16}, "d");
    CHECK_THROWS_WITH(sy::lazy(wide).relu().compute(wide),
                      Catch::Contains("'lazy chain' has no kernel for device=metal, dtype=f64"));
    std::uint64_t const dispatches = d.device.counters().dispatches;
    CHECK(sy::lazy(x).mul(2.0f).relu().sum().item<float>() == 32.0f);
    CHECK(d.device.counters().dispatches == dispatches + 1);
    for (void* p : {dx, dd}) d.device.free(p);
    CHECK(d.device.counters().live_bytes == 0);
}
