// dtype: the core's element types, their C++ storage and compute types, and
// ready-made dtype axes. Needs no torch or CUDA header: f16 and bf16 are
// stored as switchyard::half and switchyard::bfloat16.
//
//   dtype_storage_t<dtype::bf16>  -> bfloat16   (what memory holds)
//   dtype_compute_t<dtype::bf16>  -> float      (what arithmetic uses)
//   dtype_compute_t<dtype::f64>   -> double     (identity for other types)
//   dtype_of_v<float>             -> dtype::f32
//   dtype_size(dtype::f16)        -> 2          (runtime)
#pragma once

#include <cstddef>
#include <concepts>
#include <cstdint>
#include <string_view>

#include "switchyard/core/axis.h"
#include "switchyard/core/bfloat16.h"
#include "switchyard/core/half.h"
#include "switchyard/core/type_label.h"

namespace switchyard {

enum class dtype : std::uint8_t { boolean, u8, i8, i16, i32, i64, f16, bf16, f32, f64 };

constexpr std::string_view to_string(dtype v) noexcept {
    switch (v) {
        case dtype::boolean: return "bool";
        case dtype::u8: return "u8";
        case dtype::i8: return "i8";
        case dtype::i16: return "i16";
        case dtype::i32: return "i32";
        case dtype::i64: return "i64";
        case dtype::f16: return "f16";
        case dtype::bf16: return "bf16";
        case dtype::f32: return "f32";
        case dtype::f64: return "f64";
    }
    return "unknown";
}

template <>
struct type_label<dtype> {
    static constexpr std::string_view value = "dtype";
};

template <dtype D>
struct dtype_traits;

namespace detail {
template <dtype D, typename Storage, typename Compute = Storage>
struct dtype_entry {
    using storage = Storage;
    using compute = Compute;
};
}  // namespace detail

// clang-format off
template <> struct dtype_traits<dtype::boolean> : detail::dtype_entry<dtype::boolean, bool> {};
template <> struct dtype_traits<dtype::u8>  : detail::dtype_entry<dtype::u8, std::uint8_t> {};
template <> struct dtype_traits<dtype::i8>  : detail::dtype_entry<dtype::i8, std::int8_t> {};
template <> struct dtype_traits<dtype::i16> : detail::dtype_entry<dtype::i16, std::int16_t> {};
template <> struct dtype_traits<dtype::i32> : detail::dtype_entry<dtype::i32, std::int32_t> {};
template <> struct dtype_traits<dtype::i64> : detail::dtype_entry<dtype::i64, std::int64_t> {};
template <> struct dtype_traits<dtype::f16> : detail::dtype_entry<dtype::f16, half, float> {};
template <> struct dtype_traits<dtype::bf16> : detail::dtype_entry<dtype::bf16, bfloat16, float> {};
template <> struct dtype_traits<dtype::f32> : detail::dtype_entry<dtype::f32, float> {};
template <> struct dtype_traits<dtype::f64> : detail::dtype_entry<dtype::f64, double> {};
// clang-format on

namespace detail {
// -1 for types that are no dtype's storage type.
template <typename T>
inline constexpr int dtype_index_of = -1;
// clang-format off
template <> inline constexpr int dtype_index_of<bool> = int(dtype::boolean);
template <> inline constexpr int dtype_index_of<std::uint8_t> = int(dtype::u8);
template <> inline constexpr int dtype_index_of<std::int8_t> = int(dtype::i8);
template <> inline constexpr int dtype_index_of<std::int16_t> = int(dtype::i16);
template <> inline constexpr int dtype_index_of<std::int32_t> = int(dtype::i32);
template <> inline constexpr int dtype_index_of<std::int64_t> = int(dtype::i64);
template <> inline constexpr int dtype_index_of<half> = int(dtype::f16);
template <> inline constexpr int dtype_index_of<bfloat16> = int(dtype::bf16);
template <> inline constexpr int dtype_index_of<float> = int(dtype::f32);
template <> inline constexpr int dtype_index_of<double> = int(dtype::f64);
// clang-format on
}  // namespace detail

// The dtype whose storage type is T.
template <typename T>
requires(detail::dtype_index_of<T> >=
         0) inline constexpr dtype dtype_of_v = static_cast<dtype>(detail::dtype_index_of<T>);

// Bytes per element.
constexpr std::size_t dtype_size(dtype d) noexcept {
    switch (d) {
        case dtype::boolean:
        case dtype::u8:
        case dtype::i8: return 1;
        case dtype::i16:
        case dtype::f16:
        case dtype::bf16: return 2;
        case dtype::i32:
        case dtype::f32: return 4;
        case dtype::i64:
        case dtype::f64: return 8;
    }
    return 0;
}

constexpr bool is_floating(dtype d) noexcept {
    return d == dtype::f16 || d == dtype::bf16 || d == dtype::f32 || d == dtype::f64;
}

// dtype_enum<E>: makes enum E name element types, so views and kernels can be
// parameterized by it (the torch adapter specializes it for
// c10::ScalarType). It maps a value to the core dtype and to the C++ storage
// and compute types kernels use for it.
template <typename E>
struct dtype_enum {};

template <>
struct dtype_enum<dtype> {
    static constexpr dtype to_core(dtype d) noexcept { return d; }
    template <dtype D>
    using storage = typename dtype_traits<D>::storage;
    template <dtype D>
    using compute = typename dtype_traits<D>::compute;
};

template <typename E>
concept dtype_enum_type = requires(E e) {
    { dtype_enum<E>::to_core(e) } -> std::same_as<dtype>;
};

// For a dtype value of any dtype enum (dtype::f16, torch::kHalf, ...):
template <auto D>
requires dtype_enum_type<decltype(D)>
inline constexpr dtype core_dtype_v = dtype_enum<decltype(D)>::to_core(D);
// The C++ type that stores one element of D (half, bfloat16, float, ...;
// c10::Half for torch::kHalf), and the type arithmetic on D uses: float for
// f16 and bf16, else the storage type. The same for tags: storage_t<Tag>,
// compute_t<Tag> (kernel_types.h).
template <auto D>
requires dtype_enum_type<decltype(D)>
using dtype_storage_t = typename dtype_enum<decltype(D)>::template storage<D>;
template <auto D>
requires dtype_enum_type<decltype(D)>
using dtype_compute_t = typename dtype_enum<decltype(D)>::template compute<D>;

using full_dtype_axis = axis<dtype::boolean, dtype::u8, dtype::i8, dtype::i16, dtype::i32, dtype::i64, dtype::f16,
                             dtype::bf16, dtype::f32, dtype::f64>;
using float_dtype_axis = axis<dtype::f16, dtype::bf16, dtype::f32, dtype::f64>;
using integer_dtype_axis = axis<dtype::u8, dtype::i8, dtype::i16, dtype::i32, dtype::i64>;

}  // namespace switchyard
