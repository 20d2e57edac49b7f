// The MSL emitter (shader/msl.h) without a Mac: each kernel is traced for a
// Metal tag over host buffers, emitted as MSL, compiled by clang as C++
// against the stand-in Metal standard library in tests/metal/, loaded with
// dlopen and run once per thread position of the grid on the CPU; its
// buffers are then compared with the same C++ kernel run by the CPU.
// Also the golden MSL of the torch example's softplus and the emitter's
// errors. Needs SWITCHYARD_MSL_TEST_COMPILER (clang++, set by CMake).
#include <catch2/catch.hpp>

#include <switchyard/shader/msl.h>
#include <switchyard/switchyard.h>

#include <dlfcn.h>
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "golden.h"
#include "torch/softplus_math.h"

namespace sy = switchyard;
using sy::contiguity;
using sy::device_kind;
using sy::dtype;

namespace {

// A compiled kernel: sy_kernel(buffers..., uniforms, thread position).
class msl_kernel {
public:
    msl_kernel(std::string const& text, std::size_t buffers) : buffers_(buffers) {
        static int serial = 0;
        auto const dir = std::filesystem::temp_directory_path() /
                         ("switchyard_msl_" + std::to_string(::getpid()) + "_" + std::to_string(serial++));
        std::filesystem::create_directories(dir);
        std::ofstream(dir / "kernel.metal") << text;
        std::string const command = std::string(SWITCHYARD_MSL_TEST_COMPILER) +
                                    " -std=c++20 -O1 -fPIC -shared -Wno-unknown-attributes -x c++ -I" +
                                    SWITCHYARD_TEST_DIR + "/metal -I" + SWITCHYARD_INCLUDE_DIR + " " +
                                    (dir / "kernel.metal").string() + " -o " + (dir / "kernel.so").string() + " 2> " +
                                    (dir / "errors.txt").string();
        if (std::system(command.c_str()) != 0) {
            std::ifstream errors(dir / "errors.txt");
            std::stringstream s;
            s << errors.rdbuf();
            FAIL("the emitted MSL does not compile under the stand-in:\n" << s.str() << "\n" << text);
        }
        library_ = ::dlopen((dir / "kernel.so").c_str(), RTLD_NOW | RTLD_LOCAL);
        REQUIRE(library_ != nullptr);
        entry_ = ::dlsym(library_, "sy_kernel");
        REQUIRE(entry_ != nullptr);
        std::filesystem::remove_all(dir);
    }
    msl_kernel(msl_kernel const&) = delete;
    msl_kernel& operator=(msl_kernel const&) = delete;
    ~msl_kernel() {
        if (library_) ::dlclose(library_);
    }

    // Every thread of a grid of `grid` threads (past the count included).
    void run(std::vector<void*> const& buffers, std::vector<std::uint32_t> const& uniforms, std::uint32_t grid) const {
        REQUIRE(buffers.size() == buffers_);
        std::vector<std::uint32_t> words = uniforms;
        words.resize((words.size() + 3) / 4 * 4);  // whole uint4s, as a Metal device pads them
        for (std::uint32_t i = 0; i < grid; ++i) call(buffers, words.data(), i);
    }

private:
    // The kernel's parameters are pointers and one uint: called through a
    // pointer type of the same shape.
    template <std::size_t... K>
    static void call_with(void* entry, std::vector<void*> const& b, void const* u, std::uint32_t i,
                          std::index_sequence<K...>) {
        using fn = void (*)(decltype((void)K, static_cast<void*>(nullptr))..., void const*, unsigned);
        reinterpret_cast<fn>(entry)(b[K]..., u, i);
    }
    void call(std::vector<void*> const& b, void const* u, std::uint32_t i) const {
        switch (buffers_) {
            case 1: return call_with(entry_, b, u, i, std::make_index_sequence<1>{});
            case 2: return call_with(entry_, b, u, i, std::make_index_sequence<2>{});
            case 3: return call_with(entry_, b, u, i, std::make_index_sequence<3>{});
            case 4: return call_with(entry_, b, u, i, std::make_index_sequence<4>{});
            case 5: return call_with(entry_, b, u, i, std::make_index_sequence<5>{});
            default: FAIL("a test kernel with " << buffers_ << " buffers");
        }
    }

    std::size_t buffers_;
    void* library_ = nullptr;
    void* entry_ = nullptr;
};

// Traces kernel(Tag, i) for Metal, emits it, compiles it under the stand-in
// and runs it over `count` indices (the buffers are the views' host memory).
template <typename Tag, typename F>
std::string run_on_msl(std::int64_t count, F const& kernel, std::uint32_t lanes = 1) {
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
    msl_kernel const compiled(program.text, buffers.size());
    compiled.run(buffers, program.uniforms, threads + 300);  // a partial last threadgroup and more
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
double worst_ulps(std::vector<float> const& x, F const& f, std::uint32_t lanes = 1) {
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
            run_on_msl<metal_tag<dtype::f32>>(n, body, lanes);
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

TEST_CASE("msl: every math function agrees with switchyard/math.h", "[msl][math]") {
    std::vector<float> wide, positive, unit;
    for (int k = -4000; k <= 4000; ++k) wide.push_back(static_cast<float>(k) * 0.02173f);
    for (int k = 1; k <= 8000; ++k)
        positive.push_back(std::ldexp(1.0f + static_cast<float>(k % 97) / 97.0f, k % 120 - 60));
    for (int k = -3999; k <= 4000; ++k) unit.push_back(static_cast<float>(k) / 4001.0f);
    float const inf = INFINITY, nan = NAN;
    for (auto* v : {&wide, &positive, &unit}) v->insert(v->end(), {inf, -inf, nan, 0.0f, -0.0f});
    CHECK(worst_ulps(wide, [](auto v) { return sy::exp(v); }) <= 1);
    CHECK(worst_ulps(wide, [](auto v) { return sy::expm1(v); }) <= 1);
    CHECK(worst_ulps(positive, [](auto v) { return sy::log(v); }) <= 1);
    CHECK(worst_ulps(unit, [](auto v) { return sy::log1p(v); }) <= 1);
    CHECK(worst_ulps(wide, [](auto v) { return sy::tanh(v); }) <= 1);
    CHECK(worst_ulps(wide, [](auto v) { return sy::sigmoid(v); }) <= 1);
    CHECK(worst_ulps(wide, [](auto v) { return sy::softplus(v); }) <= 1);
    CHECK(worst_ulps(positive, [](auto v) { return sy::sqrt(v); }) == 0);
    CHECK(worst_ulps(wide, [](auto v) { return sy::abs(v) * 2.0f - 1.0f; }) == 0);
    // The vector form: four indices per thread (a count divisible by 4),
    // helpers per component.
    wide.resize(wide.size() / 4 * 4);
    CHECK(worst_ulps(
              wide, [](auto v) { return sy::exp(v) + sy::tanh(v); }, 4) <= 2);
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
