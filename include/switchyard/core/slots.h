// slot_list: values of several types held as base classes, each tagged by
// its position, and slot_value<I> to read one. The aggregate behind
// results{...} (core/results.h) and lazy chains' step lists (lazy/chain.h):
// usable in CUDA device code without --expt-relaxed-constexpr and on shader
// devices (std::tuple is neither), and flat, so the type name of N values
// grows as N rather than as std::tuple's nested bases do.
#pragma once

#include <cstddef>
#include <utility>

#include "switchyard/core/config.h"

namespace switchyard::detail {

template <std::size_t I, typename T>
struct slot {
    T value;
};

template <typename Indices, typename... T>
struct slot_list;
template <std::size_t... I, typename... T>
struct slot_list<std::index_sequence<I...>, T...> : slot<I, T>... {};

template <std::size_t I, typename T>
SWITCHYARD_HOST_DEVICE constexpr T const& slot_value(slot<I, T> const& s) noexcept {
    return s.value;
}

}  // namespace switchyard::detail
