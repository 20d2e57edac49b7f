// Shader tracing and the WGSL emitter without a GPU: what a traced kernel
// records, the golden WGSL of the torch example's softplus, the errors of
// kernels that cannot be traced, kernel_types, and lazy chains on the CPU.
#include <catch2/catch.hpp>

#include <switchyard/switchyard.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "golden.h"
#include "torch/softplus_math.h"
#include "lazy_chains.h"

namespace sy = switchyard;
using sy::contiguity;
using sy::device_kind;
using sy::dtype;

namespace {

using webgpu_f32 = sy::tag<device_kind::webgpu, dtype::f32, contiguity::contiguous>;
using webgpu_f16_strided = sy::tag<device_kind::webgpu, dtype::f16, contiguity::strided>;

// Views over stand-in buffer handles: tracing never touches memory.
int buffer_a, buffer_b;

template <typename Tag, typename F>
sy::shader::trace trace_of(F const& kernel, bool has_f16 = true) {
    sy::shader::trace t("webgpu", 12345, has_f16);
    sy::shader::trace_scope const scope(t);
    kernel(Tag{}, 12345);
    return t;
}

// The torch example's softplus kernel body over webgpu views.
sy::shader::trace softplus_trace(double beta, double threshold) {
    using storage = sy::storage_t<webgpu_f32>;
    using compute = sy::compute_t<webgpu_f32>;
    sy::flat_in<device_kind::webgpu, dtype::f32, contiguity::contiguous> const in(
        sy::strided_ref::contiguous(&buffer_a, dtype::f32, device_kind::webgpu, {1000}, "x"));
    sy::flat_out<device_kind::webgpu, dtype::f32, contiguity::contiguous> const out(
        sy::strided_ref::contiguous(&buffer_b, dtype::f32, device_kind::webgpu, {1000}, "y"));
    auto const b = static_cast<compute>(beta), inv_b = static_cast<compute>(1.0 / beta),
               t = static_cast<compute>(threshold);
    return trace_of<webgpu_f32>([=](webgpu_f32, std::int64_t i) {
        out[i] = static_cast<storage>(
            switchyard_examples::softplus_scalar<storage>(static_cast<compute>(in[i]), b, inv_b, t));
    });
}

}  // namespace

TEST_CASE("kernel_types: plain types on CPU and CUDA, shader values on shader devices", "[shader]") {
    STATIC_REQUIRE(std::is_same_v<sy::storage_t<sy::tag<device_kind::cpu, dtype::bf16>>, sy::bfloat16>);
    STATIC_REQUIRE(std::is_same_v<sy::compute_t<sy::tag<device_kind::cpu, dtype::bf16>>, float>);
    STATIC_REQUIRE(std::is_same_v<sy::storage_t<sy::tag<device_kind::cuda, dtype::f64>>, double>);
    STATIC_REQUIRE(std::is_same_v<sy::storage_t<webgpu_f32>, sy::shader::value<float>>);
    STATIC_REQUIRE(std::is_same_v<sy::storage_t<webgpu_f16_strided>, sy::shader::value<sy::half>>);
    STATIC_REQUIRE(std::is_same_v<sy::compute_t<webgpu_f16_strided>, sy::shader::value<float>>);
}

template <typename A, typename B>
concept multipliable = requires(A a, B b) {
    a* b;
};

TEST_CASE("shader values: integer arithmetic follows WGSL, and never drops a fraction", "[shader]") {
    using sy::shader::value;
    STATIC_REQUIRE(multipliable<value<std::int32_t>, int>);
    STATIC_REQUIRE_FALSE(multipliable<value<std::int32_t>, double>);  // would multiply by 1 for 1.5
    STATIC_REQUIRE(multipliable<value<float>, double>);               // rounded to float, like a literal
    CHECK((value<std::int32_t>(7) / 0).host() == 7);
    CHECK((value<std::int32_t>(7) % 0).host() == 0);
    CHECK((value<std::int32_t>(INT32_MIN) / -1).host() == INT32_MIN);
    CHECK((value<std::int32_t>(INT32_MAX) + 1).host() == INT32_MIN);
    CHECK((value<std::uint32_t>(0u) - 1u).host() == 0xFFFFFFFFu);
}

TEST_CASE("shader math refuses f64 when called, naming the dtype", "[shader]") {
    // Compiles, so that one op source builds for every (device, dtype) point
    // of a table; the shader devices' f64 points are refused when run.
    sy::shader::value<double> const x(2.0);
    CHECK_THROWS_WITH(sy::sqrt(x), Catch::Contains("dtype f64 has no shader type"));
    CHECK_THROWS_AS(sy::exp(x), sy::shader::shader_error);
}

