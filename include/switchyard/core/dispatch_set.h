// dispatch_set{...}: the runtime coordinates of one call, e.g. the device,
// dtype and contiguity of its input tensor.
//
//     table.select(dispatch_set{x_dtype, device_kind::cpu, contig});
//
// Values are matched to a table's axes by type, so their order is free. A
// table rejects at compile time a set that lacks a value for one of its axes
// or has a value whose type is not one of its axes.
#pragma once

#include <cstddef>
#include <type_traits>
#include <utility>

#include "switchyard/core/tag.h"
#include "switchyard/core/type_label.h"

namespace switchyard {

namespace detail {
template <std::size_t I, typename T>
struct coordinate {
    T value;
};
template <typename T, std::size_t I>
constexpr T coordinate_value(coordinate<I, T> const& c) noexcept {
    return c.value;
}
template <typename Seq, typename... T>
struct coordinates;
template <std::size_t... I, typename... T>
struct coordinates<std::index_sequence<I...>, T...> : coordinate<I, T>... {
    constexpr coordinates(T... v) noexcept : coordinate<I, T>{v}... {}
};
}  // namespace detail

template <typename... T>
struct dispatch_set : detail::coordinates<std::index_sequence_for<T...>, T...> {
    static_assert((tag_value_type<T> && ...),
                  "dispatch_set{...}: every coordinate must be an enum value whose type has a "
                  "switchyard::type_label (see switchyard/core/type_label.h)");
    static_assert(!detail::has_duplicate_types<T...>(),
                  "dispatch_set{...}: two coordinates have the same type; each axis takes one "
                  "value (use a named axis for a second value of the same type)");

    constexpr dispatch_set(T... v) noexcept : detail::coordinates<std::index_sequence_for<T...>, T...>(v...) {}

    template <typename U>
    static constexpr bool has = (std::is_same_v<U, T> || ...);

    // The coordinate of type U.
    template <typename U>
    constexpr U get() const noexcept {
        static_assert(has<U>, "dispatch_set::get<U>: the set has no value of type U");
        return detail::coordinate_value<U>(*this);
    }
};

template <typename... T>
dispatch_set(T...) -> dispatch_set<T...>;

}  // namespace switchyard
