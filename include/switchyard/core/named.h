// named<E>: named axes, so that two axes (and two tag values) can share one
// value type, e.g. the input and the output dtype of a cast.
//
// A tag holds at most one value per type, and a dispatch_set matches its
// values to axes by type, so a second dtype needs a type of its own. Declare
// an enum with the same underlying type and give it a label that derives
// from named<dtype>:
//
//     enum class out_dtype : std::underlying_type_t<switchyard::dtype> {};
//     template <> struct switchyard::type_label<out_dtype> : switchyard::named<switchyard::dtype> {
//         static constexpr std::string_view value = "out_dtype";
//     };
//
// Values are written as a cast, out_dtype(dtype::f16), and convert back the
// same way, dtype(tag_get<out_dtype>(tag)). Errors print them as dtypes
// ("out_dtype=f16").
//
//     using space = axes<axis<dtype::f16, dtype::f32>,
//                        axis<out_dtype(dtype::f16), out_dtype(dtype::f32)>>;
//     template <typename Tag> requires with_value<Tag, out_dtype(dtype::f16)>
//     void cast_to_half(Tag, ...);
//     table.select(dispatch_set{in_dtype, out_dtype(out_dtype_runtime)});
//
// Why an enum and not a wrapper struct: class-type template arguments that are
// computed (as tag sorting does) are mis-emitted by nvcc's host code generator,
// and such wrappers are where other dispatch libraries' named axes fail to
// compile. Enums work as template arguments on every compiler we support.
#pragma once

#include <type_traits>

namespace switchyard {

// Base for the type_label of a named axis whose values are those of E.
template <typename E>
struct named {
    static_assert(std::is_enum_v<E>, "named<E>: E must be an enum type");
    using named_value_type = E;
};

}  // namespace switchyard