TEST_CASE("shader values: host numbers stay on the host, device values record nodes", "[shader]") {
    using sy::shader::value;
    value<float> const two = 2.0f;
    value<float> const six = two * 3 + sy::exp(value<float>(0.0f)) - 1.0f;  // no trace needed
    CHECK_FALSE(six.symbolic());
    CHECK(six.host() == 6.0f);
    CHECK(static_cast<bool>(two < six));
    CHECK(sy::select(two > six, two, six).host() == 6.0f);

    sy::shader::trace t("webgpu", 0, false);
    sy::shader::trace_scope const scope(t);
    value<float> const x = value<float>::from_node(t.uniform(sy::shader::scalar::f32, 0));
    value<float> const y = sy::max(x * two, 0.0f);
    CHECK(y.symbolic());
    CHECK_THROWS_WITH(static_cast<bool>(y > 1.0f), Catch::Contains("switchyard::select"));
    CHECK_THROWS_WITH(value<sy::half>(2.0f).node_in(t), Catch::Contains("shader-f16"));
    CHECK_THROWS_WITH(value<double>(2.0).node_in(t), Catch::Contains("f64") && Catch::Contains("webgpu"));
}

TEST_CASE("shader tracing: scalars become uniforms, so the text does not depend on them", "[shader]") {
    sy::shader::trace const a = softplus_trace(1.0, 20.0);
    sy::shader::trace const b = softplus_trace(2.5, 7.0);
    CHECK(sy::shader::emit_wgsl(a).text == sy::shader::emit_wgsl(b).text);
    CHECK(sy::shader::emit_wgsl(a).uniforms != sy::shader::emit_wgsl(b).uniforms);
    REQUIRE(a.bindings().size() == 2);
    CHECK_FALSE(a.bindings()[0].writable);
    CHECK(a.bindings()[1].writable);
    CHECK(a.bindings()[0].bytes == 4000);
}

// Issue 18: the emitter walked the trace recursively and a kernel of about
// 150,000 chained operations overflowed an 8 MiB stack.
TEST_CASE("shader tracing: a chain of 400000 operations emits without deep recursion", "[shader]") {
    sy::flat_in<device_kind::webgpu, dtype::f32, contiguity::contiguous> const in(
        sy::strided_ref::contiguous(&buffer_a, dtype::f32, device_kind::webgpu, {1000}, "x"));
    sy::flat_out<device_kind::webgpu, dtype::f32, contiguity::contiguous> const out(
        sy::strided_ref::contiguous(&buffer_b, dtype::f32, device_kind::webgpu, {1000}, "y"));
    constexpr int steps = 400000;
    sy::shader::trace const traced = trace_of<webgpu_f32>([=](webgpu_f32, std::int64_t i) {
        auto v = in[i];
        for (int k = 0; k < steps; ++k) v = sy::sqrt(v);
        out[i] = v;
    });
    std::string const wgsl = sy::shader::emit_wgsl(traced).text;
    std::size_t roots = 0;
    for (std::size_t at = wgsl.find("sqrt("); at != std::string::npos; at = wgsl.find("sqrt(", at + 1)) ++roots;
    CHECK(roots == steps);
}

TEST_CASE("shader tracing: golden WGSL of the torch example's softplus", "[shader][golden]") {
    std::string const wgsl = sy::shader::emit_wgsl(softplus_trace(1.0, 20.0)).text;
    check_golden(wgsl, "softplus_f32.wgsl");
}

