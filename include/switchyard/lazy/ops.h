// The elementwise steps of a lazy chain (lazy/chain.h). A step is a small
// value (a scalar, or the strided_ref of an array operand) until the chain
// runs; then bind<Tag>() turns it into a kernel step over the tag's types and
// views, whose apply(x, i) computes the next value from the previous one.
// apply is written once for every device: with compute_t<Tag> it is plain
// arithmetic on CPU and CUDA and is traced into the fused shader on WebGPU.
#pragma once

#include <cstdint>

#include "switchyard/core/config.h"
#include "switchyard/core/enums.h"
#include "switchyard/kernel_types.h"
#include "switchyard/math.h"
#include "switchyard/shader/math.h"
#include "switchyard/view/flat.h"
#include "switchyard/view/iteration_order.h"
#include "switchyard/view/strided_ref.h"

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
    relu bind(iteration_order const&) const {
        return *this;
    }
    template <typename X>
    SWITCHYARD_HOST_DEVICE X apply(X x, std::int64_t) const {
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
    auto bind(iteration_order const&) const {
        return with_scalar<A, compute_t<Tag>>{static_cast<compute_t<Tag>>(s)};
    }
    template <typename X>
    SWITCHYARD_HOST_DEVICE X apply(X x, std::int64_t) const {
        return combine<A>(x, s);
    }
};

// x (op) y[i] for an array y of the chain's shape and dtype.
template <arith A, typename View = strided_ref>
struct with_array {
    static constexpr int arrays = 1;
    View y;
    strided_ref const& ref() const { return y; }
    template <typename Tag>
    auto bind(iteration_order const& order) const {
        constexpr auto device = tag_get<device_kind>(Tag{});
        constexpr auto type = tag_get<dtype>(Tag{});
        constexpr auto contig = tag_get<contiguity>(Tag{});
        return with_array<A, flat_in<device, type, contig>>{flat_in<device, type, contig>(y, order)};
    }
    template <typename X>
    SWITCHYARD_HOST_DEVICE X apply(X x, std::int64_t i) const {
        return combine<A>(x, static_cast<X>(y[i]));
    }
};

// f(x) for a stateless function object written for every device, such as
// [](auto x) { return switchyard::tanh(x); }.
template <typename F>
struct map {
    static constexpr int arrays = 0;
    F f;
    template <typename Tag>
    map bind(iteration_order const&) const {
        return *this;
    }
    template <typename X>
    SWITCHYARD_HOST_DEVICE X apply(X x, std::int64_t) const {
        return static_cast<X>(f(x));
    }
};

}  // namespace switchyard::lazy_ops
