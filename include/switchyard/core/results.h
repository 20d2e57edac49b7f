// results{a, b, ...}: what a transform kernel returns when it has several
// outputs, one value per output in the order the outputs were passed.
//
//     sy::transform(tag, sy::outputs(lo, hi), [=] SWITCHYARD_HOST_DEVICE (C x) {
//         return sy::results{x - C(1), x + C(1)};
//     }, in);
//
// A plain aggregate (core/slots.h) usable in CUDA device code and on shader
// devices, where the values are symbolic.
#pragma once

#include <cstddef>
#include <utility>

#include "switchyard/core/config.h"
#include "switchyard/core/slots.h"

namespace switchyard {

template <typename... T>
struct results {
    detail::slot_list<std::index_sequence_for<T...>, T...> slots;

    SWITCHYARD_HOST_DEVICE constexpr results(T const&... v) : slots{{v}...} {}

    static constexpr std::size_t size = sizeof...(T);

    template <std::size_t I>
    SWITCHYARD_HOST_DEVICE constexpr auto const& get() const noexcept {
        return detail::slot_value<I>(slots);
    }
};

template <typename... T>
results(T...) -> results<T...>;

template <typename T>
inline constexpr bool is_results_v = false;
template <typename... T>
inline constexpr bool is_results_v<results<T...>> = true;

// Output O's value of what a kernel returned (results{...} or one value), as
// compute type C: what every device's transform runner stores.
template <std::size_t O, typename C, typename R>
SWITCHYARD_HOST_DEVICE constexpr C result_value(R const& r) {
    if constexpr (is_results_v<R>)
        return static_cast<C>(r.template get<O>());
    else
        return static_cast<C>(r);
}

}  // namespace switchyard
