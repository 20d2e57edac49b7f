// tag_device_v<Tag>: the device a tag names, as a device_kind: its
// device_kind value, or its one value whose enum has a device_enum mapping
// (such as torch::DeviceType). A tag with no or two device values is refused.
#pragma once

#include <cstddef>

#include "switchyard/core/enums.h"
#include "switchyard/core/tag.h"

namespace switchyard {

namespace detail {

template <typename T>
constexpr device_kind to_core_device(T v) noexcept {
    if constexpr (device_enum_type<T>)
        return device_enum<T>::to_core(v);
    else
        return device_kind::cpu;
}

// The device named by a tag: its device_kind, or its one value whose type has
// a device_enum mapping.
template <typename Tag>
struct tag_device;
template <auto... V>
struct tag_device<sorted_tag<V...>> {
    static constexpr std::size_t count = (std::size_t{device_enum_type<value_type_of<V>>} + ... + 0);
    static_assert(count == 1,
                  "the tag must hold exactly one device value (a device_kind, or a value of an enum "
                  "with a device_enum mapping such as torch::DeviceType)");
    static constexpr device_kind value = [] {
        device_kind d = device_kind::cpu;
        ((device_enum_type<value_type_of<V>> ? void(d = to_core_device(V)) : void()), ...);
        return d;
    }();
};

}  // namespace detail

template <any_tag Tag>
inline constexpr device_kind tag_device_v = detail::tag_device<Tag>::value;

}  // namespace switchyard
