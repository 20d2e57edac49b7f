// The core's dispatch enums, their labels and names, and ready-made axes.
//
//   device_kind  cpu, cuda, metal, webgpu        label "device"
//   contiguity   strided, contiguous             label "contiguity"
//   placement    in_place, out_of_place          label "placement"
//   determinism  not_required, required          label "determinism"
//   scheduling   uniform, adaptive               label "scheduling"
//   block_dim    b32 ... b1024 (value = threads) label "block_dim"
//
// block_dim is an operational parameter, not a dispatch coordinate: kernels
// inject it with tag_add<Tag, block_dim::b128> after dispatch, so it has no
// full axis. dtype lives in dtype.h.
#pragma once

#include <concepts>
#include <cstdint>
#include <string_view>

#include "switchyard/core/axis.h"
#include "switchyard/core/type_label.h"

namespace switchyard {

enum class device_kind : std::uint8_t { cpu, cuda, metal, webgpu };
enum class contiguity : std::uint8_t { strided, contiguous };
enum class placement : std::uint8_t { in_place, out_of_place };
enum class determinism : std::uint8_t { not_required, required };
enum class scheduling : std::uint8_t { uniform, adaptive };
enum class block_dim : std::uint16_t { b32 = 32, b64 = 64, b128 = 128, b256 = 256, b512 = 512, b1024 = 1024 };

constexpr std::string_view to_string(device_kind v) noexcept {
    switch (v) {
        case device_kind::cpu: return "cpu";
        case device_kind::cuda: return "cuda";
        case device_kind::metal: return "metal";
        case device_kind::webgpu: return "webgpu";
    }
    return "unknown";
}

constexpr std::string_view to_string(contiguity v) noexcept {
    return v == contiguity::strided ? "strided" : v == contiguity::contiguous ? "contiguous" : "unknown";
}

constexpr std::string_view to_string(placement v) noexcept {
    return v == placement::in_place ? "in_place" : v == placement::out_of_place ? "out_of_place" : "unknown";
}

constexpr std::string_view to_string(determinism v) noexcept {
    return v == determinism::not_required ? "not_required" : v == determinism::required ? "required" : "unknown";
}

constexpr std::string_view to_string(scheduling v) noexcept {
    return v == scheduling::uniform ? "uniform" : v == scheduling::adaptive ? "adaptive" : "unknown";
}

constexpr std::string_view to_string(block_dim v) noexcept {
    switch (v) {
        case block_dim::b32: return "b32";
        case block_dim::b64: return "b64";
        case block_dim::b128: return "b128";
        case block_dim::b256: return "b256";
        case block_dim::b512: return "b512";
        case block_dim::b1024: return "b1024";
    }
    return "unknown";
}

// Threads per block for a block_dim value.
constexpr int block_threads(block_dim v) noexcept { return static_cast<int>(v); }

template <>
struct type_label<device_kind> {
    static constexpr std::string_view value = "device";
};
template <>
struct type_label<contiguity> {
    static constexpr std::string_view value = "contiguity";
};
template <>
struct type_label<placement> {
    static constexpr std::string_view value = "placement";
};
template <>
struct type_label<determinism> {
    static constexpr std::string_view value = "determinism";
};
template <>
struct type_label<scheduling> {
    static constexpr std::string_view value = "scheduling";
};
template <>
struct type_label<block_dim> {
    static constexpr std::string_view value = "block_dim";
};

// device_enum<E>: makes enum E name devices (the torch adapter specializes it
// for c10::DeviceType), mapping each value to the core's device_kind.
template <typename E>
struct device_enum {};

template <>
struct device_enum<device_kind> {
    static constexpr device_kind to_core(device_kind d) noexcept { return d; }
};

template <typename E>
concept device_enum_type = requires(E e) {
    { device_enum<E>::to_core(e) } -> std::same_as<device_kind>;
};

template <auto D>
requires device_enum_type<decltype(D)>
inline constexpr device_kind core_device_v = device_enum<decltype(D)>::to_core(D);

using full_device_axis = axis<device_kind::cpu, device_kind::cuda, device_kind::metal, device_kind::webgpu>;
using full_contiguity_axis = axis<contiguity::strided, contiguity::contiguous>;
using full_placement_axis = axis<placement::in_place, placement::out_of_place>;
using full_determinism_axis = axis<determinism::not_required, determinism::required>;
using full_scheduling_axis = axis<scheduling::uniform, scheduling::adaptive>;

}  // namespace switchyard
