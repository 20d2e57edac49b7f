// row_stat and row_stats: the per-row statistics transform_rows
// (switchyard/transform_rows.h) computes before it maps a row.
//
//     sy::row_stat(sy::amax)                  the row's largest input value
//     sy::row_stat(sy::sum, g)                the row's sum of g(in..., earlier stats...)
//     sy::row_stats(sy::amax, sy::row_stat(sy::sum, g))   in order; a bare
//                                             combine is row_stat(combine)
//
// Statistic k folds, with its combine (core/combine.h), a map of each
// position's input values and of statistics 0..k-1, which are final by then:
// softmax's sum of exp(x - max) needs the max first. Without a map a
// statistic folds the first input's values.
#pragma once

#include <cstddef>
#include <type_traits>
#include <utility>

#include "switchyard/core/combine.h"
#include "switchyard/core/config.h"
#include "switchyard/core/slots.h"

namespace switchyard {

// The map of a statistic given none: the first input's value.
struct first_input_value {
    template <typename C, typename... Rest>
    SWITCHYARD_HOST_DEVICE constexpr C operator()(C v, Rest...) const {
        return v;
    }
};

template <typename Combine, typename Map>
struct row_stat_t {
    Combine combine;
    Map map;
};

template <typename Combine>
constexpr row_stat_t<Combine, first_input_value> row_stat(Combine const& combine) {
    return {combine, {}};
}
template <typename Combine, typename Map>
constexpr row_stat_t<Combine, Map> row_stat(Combine const& combine, Map const& map) {
    return {combine, map};
}

namespace detail {

template <typename T>
inline constexpr bool is_row_stat_v = false;
template <typename Combine, typename Map>
inline constexpr bool is_row_stat_v<row_stat_t<Combine, Map>> = true;

template <typename T>
constexpr auto as_row_stat(T const& s) {
    if constexpr (is_row_stat_v<T>)
        return s;
    else
        return row_stat(s);
}

}  // namespace detail

// Statistics in the order they are computed.
template <typename... Stat>
struct row_stats_t {
    static constexpr int count = static_cast<int>(sizeof...(Stat));
    detail::slot_list<std::index_sequence_for<Stat...>, Stat...> stats;

    template <std::size_t I>
    SWITCHYARD_HOST_DEVICE constexpr auto const& get() const {
        return detail::slot_value<I>(stats);
    }
};

template <typename... Stat>
constexpr auto row_stats(Stat const&... stat) {
    return row_stats_t<decltype(detail::as_row_stat(stat))...>{{{detail::as_row_stat(stat)}...}};
}

namespace detail {

template <typename T>
inline constexpr bool is_row_stats_v = false;
template <typename... Stat>
inline constexpr bool is_row_stats_v<row_stats_t<Stat...>> = true;

}  // namespace detail

}  // namespace switchyard