TEST_CASE("shader tracing: contiguous kernels run 4 indices per invocation as vec4", "[shader]") {
    sy::shader::trace const t = softplus_trace(1.0, 20.0);
    REQUIRE(sy::shader::vectorizable(t));
    sy::shader::wgsl_program const scalar = sy::shader::emit_wgsl(t);
    sy::shader::wgsl_program const vec = sy::shader::emit_wgsl(t, 4);
    INFO(vec.text);
    CHECK(vec.text.find("array<vec4<f32>>") != std::string::npos);
    CHECK(vec.text.find("array<f32>") == std::string::npos);
    CHECK(vec.text.find(": vec4<bool> = ") != std::string::npos);              // comparisons per component
    CHECK(vec.text.find("vec4<f32>(bitcast<f32>(u.w[") != std::string::npos);  // uniforms splatted
    // The scalar helpers are called once per component.
    CHECK(vec.text.find("sy_softplus(v2.x), sy_softplus(v2.y), sy_softplus(v2.z), sy_softplus(v2.w)") !=
          std::string::npos);
    CHECK(vec.uniforms == scalar.uniforms);
    CHECK(vec.bindings == scalar.bindings);

    // A strided view computes its element from the index: not vectorizable.
    auto const xt = sy::strided_ref::make(&buffer_a, dtype::f16, device_kind::webgpu, {5, 4}, {1, 5}, "x.T");
    auto const y = sy::strided_ref::contiguous(&buffer_b, dtype::f16, device_kind::webgpu, {5, 4}, "y");
    sy::flat_in<device_kind::webgpu, dtype::f16, contiguity::strided> const in(xt);
    sy::flat_out<device_kind::webgpu, dtype::f16, contiguity::strided> const out(y);
    auto const strided = trace_of<webgpu_f16_strided>([=](webgpu_f16_strided, std::int64_t i) { out[i] = in[i]; });
    CHECK_FALSE(sy::shader::vectorizable(strided));
}

TEST_CASE("shader tracing: strided f16 views walk sizes and strides from uniforms", "[shader]") {
    // A transposed 3 x 5 f16 array: the walk divides by one size, whatever the shape.
    auto const xt = sy::strided_ref::make(&buffer_a, dtype::f16, device_kind::webgpu, {5, 3}, {1, 5}, "x.T");
    auto const y = sy::strided_ref::contiguous(&buffer_b, dtype::f16, device_kind::webgpu, {5, 3}, "y");
    sy::flat_in<device_kind::webgpu, dtype::f16, contiguity::strided> const in(xt);
    sy::flat_out<device_kind::webgpu, dtype::f16, contiguity::strided> const out(y);
    using storage = sy::storage_t<webgpu_f16_strided>;
    using compute = sy::compute_t<webgpu_f16_strided>;
    auto const t = trace_of<webgpu_f16_strided>([=](webgpu_f16_strided, std::int64_t i) {
        out[i] = static_cast<storage>(sy::sigmoid(static_cast<compute>(in[i])));
    });
    std::string const wgsl = sy::shader::emit_wgsl(t).text;
    CHECK(wgsl.find("enable f16;") != std::string::npos);
    CHECK(wgsl.find("array<f16>") != std::string::npos);
    CHECK(wgsl.find(" % ") != std::string::npos);            // the index walk
    CHECK(wgsl.find("sy_sigmoid(v") != std::string::npos);   // computed in f32
    CHECK(wgsl.find(": f16 = f16(v") != std::string::npos);  // stored as f16
    CHECK(t.bindings()[0].bytes == 15 * 2);
    // Without shader-f16 the same kernel is refused, naming the feature.
    CHECK_THROWS_WITH(trace_of<webgpu_f16_strided>(
                          [=](webgpu_f16_strided, std::int64_t i) { out[i] = static_cast<storage>(in[i]); }, false),
                      Catch::Contains("shader-f16"));
}

