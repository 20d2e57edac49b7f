// switchyard's math functions and select on shader values: the same calls a
// kernel makes on the CPU (switchyard/math.h) record a node when an argument
// is symbolic, and run math.h's function on the host when all are host
// numbers. Emitters implement each node with the same algorithms as math.h
// (shader/wgsl.h), not with the shading language's looser builtins.
#pragma once

#include "switchyard/math.h"
#include "switchyard/shader/value.h"

namespace switchyard {

namespace shader::detail {

// double is accepted here only to be refused with a message that says why,
// at dispatch rather than at compile time: one op source compiles for every
// (device, dtype) point of its table, and Metal's and WebGPU's f64 points
// are refused when called (shader views refuse f64 operands first).
template <typename T>
concept float_value =
    std::is_same_v<T, float> || std::is_same_v<T, half> || std::is_same_v<T, bfloat16> || std::is_same_v<T, double>;

template <typename T, typename F>
value<T> unary_math(op code, value<T> const& x, F host_fn) {
    if constexpr (std::is_same_v<T, double>)
        throw shader_error(
            "switchyard math on a shader device (webgpu, metal): dtype f64 has no shader type (shader languages "
            "have no 64-bit floats); use f32 or f16 (or bf16 on Metal)");
    if (!x.symbolic()) return value<T>(host_cast<T>(host_fn(static_cast<float>(x.host()))));
    return record<T>(code, "a math function", x);
}

}  // namespace shader::detail

// select(cond, a, b): cond ? a : b with both evaluated.
template <typename T>
shader::value<T> select(shader::value<bool> const& cond, shader::value<T> const& a, shader::value<T> const& b) {
    if (!cond.symbolic()) return cond.host() ? a : b;
    return shader::detail::record<T>(shader::op::select, "select", cond, a, b);
}
template <typename T, shader::host_operand<T> U>
shader::value<T> select(shader::value<bool> const& cond, shader::value<T> const& a, U b) {
    return select(cond, a, shader::value<T>(b));
}
template <typename T, shader::host_operand<T> U>
shader::value<T> select(shader::value<bool> const& cond, U a, shader::value<T> const& b) {
    return select(cond, shader::value<T>(a), b);
}
template <shader::host_number U>
shader::value<U> select(shader::value<bool> const& cond, U a, U b) {
    return select(cond, shader::value<U>(a), shader::value<U>(b));
}
template <typename T>
shader::value<T> select(bool cond, shader::value<T> const& a, shader::value<T> const& b) {
    return cond ? a : b;
}

template <shader::detail::float_value T>
shader::value<T> abs(shader::value<T> const& x) {
    return shader::detail::unary_math(shader::op::abs, x, [](float v) { return abs(v); });
}
template <shader::detail::float_value T>
shader::value<T> sqrt(shader::value<T> const& x) {
    return shader::detail::unary_math(shader::op::sqrt, x, [](float v) { return sqrt(v); });
}
template <shader::detail::float_value T>
shader::value<T> exp(shader::value<T> const& x) {
    return shader::detail::unary_math(shader::op::exp, x, [](float v) { return exp(v); });
}
template <shader::detail::float_value T>
shader::value<T> expm1(shader::value<T> const& x) {
    return shader::detail::unary_math(shader::op::expm1, x, [](float v) { return expm1(v); });
}
template <shader::detail::float_value T>
shader::value<T> log(shader::value<T> const& x) {
    return shader::detail::unary_math(shader::op::log, x, [](float v) { return log(v); });
}
template <shader::detail::float_value T>
shader::value<T> log1p(shader::value<T> const& x) {
    return shader::detail::unary_math(shader::op::log1p, x, [](float v) { return log1p(v); });
}
template <shader::detail::float_value T>
shader::value<T> tanh(shader::value<T> const& x) {
    return shader::detail::unary_math(shader::op::tanh, x, [](float v) { return tanh(v); });
}
template <shader::detail::float_value T>
shader::value<T> sigmoid(shader::value<T> const& x) {
    return shader::detail::unary_math(shader::op::sigmoid, x, [](float v) { return sigmoid(v); });
}
template <shader::detail::float_value T>
shader::value<T> softplus(shader::value<T> const& x) {
    return shader::detail::unary_math(shader::op::softplus, x, [](float v) { return softplus(v); });
}
// Shader devices compute exp, softplus and sigmoid in full precision for
// every storage type.
template <typename Storage, shader::detail::float_value T>
shader::value<T> exp_to(shader::value<T> const& x) {
    return exp(x);
}
// And softplus.
template <typename Storage, shader::detail::float_value T>
shader::value<T> softplus_to(shader::value<T> const& x) {
    return softplus(x);
}
// And sigmoid.
template <typename Storage, shader::detail::float_value T>
shader::value<T> sigmoid_to(shader::value<T> const& x) {
    return sigmoid(x);
}

template <typename T>
requires shader::detail::arithmetic_value<T> shader::value<T> min(shader::value<T> const& a,
                                                                  shader::value<T> const& b) {
    return shader::detail::binary<T>(shader::op::min, a, b, [](auto x, auto y) {
        if constexpr (std::is_floating_point_v<decltype(x)>)
            return min(x, y);
        else
            return x < y ? x : y;
    });
}
template <typename T>
requires shader::detail::arithmetic_value<T> shader::value<T> max(shader::value<T> const& a,
                                                                  shader::value<T> const& b) {
    return shader::detail::binary<T>(shader::op::max, a, b, [](auto x, auto y) {
        if constexpr (std::is_floating_point_v<decltype(x)>)
            return max(x, y);
        else
            return x < y ? y : x;
    });
}
template <typename T, shader::host_operand<T> U>
shader::value<T> min(shader::value<T> const& a, U b) {
    return min(a, shader::value<T>(b));
}
template <typename T, shader::host_operand<T> U>
shader::value<T> min(U a, shader::value<T> const& b) {
    return min(shader::value<T>(a), b);
}
template <typename T, shader::host_operand<T> U>
shader::value<T> max(shader::value<T> const& a, U b) {
    return max(a, shader::value<T>(b));
}
template <typename T, shader::host_operand<T> U>
shader::value<T> max(U a, shader::value<T> const& b) {
    return max(shader::value<T>(a), b);
}

}  // namespace switchyard
