// axes<A...>: a dispatch space, the Cartesian product of axes; coverage<...>:
// the parts of a space that a table instantiates.
//
//     using space = axes<full_device_axis, float_dtype_axis, full_contiguity_axis>;
//     space::size                                         // 4 * 4 * 2 = 32 points
//     using sub = coverage<axes<axis<device_kind::cpu>, float_dtype_axis, full_contiguity_axis>,
//                          tag<device_kind::cuda, dtype::f32, contiguity::contiguous>>;
//
// A point of a space is a tag with one value per axis. The order of the axes
// does not change which points a space has; it only decides the order in
// which error messages print coordinates (the order you wrote). A coverage
// entry is a subspace (axes<...> with the same axis types, each holding a
// subset of the space's values) or a single point (a tag). Only covered points
// are ever instantiated.
//
// Compile cost: one constexpr loop per subspace computes every point's
// position in the space; making a point's tag deduces one base per axis. No
// template recursion over points, so cost is linear in covered points.
#pragma once

#include <array>
#include <cstddef>
#include <string>
#include <type_traits>
#include <utility>

#include "switchyard/core/axis.h"
#include "switchyard/core/tag.h"

namespace switchyard {

namespace detail {

template <std::size_t I, typename T>
struct indexed_type {
    using type = T;
};
template <typename Seq, typename... T>
struct indexed_types;
template <std::size_t... I, typename... T>
struct indexed_types<std::index_sequence<I...>, T...> : indexed_type<I, T>... {};
template <std::size_t I, typename T>
indexed_type<I, T> type_at_impl(indexed_type<I, T> const&);
template <std::size_t I, typename... T>
using type_at = typename decltype(type_at_impl<I>(indexed_types<std::index_sequence_for<T...>, T...>{}))::type;

// Position of the first entry of `flags` that is true (size when none).
template <std::size_t N>
consteval std::size_t first_true(std::array<bool, N> flags) {
    for (std::size_t i = 0; i < N; ++i)
        if (flags[i]) return i;
    return N;
}

template <typename T, typename... A>
inline constexpr std::size_t axis_position = first_true(std::array<bool, sizeof...(A)>{
    std::is_same_v<T, typename A::value_type>...});

template <typename... A>
struct axes_check {
    static constexpr bool all_axes = (is_axis_v<A> && ...);
    static_assert(all_axes, "axes<...>: every argument must be an axis<...>");
    static constexpr bool unique_types = !all_axes || !has_duplicate_types<typename A::value_type...>();
    static_assert(unique_types,
                  "axes<...>: two axes have the same value type; give the second one its own "
                  "type with a named axis (switchyard/core/named.h)");
    static constexpr bool unique_labels = !all_axes || !unique_types || !has_label_clash<typename A::value_type...>();
    static_assert(unique_labels, "axes<...>: two axis value types have the same type_label");
    static constexpr bool ok = all_axes && unique_types && unique_labels;
};

template <bool Ok, typename... A>
struct axes_data {
    static constexpr std::size_t rank = 0;
    static constexpr std::size_t size = 0;
};

template <typename... A>
struct axes_data<true, A...> {
    static constexpr std::size_t rank = sizeof...(A);
    static constexpr std::size_t size = (A::size * ... * std::size_t{1});
    static constexpr std::array<std::size_t, rank> sizes{A::size...};
    // Row-major: the last axis varies fastest.
    static constexpr std::array<std::size_t, rank> strides = [] {
        std::array<std::size_t, rank> s{};
        std::size_t stride = 1;
        for (std::size_t i = rank; i-- > 0;) {
            s[i] = stride;
            stride *= sizes[i];
        }
        return s;
    }();

    template <typename T>
    static constexpr bool has_axis_for = (std::is_same_v<T, typename A::value_type> || ...);
    template <typename T>
    static constexpr std::size_t position_of = axis_position<T, A...>;
    template <std::size_t I>
    using axis_at = type_at<I, A...>;

