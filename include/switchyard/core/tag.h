// tag<V...>: an unordered set of compile-time values, one per value type.
//
//     using t = tag<device_kind::cuda, dtype::f32, contiguity::contiguous>;
//     static_assert(std::is_same_v<t, tag<dtype::f32, contiguity::contiguous,
//                                         device_kind::cuda>>);
//
// tag<...> is an alias for sorted_tag<...> with the values ordered by their
// type's label (type_label.h), so every spelling of the same set is one type.
// Name tags through tag<...>; sorted_tag<...> written by hand with values out
// of order is a different, non-canonical type.
//
//     tag_add<t, block_dim::b128>   // adds, or replaces the value of that type
//     tag_subtract<t, contiguity>   // removes the value of that type, if any
//     tag_get<dtype>(t{})           // dtype::f32 (consteval)
//     tag_get<dtype, device_kind>(t{})  // std::tuple{dtype::f32, device_kind::cuda}
//
// Compile cost: sorting is one constexpr loop over the labels, and value
// lookups deduce a base class, so nothing here recurses over the values.
#pragma once

#include <array>
#include <cstddef>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>

#include "switchyard/core/type_label.h"

namespace switchyard {

// The canonical tag type. Use tag<...> to name one.
template <auto... V>
struct sorted_tag {
    static constexpr std::size_t size = sizeof...(V);
};

template <typename T>
inline constexpr bool is_tag_v = false;
template <auto... V>
inline constexpr bool is_tag_v<sorted_tag<V...>> = true;

// Any tag<...> type.
template <typename T>
concept any_tag = is_tag_v<T>;

namespace detail {

template <auto V>
using value_type_of = std::remove_cvref_t<decltype(V)>;

template <auto... V>
struct value_list {};

template <auto... A, auto... B>
constexpr value_list<A..., B...> operator+(value_list<A...>, value_list<B...>) {
    return {};
}

// Pack indexing by deducing a unique base class.
template <std::size_t I, auto V>
struct indexed_value {};
template <typename Seq, auto... V>
struct indexed_values;
template <std::size_t... I, auto... V>
struct indexed_values<std::index_sequence<I...>, V...> : indexed_value<I, V>... {};
template <std::size_t I, auto V>
constexpr auto value_at(indexed_value<I, V> const&) {
    return V;
}

// Lookup by value type; tags hold one value per type, so the base is unique.
template <typename T, auto V>
struct typed_value {};
template <auto... V>
struct typed_values : typed_value<value_type_of<V>, V>... {};
template <typename T, auto V>
constexpr T value_of_type(typed_value<T, V> const&) {
    return V;
}

template <typename T, auto... V>
inline constexpr bool has_value_type = (std::is_same_v<T, value_type_of<V>> || ...);

template <typename T, typename... U>
inline constexpr std::size_t count_type = (std::size_t{std::is_same_v<T, U>} + ... + 0);

template <typename... T>
consteval bool has_duplicate_types() {
    return ((count_type<T, T...> > 1) || ...);
}

// Different types that claim the same label would make the order ambiguous.
template <typename... T>
consteval bool has_label_clash() {
    constexpr std::size_t n = sizeof...(T);
    std::array<std::string_view, n> labels{type_label_v<T>...};
    std::size_t equal_pairs = 0;
    for (std::size_t i = 0; i < n; ++i)
        for (std::size_t j = i + 1; j < n; ++j) equal_pairs += labels[i] == labels[j];
    return equal_pairs != 0;
}

// order[k] = position (in V...) of the value whose label ranks k-th.
template <typename... T>
consteval auto label_order() {
    constexpr std::size_t n = sizeof...(T);
    std::array<std::string_view, n> labels{type_label_v<T>...};
    std::array<std::size_t, n> order{};
    for (std::size_t i = 0; i < n; ++i) {
        std::size_t rank = 0;
        for (std::size_t j = 0; j < n; ++j) rank += labels[j] < labels[i];
        order[rank] = i;
    }
    return order;
}

template <bool Valid, auto... V>
struct sort_tag_values {
    using type = sorted_tag<>;  // only reached after a failed static_assert
};

template <auto... V>
struct sort_tag_values<true, V...> {
    static constexpr auto order = label_order<value_type_of<V>...>();
    using indexed = indexed_values<std::make_index_sequence<sizeof...(V)>, V...>;
    template <typename K>
    struct build;
    template <std::size_t... K>
    struct build<std::index_sequence<K...>> {
        using type = sorted_tag<value_at<order[K]>(indexed{})...>;
    };
    using type = typename build<std::make_index_sequence<sizeof...(V)>>::type;
};

template <auto... V>
struct make_tag {
    static constexpr bool all_values = (tag_value_type<value_type_of<V>> && ...);
    static_assert(all_values,
                  "tag<...>: every value must be an enum value whose type has a "
                  "switchyard::type_label (see switchyard/core/type_label.h)");
    static constexpr bool unique_types = !all_values || !has_duplicate_types<value_type_of<V>...>();
    static_assert(unique_types,
                  "tag<...>: two values have the same type; a tag holds one value per type. "
                  "Use tag_add to replace a value, or a named axis (switchyard::named) for a "
                  "second value of the same type");
    static constexpr bool unique_labels = !all_values || !unique_types || !has_label_clash<value_type_of<V>...>();
    static_assert(unique_labels,
                  "tag<...>: two different value types have the same type_label; labels must "
                  "be unique because they order the tag");
    using type = typename sort_tag_values<all_values && unique_types && unique_labels, V...>::type;
};

template <typename List, auto Extra>
struct make_tag_from_list;
template <auto... V, auto Extra>
struct make_tag_from_list<value_list<V...>, Extra> {
    using type = typename make_tag<V..., Extra>::type;
};
template <typename List>
struct make_tag_from_plain_list;
template <auto... V>
struct make_tag_from_plain_list<value_list<V...>> {
    using type = typename make_tag<V...>::type;
};

template <typename T, auto V>
using drop_if_type = std::conditional_t<std::is_same_v<T, value_type_of<V>>, value_list<>, value_list<V>>;

template <typename Tag, auto V>
struct tag_add_impl {
    static_assert(is_tag_v<Tag>, "tag_add<Tag, V>: Tag must be a tag<...>");
    using type = sorted_tag<>;
};
template <auto... W, auto V>
struct tag_add_impl<sorted_tag<W...>, V> {
    using kept = decltype((value_list<>{} + ... + drop_if_type<value_type_of<V>, W>{}));
    using type = typename make_tag_from_list<kept, V>::type;
};

template <typename Tag, typename T>
struct tag_subtract_impl {
    static_assert(is_tag_v<Tag>, "tag_subtract<Tag, T>: Tag must be a tag<...>");
    using type = sorted_tag<>;
};
template <auto... W, typename T>
struct tag_subtract_impl<sorted_tag<W...>, T> {
    using kept = decltype((value_list<>{} + ... + drop_if_type<T, W>{}));
    using type = typename make_tag_from_plain_list<kept>::type;
};

template <typename Tag>
struct tag_traits {
    static constexpr bool is_tag = false;
    template <typename T>
    static constexpr bool has = false;
};
template <auto... V>
struct tag_traits<sorted_tag<V...>> {
    static constexpr bool is_tag = true;
    template <typename T>
    static constexpr bool has = has_value_type<T, V...>;
    template <typename T>
    static constexpr T get() {
        return value_of_type<T>(typed_values<V...>{});
    }
};

}  // namespace detail

// The canonical tag holding the values V... (in any order).
template <auto... V>
using tag = typename detail::make_tag<V...>::type;

// Tag with V added; a value of V's type already present is replaced. This is
// how operational parameters (block_dim) join a tag that came from a table.
template <typename Tag, auto V>
using tag_add = typename detail::tag_add_impl<Tag, V>::type;

// Tag without its value of type T; the same tag when it has none.
template <typename Tag, typename T>
using tag_subtract = typename detail::tag_subtract_impl<Tag, T>::type;

// True when Tag holds a value of type T.
template <typename Tag, typename T>
inline constexpr bool tag_has_type_v = detail::tag_traits<Tag>::template has<T>;

// The value of type T in the tag (compile time).
template <typename T, typename Tag>
consteval T tag_get(Tag) {
    static_assert(is_tag_v<Tag>, "tag_get<T>(tag): the argument is not a tag<...>");
    static_assert(!is_tag_v<Tag> || tag_has_type_v<Tag, T>,
                  "tag_get<T>(tag): the tag has no value of type T; constrain the function "
                  "with with_type<Tag, T> or add the value with tag_add");
    if constexpr (tag_has_type_v<Tag, T>)
        return detail::tag_traits<Tag>::template get<T>();
    else
        return T{};
}

// Several values at once: auto [dev, dt] = tag_get<device_kind, dtype>(tag);
// constexpr rather than consteval: clang 14 crashes generating code for a
// consteval call that returns a std::tuple.
template <typename T, typename U, typename... Rest, typename Tag>
constexpr std::tuple<T, U, Rest...> tag_get(Tag t) {
    return {tag_get<T>(t), tag_get<U>(t), tag_get<Rest>(t)...};
}

}  // namespace switchyard
