// at::DeviceType and at::ScalarType (torch::DeviceType, torch::ScalarType) as tag values, axes and C++ types.
//
//     using space = axes<torch_cpu_cuda_device_axis, torch_full_float_stype_axis, full_contiguity_axis>;
//     template <typename Tag> requires with_value<Tag, torch::kCUDA> ...
//     using S = dtype_storage_t<torch::kHalf>;   // c10::Half (in a kernel: storage_t<Tag>)
//     using C = dtype_compute_t<torch::kHalf>;   // float (in a kernel: compute_t<Tag>)
//
// The labels are "device" and "dtype", as for the core's enums, so messages
// read "device=cuda, dtype=Half". Views and for_each accept these values
// directly (device_enum / dtype_enum mappings below). Only c10's enum headers
// are included here.
#pragma once

#include <c10/core/DeviceType.h>
#include <c10/core/ScalarType.h>

#include <stdexcept>
#include <string>
#include <string_view>

#include "switchyard/core/axis.h"
#include "switchyard/core/dtype.h"
#include "switchyard/core/enums.h"
#include "switchyard/core/type_label.h"

namespace switchyard {

template <>
struct type_label<c10::DeviceType> {
    static constexpr std::string_view value = "device";
    static std::string name(c10::DeviceType d) { return c10::DeviceTypeName(d, /*lower_case=*/true); }
};

template <>
struct type_label<c10::ScalarType> {
    static constexpr std::string_view value = "dtype";
    static std::string_view name(c10::ScalarType s) { return c10::toString(s); }
};

namespace detail {

template <c10::ScalarType S>
struct torch_compute {
    using type = c10::impl::ScalarTypeToCPPTypeT<S>;
};
template <>
struct torch_compute<c10::ScalarType::Half> {
    using type = float;
};
template <>
struct torch_compute<c10::ScalarType::BFloat16> {
    using type = float;
};

}  // namespace detail

// torch dtype -> core dtype; throws for dtypes the core does not have.
constexpr dtype to_dtype(c10::ScalarType s) {
    switch (s) {
        case c10::ScalarType::Bool: return dtype::boolean;
        case c10::ScalarType::Byte: return dtype::u8;
        case c10::ScalarType::Char: return dtype::i8;
        case c10::ScalarType::Short: return dtype::i16;
        case c10::ScalarType::Int: return dtype::i32;
        case c10::ScalarType::Long: return dtype::i64;
        case c10::ScalarType::Half: return dtype::f16;
        case c10::ScalarType::BFloat16: return dtype::bf16;
        case c10::ScalarType::Float: return dtype::f32;
        case c10::ScalarType::Double: return dtype::f64;
        default:
            throw std::invalid_argument(std::string("switchyard: torch dtype ") + c10::toString(s) +
                                        " has no switchyard dtype");
    }
}

constexpr c10::ScalarType to_torch(dtype d) noexcept {
    switch (d) {
        case dtype::boolean: return c10::ScalarType::Bool;
        case dtype::u8: return c10::ScalarType::Byte;
        case dtype::i8: return c10::ScalarType::Char;
        case dtype::i16: return c10::ScalarType::Short;
        case dtype::i32: return c10::ScalarType::Int;
        case dtype::i64: return c10::ScalarType::Long;
        case dtype::f16: return c10::ScalarType::Half;
        case dtype::bf16: return c10::ScalarType::BFloat16;
        case dtype::f32: return c10::ScalarType::Float;
        case dtype::f64: return c10::ScalarType::Double;
    }
    return c10::ScalarType::Undefined;
}

// torch device type -> core device; throws for devices switchyard does not run on.
constexpr device_kind to_device_kind(c10::DeviceType d) {
    switch (d) {
        case c10::DeviceType::CPU: return device_kind::cpu;
        case c10::DeviceType::CUDA: return device_kind::cuda;
        case c10::DeviceType::MPS: return device_kind::metal;
        default:
            throw std::invalid_argument("switchyard: torch device " + c10::DeviceTypeName(d, true) +
                                        " has no switchyard device");
    }
}

template <>
struct dtype_enum<c10::ScalarType> {
    static constexpr dtype to_core(c10::ScalarType s) { return to_dtype(s); }
    // The C++ type torch stores for S (c10::Half, c10::BFloat16, float, ...)
    // and the type arithmetic on S uses (float for Half and BFloat16).
    template <c10::ScalarType S>
    using storage = c10::impl::ScalarTypeToCPPTypeT<S>;
    template <c10::ScalarType S>
    using compute = typename detail::torch_compute<S>::type;
};

template <>
struct device_enum<c10::DeviceType> {
    static constexpr device_kind to_core(c10::DeviceType d) { return to_device_kind(d); }
};

// Ready-made axes of torch values.
using torch_cpu_cuda_device_axis = axis<c10::DeviceType::CPU, c10::DeviceType::CUDA>;
using torch_cpu_device_axis = axis<c10::DeviceType::CPU>;
using torch_cuda_device_axis = axis<c10::DeviceType::CUDA>;
// The devices this translation unit can run for_each on: CPU, CUDA when
// nvcc compiles it, and MPS (switchyard's Metal) where SWITCHYARD_WITH_METAL
// is defined. Lets one op file serve every build.
#if defined(__CUDACC__) && defined(SWITCHYARD_WITH_METAL)
using torch_build_device_axis = axis<c10::DeviceType::CPU, c10::DeviceType::CUDA, c10::DeviceType::MPS>;
#elif defined(__CUDACC__)
using torch_build_device_axis = torch_cpu_cuda_device_axis;
#elif defined(SWITCHYARD_WITH_METAL)
using torch_build_device_axis = axis<c10::DeviceType::CPU, c10::DeviceType::MPS>;
#else
using torch_build_device_axis = torch_cpu_device_axis;
#endif
// The devices of this build that run any C++ kernel, CPU and CUDA (not the
// shader devices, which trace kernels): for ops a shader device cannot run,
// such as kernels that cast to host types or write int64 indices.
#if defined(__CUDACC__)
using torch_build_native_device_axis = torch_cpu_cuda_device_axis;
#else
using torch_build_native_device_axis = torch_cpu_device_axis;
#endif
using torch_full_float_stype_axis =
    axis<c10::ScalarType::Half, c10::ScalarType::BFloat16, c10::ScalarType::Float, c10::ScalarType::Double>;
using torch_builtin_float_stype_axis = axis<c10::ScalarType::Float, c10::ScalarType::Double>;
using torch_integer_stype_axis = axis<c10::ScalarType::Byte, c10::ScalarType::Char, c10::ScalarType::Short,
                                      c10::ScalarType::Int, c10::ScalarType::Long>;
using torch_full_numeric_stype_axis = axis<c10::ScalarType::Byte, c10::ScalarType::Char, c10::ScalarType::Short,
                                           c10::ScalarType::Int, c10::ScalarType::Long, c10::ScalarType::Half,
                                           c10::ScalarType::BFloat16, c10::ScalarType::Float, c10::ScalarType::Double>;

}  // namespace switchyard
