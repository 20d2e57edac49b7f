// row_stat and row_stats: the per-row statistics transform_rows
// (switchyard/transform_rows.h) computes before it maps a row.
//
//     sy::row_stat(sy::amax)                  the row's largest input value
//     sy::row_stat(sy::sum, g)                the row's sum of g(in..., earlier stats...)
//     sy::row_stats(sy::amax, sy::row_stat(sy::sum, g))   in order; a bare
//                                             combine is row_stat(combine)
//     sy::row_stat(sy::sum, g).with_values()  f also receives g's value at
//                                             each position
//
// Statistic k folds, with its combine (core/combine.h), a map of each
// position's input values and of statistics 0..k-1, which are final by then:
// softmax's sum of exp(x - max) needs the max first. Without a map a
// statistic folds the first input's values.
//
// with_values() hands the map's value at each position to transform_rows'
// f, after the inputs' values: softmax's f is then e / sum with
// e = exp(x - max) as the sum folded it, not a second exp. The CPU keeps
// those values from the statistic's pass (device/cpu/transform_rows.h: in
// the output row or a per-task buffer), CUDA in shared memory for the rows
// its kernel holds in registers, up to 32 KiB of values a block; otherwise
// they are computed again where f runs (values_recomputed below), which
// gives the same values.
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

// WithValues: f receives the map's value at each position (with_values()).
template <typename Combine, typename Map, bool WithValues = false>
struct row_stat_t {
    static constexpr bool with_values_v = WithValues;
    Combine combine;
    Map map;

    constexpr row_stat_t<Combine, Map, true> with_values() const { return {combine, map}; }
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
template <typename Combine, typename Map, bool WithValues>
inline constexpr bool is_row_stat_v<row_stat_t<Combine, Map, WithValues>> = true;

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
    // How many statistics hand f their values, and which ones, in order.
    static constexpr int values_count = (0 + ... + int{Stat::with_values_v});
    static constexpr auto with_values = [] {
        struct indices {
            int at[values_count > 0 ? values_count : 1];
        } r{};
        int n = 0, k = 0;
        ((Stat::with_values_v ? (void)(r.at[n++] = k) : void(), ++k), ...);
        return r;
    }();
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

// f of (inputs..., statistics...) that computes the with_values() values
// itself from them: how devices that keep no values run such statistics.
// Every argument is a value of the compute type.
template <int NIn, typename Stats, typename F>
struct values_recomputed {
    Stats stats;
    F f;

    template <typename... A>
    SWITCHYARD_HOST_DEVICE constexpr auto operator()(A const&... a) const {
        using V = std::common_type_t<A...>;
        V const arg[] = {a...};
        return call(arg, std::make_index_sequence<NIn>{}, std::make_index_sequence<Stats::values_count>{},
                    std::make_index_sequence<Stats::count>{});
    }

private:
    template <typename V, std::size_t... K, std::size_t... W, std::size_t... J>
    SWITCHYARD_HOST_DEVICE constexpr auto call(V const* arg, std::index_sequence<K...>, std::index_sequence<W...>,
                                               std::index_sequence<J...>) const {
        return f(arg[K]...,
                 value<Stats::with_values.at[W]>(arg, std::make_index_sequence<NIn>{},
                                                 std::make_index_sequence<Stats::with_values.at[W]>{})...,
                 arg[NIn + J]...);
    }
    // Statistic I's map at this position: the inputs and statistics 0..I-1.
    template <int I, typename V, std::size_t... K, std::size_t... J>
    SWITCHYARD_HOST_DEVICE constexpr V value(V const* arg, std::index_sequence<K...>, std::index_sequence<J...>) const {
        return static_cast<V>(stats.template get<I>().map(arg[K]..., arg[NIn + J]...));
    }
};

template <int NIn, typename Stats, typename F>
SWITCHYARD_HOST_DEVICE constexpr values_recomputed<NIn, Stats, F> recompute_values(Stats const& stats, F const& f) {
    return {stats, f};
}

}  // namespace detail

}  // namespace switchyard
