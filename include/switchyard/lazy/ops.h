// The elementwise steps of a lazy chain (lazy/chain.h). A step is a small
// value (a host scalar, a function, or an array operand's slot) until the
// chain runs; then bind<Tag>() gives it the tag's compute type (rebased():
// the step alone, its array as operand 0, for a kernel per step), and
// apply<Base>(x, arrays) computes the next value from the previous one. An
// array step reads its operand's value from `arrays`, the values of the array
// operands its kernel reads (from operand Base on), so the chain's kernel is
// a function of explicit operands (transform.h). apply is written once for
// every device: plain arithmetic on CPU and CUDA, traced into the shader on
// WebGPU.
#pragma once

#include <cstddef>
#include <cstdint>

#include "switchyard/core/config.h"
#include "switchyard/kernel_types.h"
#include "switchyard/math.h"
#include "switchyard/shader/math.h"

namespace switchyard::lazy_ops {

enum class arith : std::uint8_t { add, sub, mul, div };

template <arith A, typename X, typename Y>
SWITCHYARD_HOST_DEVICE X combine(X x, Y y) {
    if constexpr (A == arith::add)
        return x + y;
    else if constexpr (A == arith::sub)
        return x - y;
    else if constexpr (A == arith::mul)
        return x * y;
    else
        return x / y;
}

// max(x, 0).
struct relu {
    static constexpr int arrays = 0;
    template <typename Tag>
    relu bind() const {
        return *this;
    }
    relu rebased() const { return *this; }
    template <std::size_t Base, typename X>
    SWITCHYARD_HOST_DEVICE X apply(X x, X const*) const {
        return max(x, X(0));
    }
};

// x (op) s for a host scalar s: a uniform on shader devices, so a new s does
// not recompile.
template <arith A, typename S = double>
struct with_scalar {
    static constexpr int arrays = 0;
    S s;
    template <typename Tag>
    auto bind() const {
        return with_scalar<A, compute_t<Tag>>{static_cast<compute_t<Tag>>(s)};
    }
    with_scalar rebased() const { return *this; }
    template <std::size_t Base, typename X>
    SWITCHYARD_HOST_DEVICE X apply(X x, X const*) const {
        return combine<A>(x, s);
    }
};

// x (op) y for the chain's array operand number Slot (in the order the
// chain's steps name them).
template <arith A, std::size_t Slot>
struct with_array {
    static constexpr int arrays = 1;
    template <typename Tag>
    with_array bind() const {
        return *this;
    }
    // The same step in a kernel of its own, whose only array is operand 0.
    with_array<A, 0> rebased() const { return {}; }
    template <std::size_t Base, typename X>
    SWITCHYARD_HOST_DEVICE X apply(X x, X const* values) const {
        static_assert(Slot >= Base, "lazy chain: an array step runs in a kernel that does not read its array");
        return combine<A>(x, values[Slot - Base]);
    }
};

// f(x) for a stateless function object written for every device, such as
// [](auto x) { return switchyard::tanh(x); }.
template <typename F>
struct map {
    static constexpr int arrays = 0;
    F f;
    template <typename Tag>
    map bind() const {
        return *this;
    }
    map rebased() const { return *this; }
    template <std::size_t Base, typename X>
    SWITCHYARD_HOST_DEVICE X apply(X x, X const*) const {
        return static_cast<X>(f(x));
    }
};

}  // namespace switchyard::lazy_ops
