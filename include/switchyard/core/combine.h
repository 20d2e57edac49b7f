// Combines: how a reduction (switchyard/reduce.h) folds values into one.
//
//     sy::sum, sy::prod, sy::amin, sy::amax   built in
//     sy::combine(op, identity)               a user's: op(a, b) -> value
//
// A combine is a function of two accumulator values (compute_t<Tag>: float
// for f16 and bf16) and an identity, the value it starts from and what an
// empty reduction gives. Reductions regroup and reorder the values they
// combine (lanes, blocks, threads), so op must be associative and
// commutative; the order is fixed by the shape alone, never by the thread
// count (docs/reduce.md).
//
// Integer sums and products wrap around at the type's width, as PyTorch's
// do when stored into an output of that dtype.
//
// amin and amax (named as PyTorch's value-only min and max reductions)
// propagate NaN as PyTorch's do, and have no identity for an empty
// reduction: reducing zero elements with them is an error.
#pragma once

#include <limits>
#include <type_traits>

#include "switchyard/core/config.h"

namespace switchyard {

namespace detail {

// NaN is the only value unequal to itself; false for integers.
template <typename A>
SWITCHYARD_HOST_DEVICE constexpr bool is_nan_value(A a) {
    return !(a == a);
}

// Signed integers add and multiply modulo 2^bits: the value PyTorch stores
// into an integer output of that width (it accumulates in int64), without
// the undefined behaviour of signed overflow. Unsigned arithmetic at least
// as wide as unsigned int, so that no operand is promoted to int.
template <typename A>
using wrapping_t = std::conditional_t<(sizeof(A) < sizeof(unsigned)), unsigned, std::make_unsigned_t<A>>;

template <typename A>
SWITCHYARD_HOST_DEVICE constexpr A add_values(A a, A b) {
    if constexpr (std::is_integral_v<A> && std::is_signed_v<A>)
        return static_cast<A>(static_cast<wrapping_t<A>>(a) + static_cast<wrapping_t<A>>(b));
    else
        return a + b;
}

template <typename A>
SWITCHYARD_HOST_DEVICE constexpr A multiply_values(A a, A b) {
    if constexpr (std::is_integral_v<A> && std::is_signed_v<A>)
        return static_cast<A>(static_cast<wrapping_t<A>>(a) * static_cast<wrapping_t<A>>(b));
    else
        return a * b;
}

}  // namespace detail

struct sum_combine {
    static constexpr char const* name = "sum";
    static constexpr bool has_identity = true;
    template <typename A>
    SWITCHYARD_HOST_DEVICE constexpr A identity() const {
        return A(0);
    }
    template <typename A>
    SWITCHYARD_HOST_DEVICE constexpr A operator()(A a, A b) const {
        return detail::add_values(a, b);
    }
};

struct prod_combine {
    static constexpr char const* name = "prod";
    static constexpr bool has_identity = true;
    template <typename A>
    SWITCHYARD_HOST_DEVICE constexpr A identity() const {
        return A(1);
    }
    template <typename A>
    SWITCHYARD_HOST_DEVICE constexpr A operator()(A a, A b) const {
        return detail::multiply_values(a, b);
    }
};

// The identity of amin and amax is only the start value of a lane; it never
// reaches an output, because an empty reduction is refused.
struct max_combine {
    static constexpr char const* name = "amax";
    static constexpr bool has_identity = false;
    template <typename A>
    SWITCHYARD_HOST_DEVICE constexpr A identity() const {
        if constexpr (std::numeric_limits<A>::has_infinity)
            return -std::numeric_limits<A>::infinity();
        else
            return std::numeric_limits<A>::lowest();
    }
    template <typename A>
    SWITCHYARD_HOST_DEVICE constexpr A operator()(A a, A b) const {
        return (a > b || detail::is_nan_value(a)) ? a : b;
    }
};

struct min_combine {
    static constexpr char const* name = "amin";
    static constexpr bool has_identity = false;
    template <typename A>
    SWITCHYARD_HOST_DEVICE constexpr A identity() const {
        if constexpr (std::numeric_limits<A>::has_infinity)
            return std::numeric_limits<A>::infinity();
        else
            return std::numeric_limits<A>::max();
    }
    template <typename A>
    SWITCHYARD_HOST_DEVICE constexpr A operator()(A a, A b) const {
        return (a < b || detail::is_nan_value(a)) ? a : b;
    }
};

inline constexpr sum_combine sum{};
inline constexpr prod_combine prod{};
inline constexpr max_combine amax{};
inline constexpr min_combine amin{};

// A user's combine: op(a, b) on accumulator values, starting from identity.
template <typename Op, typename V>
struct custom_combine {
    static constexpr char const* name = "combine";
    static constexpr bool has_identity = true;
    Op op;
    V start;
    template <typename A>
    SWITCHYARD_HOST_DEVICE constexpr A identity() const {
        return static_cast<A>(start);
    }
    template <typename A>
    SWITCHYARD_HOST_DEVICE constexpr A operator()(A a, A b) const {
        return static_cast<A>(op(a, b));
    }
};

template <typename Op, typename V>
constexpr custom_combine<Op, V> combine(Op const& op, V const& identity) {
    return {op, identity};
}

// What a reduction accepts as its combine, for accumulator type A.
template <typename Combine, typename A>
concept reduction_combine_for = requires(Combine const& c, A a) {
    {c.template identity<A>()};
    {c(a, a)};
    {Combine::has_identity};
    {Combine::name};
};

}  // namespace switchyard
