// shader::value<T>: the scalar a kernel computes with on a shader device. It
// stands for a T (float, half, int32, uint32, bool) and is either a host
// number or a node of the active trace (shader/trace.h):
//
//     value<float> b = 2.0f;        // a host number: arithmetic on host numbers runs on the host
//     value<float> x = in[i];       // symbolic: a load recorded in the trace
//     value<float> y = b * x;       // symbolic: b becomes a uniform word, the multiply a node
//
// Ops get these through storage_t<Tag> and compute_t<Tag> (kernel_types.h),
// so the same kernel text computes with float on CPU and CUDA and with
// value<float> on WebGPU. Arithmetic, comparisons and logic are overloaded;
// comparisons give value<bool>. Converting a symbolic value<bool> to bool (an
// `if`, `?:`, `&&` on a device value) throws: use switchyard::select.
// Conversions between value types are explicit (static_cast), as
// static_cast<C>(x) in the ops.
#pragma once

#include <concepts>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <type_traits>

#include "switchyard/core/half.h"
#include "switchyard/shader/trace.h"

namespace switchyard::shader {

// A C++ number a value can be made from.
template <typename U>
concept host_number = std::is_arithmetic_v<U> || std::is_same_v<U, half> || std::is_same_v<U, bfloat16>;

// A host number that may meet a value<T> in arithmetic: converting it to T
// must not drop a fraction (value<int32_t> * 1.5 would multiply by 1). A
// double meeting a value<float> is rounded to float, as a float literal would
// be; write float literals to match the CPU exactly.
template <typename U, typename T>
concept host_operand =
    host_number<U> && !(std::is_integral_v<T> && !(std::is_integral_v<U> || std::is_same_v<U, bool>));

template <typename T, typename U>
constexpr T host_cast(U u) {
    if constexpr (std::is_same_v<T, half> || std::is_same_v<T, bfloat16>)
        return T(static_cast<float>(u));
    else if constexpr (std::is_same_v<U, half> || std::is_same_v<U, bfloat16>)
        return static_cast<T>(static_cast<float>(u));
    else
        return static_cast<T>(u);
}

template <typename T>
class value {
public:
    using type = T;

    value() = default;
    // A host number, converted to T (so value<float>(1) and value<half>(2.0f) work).
    template <host_number U>
    value(U v) : host_(host_cast<T>(v)) {}  // NOLINT: implicit, like the number itself
    // Conversion between value types: static_cast<value<float>>(x).
    template <typename U>
    requires(!std::is_same_v<U, T>) explicit value(value<U> const& other) {
        if (!other.symbolic()) {
            host_ = host_cast<T>(other.host());
            return;
        }
        trace& t = active("a conversion");
        require_supported<T>(t);
        node_ = t.add({op::convert, scalar_of<T>, other.node_id()});
    }

    static value from_node(std::int32_t id) {
        value v;
        v.node_ = id;
        return v;
    }

    bool symbolic() const noexcept { return node_ >= 0; }
    T host() const noexcept { return host_; }
    std::int32_t node_id() const noexcept { return node_; }

    // The node of this value in `t`: a host number becomes a uniform word.
    std::int32_t node_in(trace& t) const {
        if (symbolic()) return node_;
        require_supported<T>(t);
        return t.uniform(scalar_of<T>, uniform_word(host_));
    }

    // Only a host value<bool> has a truth value the host can branch on.
    explicit operator bool() const requires std::is_same_v<T, bool> {
        if (symbolic()) {
            trace const& t = active("a branch");
            throw shader_error(std::string(t.device()) +
                               ": a kernel branched on a value known only on the device (an `if`, `?:`, `&&` or "
                               "`||` on an element); write it with switchyard::select so it can run on shader "
                               "devices");
        }
        return host_;
    }

