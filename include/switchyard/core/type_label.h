// type_label: what makes a type usable as a tag value.
//
// A tag value is a compile-time value of an enum (named axes are enums too, see
// named.h) whose type has a *label*: a short, unique name such as "dtype" or
// "device". Labels give tags their canonical order (tag<A, B> and tag<B, A>
// are one type because values are sorted by label) and name coordinates in
// error messages ("dtype=f64"). Labels are plain strings, not compiler type
// names, so the order is the same under g++, clang and both nvcc passes.
//
// Making your own enum a tag value type takes one specialization:
//
//     namespace my { enum class precision { low, high }; }
//     template <> struct switchyard::type_label<my::precision> {
//         static constexpr std::string_view value = "precision";
//         // optional: names of values for error messages; without it an ADL
//         // to_string(my::precision) is used, and without that the number.
//         static constexpr std::string_view name(my::precision p) {
//             return p == my::precision::low ? "low" : "high";
//         }
//     };
//
// A named axis (named.h) is an enum whose type_label derives from named<E>;
// its values print as values of E.
#pragma once

#include <concepts>
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>

namespace switchyard {

// Specialize with `static constexpr std::string_view value` (and optionally a
// `name(T)` function) to make T a tag value type.
template <typename T>
struct type_label {};

namespace detail {

// A named axis: an enum whose label names the enum it takes its values from.
template <typename T>
concept named_enum = requires {
    typename type_label<T>::named_value_type;
};

template <typename T>
consteval bool named_enum_is_valid() {
    if constexpr (named_enum<T>) {
        using E = typename type_label<T>::named_value_type;
        return std::is_same_v<std::underlying_type_t<T>, std::underlying_type_t<E>>;
    } else {
        return true;
    }
}

}  // namespace detail

// The types whose values can be tag values, axis values and dispatch
// coordinates: enums that have a label.
template <typename T>
concept tag_value_type = std::is_enum_v<T> && requires {
    { type_label<T>::value } -> std::convertible_to<std::string_view>;
};

template <typename T>
inline constexpr std::string_view type_label_v = type_label<T>::value;

namespace detail {

// An integer that identifies a value within its type. Axes use it for
// constant-time runtime lookups.
template <typename T>
constexpr std::int64_t value_key(T v) noexcept {
    return static_cast<std::int64_t>(v);
}

template <typename T>
concept has_label_name = requires(T v) {
    { type_label<T>::name(v) } -> std::convertible_to<std::string_view>;
};

template <typename T>
concept has_adl_to_string = requires(T v) {
    { to_string(v) } -> std::convertible_to<std::string_view>;
};

}  // namespace detail

// The printable name of a tag value: "f32", "cuda", or the number when the
// type offers no names.
template <tag_value_type T>
std::string value_name(T v) {
    static_assert(detail::named_enum_is_valid<T>(),
                  "named axis: the enum must have the same underlying type as the enum "
                  "named<E> names");
    if constexpr (detail::named_enum<T>) {
        return value_name(static_cast<typename type_label<T>::named_value_type>(v));
    } else if constexpr (detail::has_label_name<T>) {
        return std::string(type_label<T>::name(v));
    } else if constexpr (detail::has_adl_to_string<T>) {
        return std::string(std::string_view(to_string(v)));
    } else if constexpr (std::is_unsigned_v<std::underlying_type_t<T>>) {
        // Not value_key's int64: a uint64_t enum's large values are not negative.
        return std::to_string(static_cast<std::uint64_t>(v));
    } else {
        return std::to_string(static_cast<std::int64_t>(v));
    }
}

// "dtype=f32"
template <tag_value_type T>
std::string coordinate_name(T v) {
    std::string s(type_label_v<T>);
    s += '=';
    s += value_name(v);
    return s;
}

}  // namespace switchyard