    // The canonical tag of the point at linear position K. (A partial
    // specialization rather than a function's return type: nvcc's front end
    // rejects the latter.)
    static constexpr auto canonical_order = label_order<typename A::value_type...>();
    template <std::size_t K, typename J>
    struct point;
    template <std::size_t K, std::size_t... J>
    struct point<K, std::index_sequence<J...>> {
        using type = sorted_tag<
            axis_at<canonical_order[J]>::values[(K / strides[canonical_order[J]]) % sizes[canonical_order[J]]]...>;
    };
    template <std::size_t K>
    using point_tag = typename point<K, std::make_index_sequence<rank>>::type;
};

}  // namespace detail

template <typename... A>
struct axes : detail::axes_data<detail::axes_check<A...>::ok, A...> {};

template <typename T>
inline constexpr bool is_axes_v = false;
template <typename... A>
inline constexpr bool is_axes_v<axes<A...>> = true;

// The covered part of a space: subspaces (axes<...>) and single points (tag<...>).
template <typename... Subspaces>
struct coverage {};

namespace detail {

// A coverage built one entry at a time, so that a device adds one entry
// instead of doubling an #if ladder: coverage_list<S...> + maybe<On, P>
// appends P when On. Declarations only, evaluated in decltype: one fold, no
// recursion.
template <bool On, typename P>
struct maybe {};
template <typename... S>
struct coverage_list {
    using type = coverage<S...>;
};
template <typename... S, typename P>
coverage_list<S..., P> operator+(coverage_list<S...>, maybe<true, P>);
template <typename... S, typename P>
coverage_list<S...> operator+(coverage_list<S...>, maybe<false, P>);

// The values of an axis for which Keep(v) holds, the same way: axis_where<
// Ax, Keep>::type is an axis of them. When none is kept it is axis<>, which
// is an error once instantiated: check ::size first, and keep it out of
// template arguments that lookup may instantiate (a maybe<false, ...>).
template <bool On, auto V>
struct maybe_value {};
template <auto... V>
struct kept_values {
    static constexpr std::size_t size = sizeof...(V);
    using type = axis<V...>;
};
template <auto... V, auto W>
kept_values<V..., W> operator+(kept_values<V...>, maybe_value<true, W>);
template <auto... V, auto W>
kept_values<V...> operator+(kept_values<V...>, maybe_value<false, W>);

template <typename Ax, auto Keep>
struct axis_where;
template <auto... V, auto Keep>
struct axis_where<axis<V...>, Keep> : decltype((kept_values<>{} + ... + maybe_value<Keep(V), V>{})) {};

// A single point is the subspace with one value per axis.
template <typename Sub>
struct as_subspace {
    using type = Sub;
};
template <auto... V>
struct as_subspace<sorted_tag<V...>> {
    using type = axes<axis<V>...>;
};

template <typename Space, typename Sub>
struct subspace_of;

template <typename... S, typename... U>
struct subspace_of<axes<S...>, axes<U...>> {
    using space = axes<S...>;
    using sub = axes<U...>;

    static constexpr bool types_known = (space::template has_axis_for<typename U::value_type> && ...);
    static constexpr bool complete = (sub::template has_axis_for<typename S::value_type> && ...);

    template <typename Ax>
    static constexpr bool values_inside() {
        using space_axis = typename space::template axis_at<space::template position_of<typename Ax::value_type>>;
        for (auto v : Ax::values)
            if (!space_axis::contains(v)) return false;
        return true;
    }
    static constexpr bool inside = [] {
        if constexpr (types_known)
            return (values_inside<U>() && ...);
        else
            return false;
    }();
    static constexpr bool ok = types_known && complete && inside;

    // Contribution of sub axis Ax's value d to the space's linear position.
    template <typename Ax>
    static constexpr auto contributions() {
        constexpr std::size_t p = space::template position_of<typename Ax::value_type>;
        using space_axis = typename space::template axis_at<p>;
        std::array<std::size_t, Ax::size> c{};
        for (std::size_t d = 0; d < Ax::size; ++d) c[d] = space_axis::index_of(Ax::values[d]) * space::strides[p];
        return c;
    }

    // positions[k] = linear position in the space of the sub's k-th point.
    static constexpr auto positions = [] {
        std::array<std::size_t, sub::size> out{};
        if constexpr (ok) {
            constexpr std::size_t total = (U::size + ... + std::size_t{0});
            std::array<std::size_t, total> flat{};
            std::array<std::size_t, sub::rank> offset{};
            std::size_t at = 0, j = 0;
            auto append = [&](auto const& c) {
                offset[j++] = at;
                for (auto v : c) flat[at++] = v;
            };
            (append(contributions<U>()), ...);
            for (std::size_t k = 0; k < sub::size; ++k) {
                std::size_t pos = 0;
                for (std::size_t a = 0; a < sub::rank; ++a)
                    pos += flat[offset[a] + (k / sub::strides[a]) % sub::sizes[a]];
                out[k] = pos;
            }
        }
        return out;
    }();

    // "{device: cpu, cuda} x {dtype: f32}" in the space's axis order.
    static std::string describe() {
        std::string s;
        auto one = [&](auto axis_tag) {
            using Ax = typename decltype(axis_tag)::type;
            if (!s.empty()) s += " x ";
            s += '{';
            s += type_label_v<typename Ax::value_type>;
            s += ": ";
            for (std::size_t d = 0; d < Ax::size; ++d) {
                if (d) s += ", ";
                s += value_name(Ax::values[d]);
            }
            s += '}';
        };
        (one(indexed_type<0, typename sub::template axis_at<sub::template position_of<typename S::value_type>>>{}),
         ...);
        return s;
    }
};

template <typename Space, typename Sub>
struct checked_subspace {
    static constexpr bool is_sub = is_axes_v<Sub> || is_tag_v<Sub>;
    static_assert(is_sub, "coverage<...>: each entry must be an axes<...> subspace or a tag<...> point");
    using normalized = typename as_subspace<std::conditional_t<is_sub, Sub, axes<>>>::type;
    using check = subspace_of<Space, normalized>;
    static_assert(!is_sub || check::types_known,
                  "coverage<...>: a subspace or point has a value whose type is not an axis of "
                  "the table's space");
    static_assert(!is_sub || !check::types_known || check::complete,
                  "coverage<...>: a subspace or point does not give a value for every axis of "
                  "the table's space");
    static_assert(!is_sub || !check::types_known || !check::complete || check::inside,
                  "coverage<...>: a subspace or point names a value outside the table's space");
    static constexpr bool ok = is_sub && check::ok;
};

}  // namespace detail

}  // namespace switchyard
