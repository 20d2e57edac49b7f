// out_stype: a named axis for an op's output dtype. The input dtype is a
// at::ScalarType axis already, and a tag holds one value per type, so the
// output dtype needs a type of its own; its values are written
// out_stype(at::kHalf) and print as "out_dtype=Half".
#pragma once

#include <switchyard/core/named.h>
#include <switchyard/torch/types.h>

#include <type_traits>

enum class out_stype : std::underlying_type_t<at::ScalarType> {};

template <>
struct switchyard::type_label<out_stype> : switchyard::named<at::ScalarType> {
    static constexpr std::string_view value = "out_dtype";
};

namespace switchyard_examples {
using out_float_stype_axis =
    switchyard::axis<out_stype(at::kHalf), out_stype(at::kBFloat16), out_stype(at::kFloat), out_stype(at::kDouble)>;
}
