// Combines: how a reduction (switchyard/reduce.h) folds values into one.
//
//     sy::sum, sy::prod, sy::amin, sy::amax   built in
//     sy::argmin, sy::argmax                  built in: an int64 index
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
//
// argmin and argmax fold (value, index) pairs (value_index) and store the
// index of the smallest or largest value as int64: the first one where
// several are equal, and the first NaN if there is one, as PyTorch's do.
// Which pair wins depends only on the two pairs, never on the order they
// meet in, so the result is the same in every order a device chooses.
#pragma once

#include <cstdint>
#include <limits>
#include <type_traits>
#include <utility>

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
// reaches an output, because an empty reduction is refused. Each is two
// selects, the larger (smaller) of a and b, then a if a is NaN: written as
// one select of (a > b || a is NaN), g++ compiled the scalar folds of lanes
// to a branch on a > b, mispredicted on random rows; a NaN test is a branch
// that is almost never taken, and both forms vectorize.
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
        A const larger = a > b ? a : b;
        return detail::is_nan_value(a) ? a : larger;
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
        A const smaller = a < b ? a : b;
        return detail::is_nan_value(a) ? a : smaller;
    }
};

// The accumulator of argmin and argmax: a value and its index.
template <typename A>
struct value_index {
    A value;
    std::int64_t index;
};

namespace detail {

// a or b: the NaN, else the larger (Largest) or smaller value, else the
// smaller index. A total order on distinct indices, so associative and
// commutative.
template <bool Largest, typename A>
SWITCHYARD_HOST_DEVICE constexpr value_index<A> pick_indexed(value_index<A> a, value_index<A> b) {
    bool const a_nan = is_nan_value(a.value), b_nan = is_nan_value(b.value);
    if (a_nan != b_nan) return a_nan ? a : b;
    if (!a_nan && a.value != b.value) return (Largest ? a.value > b.value : a.value < b.value) ? a : b;
    return a.index <= b.index ? a : b;
}

}  // namespace detail

// argmax (Largest) or argmin. Empty reductions are refused, so the
// identity's index never reaches an output; its value loses to (or ties, and
// then loses by index to) any value.
template <bool Largest>
struct arg_combine {
    static constexpr char const* name = Largest ? "argmax" : "argmin";
    static constexpr bool has_identity = false;
    static constexpr bool indexed = true;
    template <typename A>
    SWITCHYARD_HOST_DEVICE constexpr value_index<A> identity() const {
        A const start = Largest ? max_combine{}.template identity<A>() : min_combine{}.template identity<A>();
        return {start, std::numeric_limits<std::int64_t>::max()};
    }
    template <typename A>
    SWITCHYARD_HOST_DEVICE constexpr value_index<A> operator()(value_index<A> a, value_index<A> b) const {
        return detail::pick_indexed<Largest>(a, b);
    }
    // Whether v, at an index larger than every index acc holds, replaces
    // acc: it is better, or a NaN over a number, or acc is the identity.
    template <typename A>
    SWITCHYARD_HOST_DEVICE constexpr bool replaces(value_index<A> acc, A v) const {
        return (Largest ? v > acc.value : v < acc.value) ||
               (detail::is_nan_value(v) && !detail::is_nan_value(acc.value)) ||
               acc.index == std::numeric_limits<std::int64_t>::max();
    }
    // acc with v at index i folded in, where i is larger than every index
    // acc holds (a lane walking forward): the same result as combining the
    // pairs, with fewer comparisons.
    template <typename A>
    SWITCHYARD_HOST_DEVICE constexpr value_index<A> advance(value_index<A> acc, A v, std::int64_t i) const {
        return replaces(acc, v) ? value_index<A>{v, i} : acc;
    }
    // A run of values at larger indices, with one extreme_combine per value:
    // if the run's extreme m (its max for argmax, NaN if it has one)
    // replaces acc, advance over the run keeps the first of its values that
    // match m (matches); otherwise acc stays. Where indices do not rise along
    // the run, a tie with acc can also win: take the smallest index.
    using extreme_combine = std::conditional_t<Largest, max_combine, min_combine>;
    // Bitwise, not ||: a loop of it then vectorizes. The operands are named
    // first because clang warns on '&' between calls (-Wbitwise-instead-of-logical).
    template <typename A>
    SWITCHYARD_HOST_DEVICE static constexpr bool matches(A v, A m) {
        bool const equal = v == m;
        bool const v_nan = detail::is_nan_value(v);
        bool const m_nan = detail::is_nan_value(m);
        return equal | (v_nan & m_nan);
    }
};

using argmax_combine = arg_combine<true>;
using argmin_combine = arg_combine<false>;

inline constexpr sum_combine sum{};
inline constexpr prod_combine prod{};
inline constexpr max_combine amax{};
inline constexpr min_combine amin{};
inline constexpr argmax_combine argmax{};
inline constexpr argmin_combine argmin{};

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

// Whether a combine folds (value, index) pairs and stores the index.
template <typename Combine>
inline constexpr bool is_indexed_combine_v = requires {
    requires Combine::indexed;
};

// What a combine folds for values of type C: C, or value_index<C>.
template <typename Combine, typename C>
using accumulator_t = decltype(std::declval<Combine const&>().template identity<C>());

// What a reduction accepts as its combine, for values of type C.
template <typename Combine, typename C>
concept reduction_combine_for = requires(Combine const& c) {
    {c(c.template identity<C>(), c.template identity<C>())};
    {Combine::has_identity};
    {Combine::name};
};

}  // namespace switchyard