TEST_CASE("shader tensor views: coordinates are the index, host constants or device integers", "[shader]") {
    // ijk is [N, 3] i32 read through a transpose of a [3, N] buffer; codes is [N].
    std::int64_t const n = 10;
    auto const ijk_ref = sy::strided_ref::make(&buffer_a, dtype::i32, device_kind::webgpu, {n, 3}, {1, n}, "ijk");
    auto const codes_ref = sy::strided_ref::contiguous(&buffer_b, dtype::i32, device_kind::webgpu, {n}, "codes");
    sy::tensor_in<device_kind::webgpu, dtype::i32, 2, contiguity::strided> const ijk(ijk_ref);
    sy::tensor_out<device_kind::webgpu, dtype::i32, 1, contiguity::contiguous> const codes(codes_ref);
    using webgpu_i32 = sy::tag<device_kind::webgpu, dtype::i32, contiguity::strided>;
    auto const t =
        trace_of<webgpu_i32>([=](webgpu_i32, std::int64_t i) { codes(i) = ijk(i, 0) * 9 + ijk(i, 1) * 3 + ijk(i, 2); });
    std::string const wgsl = sy::shader::emit_wgsl(t).text;
    INFO(wgsl);
    CHECK(wgsl.find("b1[i] = ") != std::string::npos);     // codes(i): the index itself
    CHECK(wgsl.find("i * bitcast") == std::string::npos);  // ijk's row stride is 1: no multiply
    CHECK_FALSE(sy::shader::vectorizable(t));              // ijk's columns are n apart
    // The column stride (10) and the constant columns are uniform words.
    CHECK(std::count(t.uniforms().begin(), t.uniforms().end(), 10u) >= 1);

    // A gather: a coordinate read from another view, as an i32 device value.
    auto const table_ref = sy::strided_ref::contiguous(&buffer_a, dtype::f32, device_kind::webgpu, {7}, "table");
    auto const index_ref = sy::strided_ref::contiguous(&buffer_b, dtype::i32, device_kind::webgpu, {n}, "index");
    sy::tensor_in<device_kind::webgpu, dtype::f32, 1, contiguity::contiguous> const table(table_ref);
    sy::flat_in<device_kind::webgpu, dtype::i32, contiguity::contiguous> const index(index_ref);
    int out_buffer = 0;
    sy::flat_out<device_kind::webgpu, dtype::f32, contiguity::contiguous> const out(
        sy::strided_ref::contiguous(&out_buffer, dtype::f32, device_kind::webgpu, {n}, "out"));
    auto const gather = trace_of<webgpu_f32>([=](webgpu_f32, std::int64_t i) { out[i] = table(index[i]); });
    CHECK_FALSE(sy::shader::vectorizable(gather));  // the table is read at a loaded coordinate
    CHECK(sy::shader::emit_wgsl(gather).text.find("u32(") != std::string::npos);

    // A constant outside its dimension is refused, naming the view and coordinate.
    CHECK_THROWS_WITH(trace_of<webgpu_i32>([=](webgpu_i32, std::int64_t i) { codes(i) = ijk(i, 3); }),
                      Catch::Contains("'ijk'") && Catch::Contains("coordinate 1 is 3, outside [0, 3)"));
    // So is host arithmetic on the index, which lands outside every dimension.
    CHECK_THROWS_WITH(trace_of<webgpu_i32>([=](webgpu_i32, std::int64_t i) { codes(i) = ijk(i + 1, 0); }),
                      Catch::Contains("coordinate 0"));
    // The rank must match.
    CHECK_THROWS_WITH((sy::tensor_in<device_kind::webgpu, dtype::i32, 1, contiguity::strided>(ijk_ref)),
                      Catch::Contains("'ijk'") && Catch::Contains("rank 2"));
}

TEST_CASE("shader views: unsupported dtypes and layouts are refused at construction", "[shader]") {
    auto const neg = sy::strided_ref::make(&buffer_a, dtype::f32, device_kind::webgpu, {4}, {-1}, "reversed");
    CHECK_THROWS_WITH((sy::flat_in<device_kind::webgpu, dtype::f32, contiguity::strided>(neg)),
                      Catch::Contains("'reversed'") && Catch::Contains("negative stride"));
    auto const bf = sy::strided_ref::contiguous(&buffer_a, dtype::bf16, device_kind::webgpu, {4}, "w");
    CHECK_THROWS_WITH((sy::flat_in<device_kind::webgpu, dtype::bf16, contiguity::contiguous>(bf)),
                      Catch::Contains("'w'") && Catch::Contains("bf16"));
    auto const cpu = sy::strided_ref::contiguous(&buffer_a, dtype::f32, device_kind::cpu, {4}, "x");
    CHECK_THROWS_WITH((sy::flat_in<device_kind::webgpu, dtype::f32, contiguity::contiguous>(cpu)),
                      Catch::Contains("'x' is on cpu"));
}

