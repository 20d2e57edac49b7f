// with_type / with_value: concepts that constrain kernels on tag contents.
//
//     template <typename Tag> requires with_type<Tag, dtype>        // any dtype
//     void f(Tag);
//     template <typename Tag> requires with_value<Tag, dtype::f16>  // f16 only
//     void f(Tag);
//
// with_value<Tag, V> is defined as with_type<Tag, type of V> && (value is V),
// so it subsumes with_type and the more specific overload wins; adding more
// with_value / with_type clauses refines further in the same way.
#pragma once

#include <type_traits>

#include "switchyard/core/tag.h"

namespace switchyard {

template <typename Tag, typename T>
concept with_type = any_tag<Tag> && tag_has_type_v<Tag, T>;

namespace detail {
template <typename Tag, auto V>
inline constexpr bool tag_value_equals = tag_traits<Tag>::template get<value_type_of<V>>() == V;
}  // namespace detail

template <typename Tag, auto V>
concept with_value = with_type<Tag, detail::value_type_of<V>> && detail::tag_value_equals<Tag, V>;

}  // namespace switchyard
