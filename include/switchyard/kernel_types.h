// storage_t<Tag> and compute_t<Tag>: the element type a kernel loads and
// stores, and the type it computes in, for the tag's dtype and device.
//
//     using storage = sy::storage_t<Tag>;   // float, half, ... ; shader::value<float> on webgpu
//     using compute = sy::compute_t<Tag>;   // float for half and bf16, else the storage type
//     out[i] = static_cast<storage>(f(static_cast<compute>(in[i]), beta));
//
// On CPU and CUDA these are the plain C++ types (dtype.h). On shader devices
// (webgpu, metal) they are shader::value<T>, the symbolic scalar a traced
// kernel computes with (shader/value.h); written this way, one kernel runs on
// every device. The tag must hold one device value and one dtype value (of
// any enum with a dtype_enum mapping, such as torch::ScalarType).
#pragma once

#include <cstddef>
#include <type_traits>

#include "switchyard/core/dtype.h"
#include "switchyard/core/tag.h"
#include "switchyard/core/tag_device.h"
#include "switchyard/shader/math.h"
#include "switchyard/shader/value.h"

namespace switchyard {

namespace detail {

template <auto V, auto... Rest>
constexpr auto first_dtype_value() {
    if constexpr (dtype_enum_type<decltype(V)>)
        return V;
    else
        return first_dtype_value<Rest...>();
}

template <typename Tag>
struct tag_dtype;
template <auto... V>
struct tag_dtype<sorted_tag<V...>> {
    static_assert((std::size_t{dtype_enum_type<value_type_of<V>>} + ... + 0) == 1,
                  "storage_t / compute_t: the tag must hold exactly one dtype value (a dtype, or a value of an "
                  "enum with a dtype_enum mapping such as torch::ScalarType)");
    static constexpr auto value = first_dtype_value<V...>();
};

template <typename Tag>
inline constexpr bool tag_on_shader_device = shader::is_shader_device_v<tag_device_v<Tag>>;

template <typename Tag, typename T>
using for_tag_device_t = std::conditional_t<tag_on_shader_device<Tag>, shader::value<T>, T>;

}  // namespace detail

template <any_tag Tag>
using storage_t = detail::for_tag_device_t<Tag, dtype_storage_t<detail::tag_dtype<Tag>::value>>;

template <any_tag Tag>
using compute_t = detail::for_tag_device_t<Tag, dtype_compute_t<detail::tag_dtype<Tag>::value>>;

}  // namespace switchyard