    template <typename U>
    value& operator+=(U const& o) {
        return *this = *this + o;
    }
    template <typename U>
    value& operator-=(U const& o) {
        return *this = *this - o;
    }
    template <typename U>
    value& operator*=(U const& o) {
        return *this = *this * o;
    }
    template <typename U>
    value& operator/=(U const& o) {
        return *this = *this / o;
    }

private:
    std::int32_t node_ = -1;
    T host_{};
};

template <typename V>
inline constexpr bool is_value_v = false;
template <typename T>
inline constexpr bool is_value_v<value<T>> = true;

// A value or something that converts to value<T> (a host number).
template <typename T, typename U>
value<T> as_value(U const& u) {
    if constexpr (std::is_same_v<U, value<T>>)
        return u;
    else
        return value<T>(u);
}

namespace detail {

// A node applying `code` to the operands' nodes; R is the result type.
template <typename R, typename... T>
value<R> record(op code, char const* what, value<T> const&... operands) {
    trace& t = active(what);
    require_supported<R>(t);
    std::int32_t ids[3] = {-1, -1, -1};
    int k = 0;
    ((ids[k++] = operands.node_in(t)), ...);
    return value<R>::from_node(t.add({code, scalar_of<R>, ids[0], ids[1], ids[2]}));
}

template <typename T>
using host_arith_t = std::conditional_t<std::is_same_v<T, half> || std::is_same_v<T, bfloat16>, float, T>;

// i32/u32 arithmetic on the host as WGSL defines it: wrapping, x / 0 = x,
// x % 0 = 0, INT_MIN / -1 = INT_MIN (C++ leaves these undefined).
template <typename T>
std::optional<T> wgsl_integer_fold(op code, T a, T b) {
    using U = std::make_unsigned_t<T>;
    auto const ua = static_cast<U>(a), ub = static_cast<U>(b);
    bool const overflowing = std::is_signed_v<T> && a == std::numeric_limits<T>::min() && b == T(-1);
    switch (code) {
        case op::add: return static_cast<T>(static_cast<U>(ua + ub));
        case op::sub: return static_cast<T>(static_cast<U>(ua - ub));
        case op::mul: return static_cast<T>(static_cast<U>(ua * ub));
        case op::div: return b == 0 ? a : overflowing ? a : static_cast<T>(a / b);
        case op::rem: return b == 0 || overflowing ? T(0) : static_cast<T>(a % b);
        default: return std::nullopt;
    }
}

// a `code` b: on the host when both are host numbers, else recorded.
template <typename R, typename T, typename HostOp>
value<R> binary(op code, value<T> const& a, value<T> const& b, HostOp host_op) {
    if (!a.symbolic() && !b.symbolic()) {
        if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool> && std::is_same_v<R, T>) {
            if (auto const folded = wgsl_integer_fold(code, a.host(), b.host())) return value<R>(*folded);
        }
        using H = host_arith_t<T>;
        return value<R>(host_cast<R>(host_op(host_cast<H>(a.host()), host_cast<H>(b.host()))));
    }
    return record<R>(code, "arithmetic", a, b);
}

template <typename T>
concept arithmetic_value = !std::is_same_v<T, bool>;
template <typename T>
concept integer_value = std::is_integral_v<T> && !std::is_same_v<T, bool>;

}  // namespace detail

// Binary operators: value op value, value op number, number op value.
#define SWITCHYARD_SHADER_BINARY(sym, code, result, constraint)                            \
    template <typename T>                                                                  \
    requires constraint value<result>                                                      \
    operator sym(value<T> const& a, value<T> const& b) {                                   \
        return detail::binary<result>(code, a, b, [](auto x, auto y) { return x sym y; }); \
    }                                                                                      \
    template <typename T, host_number U>                                                   \
    requires constraint && host_operand<U, T> value<result>                                \
    operator sym(value<T> const& a, U b) { return a sym value<T>(b); }                     \
    template <typename T, host_number U>                                                   \
    requires constraint && host_operand<U, T> value<result>                                \
    operator sym(U a, value<T> const& b) { return value<T>(a) sym b; }

SWITCHYARD_SHADER_BINARY(+, op::add, T, detail::arithmetic_value<T>)
SWITCHYARD_SHADER_BINARY(-, op::sub, T, detail::arithmetic_value<T>)
SWITCHYARD_SHADER_BINARY(*, op::mul, T, detail::arithmetic_value<T>)
SWITCHYARD_SHADER_BINARY(/, op::div, T, detail::arithmetic_value<T>)
SWITCHYARD_SHADER_BINARY(%, op::rem, T, detail::integer_value<T>)
SWITCHYARD_SHADER_BINARY(&, op::bit_and, T, detail::integer_value<T>)
SWITCHYARD_SHADER_BINARY(|, op::bit_or, T, detail::integer_value<T>)
SWITCHYARD_SHADER_BINARY(^, op::bit_xor, T, detail::integer_value<T>)
SWITCHYARD_SHADER_BINARY(<, op::lt, bool, detail::arithmetic_value<T>)
SWITCHYARD_SHADER_BINARY(<=, op::le, bool, detail::arithmetic_value<T>)
SWITCHYARD_SHADER_BINARY(>, op::gt, bool, detail::arithmetic_value<T>)
SWITCHYARD_SHADER_BINARY(>=, op::ge, bool, detail::arithmetic_value<T>)
SWITCHYARD_SHADER_BINARY(==, op::eq, bool, true)
SWITCHYARD_SHADER_BINARY(!=, op::ne, bool, true)
// Both sides are evaluated (no short circuit), as in shader code.
SWITCHYARD_SHADER_BINARY(&&, op::logical_and, bool, (std::is_same_v<T, bool>))
SWITCHYARD_SHADER_BINARY(||, op::logical_or, bool, (std::is_same_v<T, bool>))

#undef SWITCHYARD_SHADER_BINARY

template <typename T>
requires(detail::arithmetic_value<T> && !std::is_unsigned_v<T>) value<T>
operator-(value<T> const& a) {
    if (!a.symbolic()) return value<T>(host_cast<T>(-host_cast<detail::host_arith_t<T>>(a.host())));
    return detail::record<T>(op::neg, "negation", a);
}
template <typename T>
value<T> operator+(value<T> const& a) {
    return a;
}
inline value<bool> operator!(value<bool> const& a) {
    if (!a.symbolic()) return value<bool>(!a.host());
    return detail::record<bool>(op::logical_not, "logical not", a);
}
template <typename T>
requires detail::integer_value<T> value<T>
operator~(value<T> const& a) {
    if (!a.symbolic()) return value<T>(static_cast<T>(~a.host()));
    return detail::record<T>(op::bit_not, "bitwise not", a);
}

}  // namespace switchyard::shader
