// axis<V...>: the values one dispatch coordinate may take.
//
//     using dtypes = axis<dtype::f16, dtype::bf16, dtype::f32>;
//     dtypes::size                 // 3
//     dtypes::values[1]            // dtype::bf16
//     dtypes::index_of(dtype::f32) // 2; axis_npos when the value is absent
//
// All values have one type (a tag value type) and are unique. index_of is a
// table lookup when the enum's values span at most 256 integers (every
// ordinary enum), so a runtime coordinate maps to its position in O(1).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "switchyard/core/type_label.h"

namespace switchyard {

inline constexpr std::size_t axis_npos = static_cast<std::size_t>(-1);

namespace detail {

template <auto... V>
struct first_value;
template <auto First, auto... Rest>
struct first_value<First, Rest...> {
    using type = std::remove_cvref_t<decltype(First)>;
};
template <auto... V>
using first_value_type = typename first_value<V...>::type;

template <typename T, auto... V>
consteval bool has_duplicate_values() {
    std::array<std::int64_t, sizeof...(V)> keys{value_key(static_cast<T>(V))...};
    for (std::size_t i = 0; i < keys.size(); ++i)
        for (std::size_t j = i + 1; j < keys.size(); ++j)
            if (keys[i] == keys[j]) return true;
    return false;
}

// Position lookup for one axis: a dense table over the key range when it is
// small, else a linear scan (axes are short).
template <typename T, auto... V>
struct axis_index {
    static constexpr std::size_t size = sizeof...(V);
    static constexpr std::array<std::int64_t, size> keys{value_key(static_cast<T>(V))...};
    static constexpr std::int64_t min_key = [] {
        std::int64_t m = keys[0];
        for (auto k : keys) m = k < m ? k : m;
        return m;
    }();
    static constexpr std::int64_t max_key = [] {
        std::int64_t m = keys[0];
        for (auto k : keys) m = k > m ? k : m;
        return m;
    }();
    // Distances between keys in unsigned arithmetic: int64 keys may span
    // more than int64 holds.
    static constexpr std::uint64_t offset_of(std::int64_t k) noexcept {
        return static_cast<std::uint64_t>(k) - static_cast<std::uint64_t>(min_key);
    }
    static constexpr bool dense = offset_of(max_key) < 256;
    static constexpr std::size_t range = dense ? static_cast<std::size_t>(offset_of(max_key)) + 1 : 1;
    static constexpr std::array<std::size_t, range> table = [] {
        std::array<std::size_t, range> t{};
        for (auto& e : t) e = axis_npos;
        if (dense)
            for (std::size_t i = 0; i < size; ++i) t[static_cast<std::size_t>(offset_of(keys[i]))] = i;
        return t;
    }();

    static constexpr std::size_t find(T v) noexcept {
        auto const k = value_key(v);
        if constexpr (dense) {
            std::uint64_t const offset = offset_of(k);
            return offset < range ? table[offset] : axis_npos;
        } else {
            for (std::size_t i = 0; i < size; ++i)
                if (keys[i] == k) return i;
            return axis_npos;
        }
    }
};

template <auto... V>
struct axis_check {
    static constexpr bool nonempty = sizeof...(V) > 0;
    static_assert(nonempty, "axis<>: an axis needs at least one value");
    static constexpr bool all_values = (tag_value_type<std::remove_cvref_t<decltype(V)>> && ...);
    static_assert(all_values,
                  "axis<...>: every value must be an enum value whose type has a "
                  "switchyard::type_label (see switchyard/core/type_label.h)");
    static constexpr bool one_type = [] {
        if constexpr (nonempty)
            return (std::is_same_v<first_value_type<V...>, std::remove_cvref_t<decltype(V)>> && ...);
        else
            return true;
    }();
    static_assert(one_type,
                  "axis<...>: all values of an axis must have the same type; use one axis per "
                  "type (and a named axis for a second axis of the same type)");
    static constexpr bool unique = [] {
        if constexpr (nonempty && all_values && one_type)
            return !has_duplicate_values<first_value_type<V...>, V...>();
        else
            return true;
    }();
    static_assert(unique, "axis<...>: a value appears twice; list each value once");
    static constexpr bool ok = nonempty && all_values && one_type && unique;
};

template <bool Ok, auto... V>
struct axis_data {
    using value_type = void;
    static constexpr std::size_t size = 0;
};
template <auto... V>
struct axis_data<true, V...> {
    using value_type = first_value_type<V...>;
    static constexpr std::size_t size = sizeof...(V);
    static constexpr std::array<value_type, size> values{static_cast<value_type>(V)...};
    static constexpr std::size_t index_of(value_type v) noexcept { return axis_index<value_type, V...>::find(v); }
    static constexpr bool contains(value_type v) noexcept { return index_of(v) != axis_npos; }
};

}  // namespace detail

template <auto... V>
struct axis : detail::axis_data<detail::axis_check<V...>::ok, V...> {};

template <typename T>
inline constexpr bool is_axis_v = false;
template <auto... V>
inline constexpr bool is_axis_v<axis<V...>> = true;

}  // namespace switchyard