TEST_CASE("lazy chains on the CPU fuse into one pass over any layout", "[lazy]") {
    std::vector<float> x(12), y(12), out(12, -1.0f);
    for (int i = 0; i < 12; ++i) {
        x[static_cast<std::size_t>(i)] = static_cast<float>(i - 6);
        y[static_cast<std::size_t>(i)] = static_cast<float>(i) * 0.5f;
    }
    // x is read through its transpose; y and out are row-major 4 x 3.
    auto const xt = sy::strided_ref::make(x.data(), dtype::f32, device_kind::cpu, {4, 3}, {1, 4}, "x.T");
    auto const yr = sy::strided_ref::contiguous(y.data(), dtype::f32, device_kind::cpu, {4, 3}, "y");
    auto const outr = sy::strided_ref::contiguous(out.data(), dtype::f32, device_kind::cpu, {4, 3}, "out");
    auto const chain = sy::lazy(xt).relu().mul(2.0f).add(yr).map([](auto v) { return sy::tanh(v); });
    STATIC_REQUIRE(decltype(chain)::steps == 4);
    STATIC_REQUIRE(decltype(chain)::array_operands == 1);
    chain.compute(outr);
    for (int r = 0; r < 4; ++r)
        for (int c = 0; c < 3; ++c) {
            float const xv = x[static_cast<std::size_t>(c * 4 + r)], yv = y[static_cast<std::size_t>(r * 3 + c)];
            CHECK(out[static_cast<std::size_t>(r * 3 + c)] == sy::tanh(std::max(xv, 0.0f) * 2.0f + yv));
        }
    CHECK(chain.to_host<float>() == out);
    sy::lazy_result const owned = chain.compute();  // row-major memory of its own
    CHECK(owned.to_host<float>() == out);
    std::vector<float> const halved = sy::lazy(owned.ref()).mul(0.5f).to_host<float>();
    CHECK(halved[5] == out[5] * 0.5f);

    // bf16 computes in f32 and rounds once at the store.
    std::vector<sy::bfloat16> xb(12);
    for (std::size_t i = 0; i < 12; ++i) xb[i] = sy::bfloat16(x[i]);
    auto const xbr = sy::strided_ref::contiguous(xb.data(), dtype::bf16, device_kind::cpu, {12}, "xb");
    std::vector<sy::bfloat16> const hb = sy::lazy(xbr).sub(1.0).div(4.0).to_host<sy::bfloat16>();
    CHECK(static_cast<float>(hb[0]) == static_cast<float>(sy::bfloat16((-6.0f - 1.0f) / 4.0f)));
}

TEST_CASE("lazy chains take broadcast arrays and split where one kernel cannot read them all", "[lazy]") {
    std::vector<float> x(12), bias{0.5f, 1.5f, 2.5f}, ones(12, 1.0f), out(12);
    for (int i = 0; i < 12; ++i) x[static_cast<std::size_t>(i)] = static_cast<float>(i - 6);
    auto const xr = sy::strided_ref::contiguous(x.data(), dtype::f32, device_kind::cpu, {4, 3}, "x");
    auto const br = sy::strided_ref::contiguous(bias.data(), dtype::f32, device_kind::cpu, {3}, "bias");
    auto const onesr = sy::strided_ref::contiguous(ones.data(), dtype::f32, device_kind::cpu, {4, 3}, "ones");
    std::vector<float> const biased = sy::lazy(xr).add(br).relu().to_host<float>();
    for (std::size_t i = 0; i < 12; ++i) CHECK(biased[i] == std::max(x[i] + bias[i % 3], 0.0f));

    // 20 arrays: two kernels of at most 14 arrays (transform's 16 operands).
    auto const chain = switchyard_tests::add_each<20>(sy::lazy(xr).mul(2.0), onesr);
    STATIC_REQUIRE(decltype(chain)::array_operands == 20);
    std::vector<float> const fused = chain.to_host<float>();
    for (std::size_t i = 0; i < 12; ++i) CHECK(fused[i] == x[i] * 2 + 20);
    CHECK(chain.to_host<float>(sy::fusion::per_step) == fused);
    // In place: the output is the chain's input, so no ping-pong through it.
    chain.compute(xr);
    CHECK(x == fused);
    // An output that overlaps an operand without being it is refused before
    // any kernel runs, however the chain is split.
    std::vector<float> shifted(13, 7.0f);
    auto const a = sy::strided_ref::contiguous(shifted.data(), dtype::f32, device_kind::cpu, {4, 3}, "a");
    auto const a_plus_one = sy::strided_ref::contiguous(shifted.data() + 1, dtype::f32, device_kind::cpu, {4, 3}, "b");
    auto const split = switchyard_tests::add_each<20>(sy::lazy(a).mul(2.0), onesr);
    for (sy::fusion mode : {sy::fusion::full, sy::fusion::per_step})
        CHECK_THROWS_WITH(split.compute(a_plus_one, mode), Catch::Contains("output 'b' shares memory with 'a'"));
    CHECK(shifted == std::vector<float>(13, 7.0f));
}

TEST_CASE("lazy chains refuse operands that do not match, naming them", "[lazy]") {
    std::vector<float> x(6), y(5);
    std::vector<double> d(6);
    auto const xr = sy::strided_ref::contiguous(x.data(), dtype::f32, device_kind::cpu, {6}, "x");
    auto const yr = sy::strided_ref::contiguous(y.data(), dtype::f32, device_kind::cpu, {5}, "y");
    auto const dr = sy::strided_ref::contiguous(d.data(), dtype::f64, device_kind::cpu, {6}, "d");
    CHECK_THROWS_WITH(sy::lazy(xr).add(yr).to_host<float>(), Catch::Contains("'y'") && Catch::Contains("shape"));
    CHECK_THROWS_WITH(sy::lazy(xr).add(dr).to_host<float>(), Catch::Contains("'d' has dtype f64"));
    CHECK_THROWS_WITH(sy::lazy(xr).relu().to_host<double>(), Catch::Contains("f32"));
    auto const gpu = sy::strided_ref::contiguous(x.data(), dtype::f32, device_kind::webgpu, {6}, "g");
    CHECK_THROWS_WITH(sy::lazy(xr).add(gpu).to_host<float>(), Catch::Contains("'g' is on webgpu"));
    std::vector<float> o(5);
    auto const outr = sy::strided_ref::contiguous(o.data(), dtype::f32, device_kind::cpu, {5}, "o");
    CHECK_THROWS_WITH(sy::lazy(xr).relu().compute(outr),
                      Catch::Contains("output 'o' has shape [5]") && Catch::Contains("'x' has [6]"));
}

TEST_CASE("lazy chains end in a fused reduction: sum, reduce, dot", "[lazy][reduce]") {
    std::vector<float> x(12), y{0.5f, 1.5f, 2.5f}, ones(12, 1.0f);
    for (int i = 0; i < 12; ++i) x[static_cast<std::size_t>(i)] = static_cast<float>(i - 6);
    // x read through its transpose: 4 x 3 with strides (1, 4).
    auto const xt = sy::strided_ref::make(x.data(), dtype::f32, device_kind::cpu, {4, 3}, {1, 4}, "x.T");
    auto const yr = sy::strided_ref::contiguous(y.data(), dtype::f32, device_kind::cpu, {3}, "y");
    auto const value = [&](std::size_t r, std::size_t c) { return std::max(x[c * 4 + r], 0.0f) * 2.0f + y[c]; };

    auto const rows = sy::lazy(xt).relu().mul(2.0f).add(yr).sum(sy::dims{-1});
    CHECK(rows.shape().rank == 1);
    std::vector<float> const row_sums = rows.to_host<float>();
    REQUIRE(row_sums.size() == 4);
    for (std::size_t r = 0; r < 4; ++r) CHECK(row_sums[r] == value(r, 0) + value(r, 1) + value(r, 2));

    auto const kept = sy::lazy(xt).relu().mul(2.0f).add(yr).reduce(sy::amax, sy::dims{0}, true);
    CHECK(kept.shape().rank == 2);
    CHECK(kept.shape().sizes[0] == 1);
    std::vector<float> const col_max = kept.to_host<float>();
    for (std::size_t c = 0; c < 3; ++c)
        CHECK(col_max[c] == std::max({value(0, c), value(1, c), value(2, c), value(3, c)}));

    auto const xr = sy::strided_ref::contiguous(x.data(), dtype::f32, device_kind::cpu, {4, 3}, "x");
    float want = 0;
    for (std::size_t i = 0; i < 12; ++i) want += x[i] * y[i % 3];
    CHECK(sy::dot(xr, yr).item<float>() == Approx(want));

    // 20 arrays exceed one kernel: the chain's values go through memory first.
    auto const onesr = sy::strided_ref::contiguous(ones.data(), dtype::f32, device_kind::cpu, {4, 3}, "ones");
    auto const wide = switchyard_tests::add_each<20>(sy::lazy(xr).mul(2.0), onesr).sum();
    CHECK(wide.item<float>() == Approx(2.0 * (-6 + 5) * 6 + 20.0 * 12));

    // Into a given output; bad dims and outputs are named.
    float total = -1;
    auto const scalar_out = sy::strided_ref::make(&total, dtype::f32, device_kind::cpu, {}, {}, "total");
    sy::lazy(xr).sum().compute(scalar_out);
    CHECK(total == -6.0f);
    CHECK_THROWS_WITH(sy::lazy(xr).sum(sy::dims{2}).compute(),
                      Catch::Contains("lazy reduction: dimension 2 in dims [2] is out of range"));
    CHECK_THROWS_WITH(sy::lazy(xr).sum(sy::dims{0}).compute(scalar_out),
                      Catch::Contains("output 'total' has shape []"));
    CHECK_THROWS_WITH(sy::lazy(xr).sum(sy::dims{0}).item<float>(), Catch::Contains("item() of a result with 3"));
}
