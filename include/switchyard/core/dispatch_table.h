// dispatch_table<Space, R(Args...)>: a sparse map from runtime coordinates to
// the kernel instantiated for them.
//
//     struct scale_op {
//         template <typename Tag> requires with_type<Tag, dtype>
//         static void op(Tag, void* data, std::int64_t n);
//
//         using space      = axes<full_device_axis, float_dtype_axis>;
//         using subspaces  = coverage<axes<axis<device_kind::cpu>, float_dtype_axis>>;
//         using dispatcher = dispatch_table<space, void(void*, std::int64_t)>;
//     };
//     static auto const table = dispatch_table_from_op<scale_op>("scale");
//     table.select(dispatch_set{device_kind::cpu, dtype::f32})(ptr, n);
//
// or, from a stateless visitor (a capture-less lambda):
//
//     dispatch_table<space, void(void*, std::int64_t)> table(
//         "scale", coverage<space>{}, [](auto tag, void* p, std::int64_t n) { ... });
//
// Storage is a flat array of plain function pointers with one slot per point
// of the space (null where not covered). select maps each coordinate to its
// axis position with a table lookup, combines them row-major and loads the
// pointer: no hashing, no std::function, no allocation. For one-byte enums
// (all of the core's) each axis's lookup table already holds position *
// stride, and a value outside the axis maps to a marker >= the space's size,
// so select is one load per axis, a sum and a single range check.
#pragma once

#include <array>
#include <concepts>
#include <cstddef>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include "switchyard/core/axes.h"
#include "switchyard/core/config.h"
#include "switchyard/core/dispatch_error.h"
#include "switchyard/core/dispatch_set.h"

namespace switchyard {

namespace detail {

template <typename...>
inline constexpr bool always_false = false;

// A heap array that copies deeply; <vector> would add a third to the core's
// parse time for the two operations the table needs.
template <typename T>
class owned_array {
public:
    owned_array() = default;
    explicit owned_array(std::size_t n) : data_(n ? new T[n]() : nullptr), size_(n) {}
    owned_array(owned_array const& o) : owned_array(o.size_) {
        for (std::size_t i = 0; i < size_; ++i) data_[i] = o.data_[i];
    }
    owned_array(owned_array&& o) noexcept : data_(o.data_), size_(o.size_) {
        o.data_ = nullptr;
        o.size_ = 0;
    }
    owned_array& operator=(owned_array o) noexcept {
        std::swap(data_, o.data_);
        std::swap(size_, o.size_);
        return *this;
    }
    ~owned_array() { delete[] data_; }

    T& operator[](std::size_t i) noexcept { return data_[i]; }
    T const& operator[](std::size_t i) const noexcept { return data_[i]; }
    std::size_t size() const noexcept { return size_; }
    T const* begin() const noexcept { return data_; }
    T const* end() const noexcept { return data_ + size_; }

    void push_back(T v) {
        owned_array grown(size_ + 1);
        for (std::size_t i = 0; i < size_; ++i) grown.data_[i] = data_[i];
        grown.data_[size_] = v;
        *this = std::move(grown);
    }

private:
    T* data_ = nullptr;
    std::size_t size_ = 0;
};

// Axis Ax's share of a space's row-major position: index * stride, or a
// sentinel >= Space::size for a value outside the axis (so any miss makes
// the sum >= size and one compare finds it). Enums of one byte index a
// 256-entry table directly: no range check, no multiply.
template <typename Space, typename Ax, std::size_t Stride>
struct axis_contribution {
    using value_type = typename Ax::value_type;
    static constexpr std::size_t miss = Space::size;
    using entry = std::conditional_t<(Space::size < 65536), unsigned short, std::size_t>;
    static constexpr bool byte_sized = sizeof(value_type) == 1;
    static constexpr std::array<entry, 256> table = [] {
        std::array<entry, 256> t{};
        for (auto& e : t) e = static_cast<entry>(miss);
        for (std::size_t i = 0; i < Ax::size; ++i)
            t[static_cast<unsigned char>(Ax::values[i])] = static_cast<entry>(i * Stride);
        return t;
    }();
    SWITCHYARD_INLINE static constexpr std::size_t of(value_type v) noexcept {
        if constexpr (byte_sized) {
            return table[static_cast<unsigned char>(v)];
        } else {
            auto const i = Ax::index_of(v);
            return i == axis_npos ? miss : i * Stride;
        }
    }
};

// Visitor{}(Tag, args...) is valid and yields something usable as R. A
// requires-expression rather than std::is_invocable_r: cheaper to compile,
// which matters once per covered point.
template <typename Visitor, typename R, typename Tag, typename... Args>
concept callable_returning = requires(Visitor const& v, Args&&... a) {
    v(Tag{}, static_cast<Args&&>(a)...);
}
&&(std::is_void_v<R> || requires(Visitor const& v, Args&&... a) {
    { v(Tag{}, static_cast<Args&&>(a)...) } -> std::convertible_to<R>;
});

template <typename Space, typename Set>
struct set_check;
template <typename... A, typename... T>
struct set_check<axes<A...>, dispatch_set<T...>> {
    static constexpr bool no_foreign = (axes<A...>::template has_axis_for<T> && ...);
    static_assert(no_foreign,
                  "dispatch_table::select: the dispatch_set has a value whose type is not an "
                  "axis of this table; remove it or add that axis to the table's space");
    static constexpr bool complete = (dispatch_set<T...>::template has<typename A::value_type> && ...);
    static_assert(!no_foreign || complete,
                  "dispatch_table::select: the dispatch_set is missing a value for an axis of "
                  "this table; pass one value per axis");
    static constexpr bool ok = no_foreign && complete;
};

}  // namespace detail

template <typename Space, typename Signature>
class dispatch_table {
    static_assert(detail::always_false<Space, Signature>,
                  "dispatch_table<Space, R(Args...)>: Space must be an axes<...> and the second "
                  "argument a function type such as void(float*, std::int64_t)");
};

template <typename... A, typename R, typename... Args>
class dispatch_table<axes<A...>, R(Args...)> {
public:
    using space = axes<A...>;
    using function_type = R (*)(Args...);

    // An empty table: every select throws until entries are added with `with`.
    explicit dispatch_table(std::string name) : name_(std::move(name)), entries_(space::size) {}

    // A table whose covered points call Visitor{}(tag, args...).
    template <typename... Subs, typename Visitor>
    dispatch_table(std::string name, coverage<Subs...> covered, Visitor visitor) : dispatch_table(std::move(name)) {
        add(covered, visitor);
    }

    // A copy of this table with more covered points; a point covered here
    // already is rebound to the new visitor.
    template <typename... Subs, typename Visitor>
    dispatch_table with(coverage<Subs...> covered, Visitor visitor) const {
        dispatch_table copy(*this);
        copy.add(covered, visitor);
        return copy;
    }

    // The kernel for the coordinates; throws dispatch_lookup_error if none.
    template <typename... T>
    function_type select(dispatch_set<T...> const& coordinates) const {
        if constexpr (detail::set_check<space, dispatch_set<T...>>::ok) {
            auto const position = position_of(coordinates, std::index_sequence_for<A...>{});
            if (position >= space::size) [[unlikely]]
                fail(coordinates, dispatch_lookup_error::reason::outside_space);
            function_type const f = entries_[position];
            if (f == nullptr) [[unlikely]]
                fail(coordinates, dispatch_lookup_error::reason::not_covered);
            return f;
        } else {
            return nullptr;
        }
    }

    // The kernel for the coordinates, or nullptr if none.
    template <typename... T>
    function_type try_select(dispatch_set<T...> const& coordinates) const noexcept {
        if constexpr (detail::set_check<space, dispatch_set<T...>>::ok) {
            auto const position = position_of(coordinates, std::index_sequence_for<A...>{});
            return position >= space::size ? nullptr : entries_[position];
        } else {
            return nullptr;
        }
    }

    std::string_view name() const noexcept { return name_; }

    // Number of covered points.
    std::size_t covered_count() const noexcept {
        std::size_t n = 0;
        for (auto f : entries_) n += f != nullptr;
        return n;
    }

private:
    template <typename Visitor, typename Tag>
    static R call_point(Args... args) {
        if constexpr (detail::callable_returning<Visitor, R, Tag, Args...>) {
            return Visitor{}(Tag{}, static_cast<Args&&>(args)...);
        } else {
            static_assert(detail::always_false<Tag>,
                          "dispatch_table: the op has no overload for a covered point; the "
                          "'Tag' in the lines above is that point. Add an overload (or relax a "
                          "requires-clause) or remove the point from the coverage");
            return static_cast<R (*)()>(nullptr)();
        }
    }

    template <typename Sub, typename Visitor, std::size_t... K>
    void add_subspace(std::index_sequence<K...>) {
        using check = detail::subspace_of<space, Sub>;
        // An array and a loop, not a fold over K: a 1536-term comma
        // expression makes the compiler's work grow faster than linearly.
        static constexpr function_type functions[] = {&call_point<Visitor, typename Sub::template point_tag<K>>...};
        for (std::size_t k = 0; k < sizeof...(K); ++k) entries_[check::positions[k]] = functions[k];
        covered_.push_back(&check::describe);
    }

    template <typename... Subs, typename Visitor>
    void add(coverage<Subs...>, Visitor) {
        static_assert(std::is_empty_v<Visitor> && std::is_default_constructible_v<Visitor>,
                      "dispatch_table: the visitor must be stateless and default-constructible "
                      "(a lambda without captures or an empty struct); pass state as call "
                      "arguments");
        constexpr bool all_ok = (detail::checked_subspace<space, Subs>::ok && ...);
        if constexpr (all_ok && std::is_empty_v<Visitor> && std::is_default_constructible_v<Visitor>) {
            (add_subspace<typename detail::checked_subspace<space, Subs>::normalized, Visitor>(
                 std::make_index_sequence<detail::checked_subspace<space, Subs>::normalized::size>{}),
             ...);
        }
    }

    // Row-major position of the coordinates; >= space::size if a value lies
    // outside its axis.
    template <typename... T, std::size_t... I>
    SWITCHYARD_INLINE static std::size_t position_of(dispatch_set<T...> const& c, std::index_sequence<I...>) noexcept {
        return (std::size_t{0} + ... +
                detail::axis_contribution<space, A, space::strides[I]>::of(c.template get<typename A::value_type>()));
    }

    template <typename... T>
    [[noreturn]] SWITCHYARD_NOINLINE void fail(dispatch_set<T...> c, dispatch_lookup_error::reason why) const {
        std::string coordinates;
        std::string outside;
        auto one = [&](auto axis_type) {
            using Ax = typename decltype(axis_type)::type;
            auto const v = c.template get<typename Ax::value_type>();
            if (!coordinates.empty()) coordinates += ", ";
            coordinates += coordinate_name(v);
            if (!Ax::contains(v)) {
                if (!outside.empty()) outside += "; ";
                outside += coordinate_name(v);
                outside += " is outside the table's space (";
                outside += type_label_v<typename Ax::value_type>;
                outside += " takes ";
                for (std::size_t d = 0; d < Ax::size; ++d) {
                    if (d) outside += ", ";
                    outside += value_name(Ax::values[d]);
                }
                outside += ')';
            }
        };
        (one(detail::indexed_type<0, A>{}), ...);

        std::string message = "dispatch table '" + name_ + "' has no kernel for " + coordinates + ": ";
        if (why == dispatch_lookup_error::reason::outside_space)
            message += outside;
        else
            message += "the point is inside the table's space but not covered";
        message += ". Covered: ";
        if (covered_.size() == 0) message += "nothing";
        constexpr std::size_t shown = 16;
        for (std::size_t i = 0; i < covered_.size() && i < shown; ++i) {
            if (i) message += "; ";
            message += covered_[i]();
        }
        if (covered_.size() > shown) message += "; and " + std::to_string(covered_.size() - shown) + " more";
        throw dispatch_lookup_error(name_, std::move(coordinates), why, message);
    }

    std::string name_;
    detail::owned_array<function_type> entries_;      // one slot per point; null = not covered
    detail::owned_array<std::string (*)()> covered_;  // describes each added subspace
};

namespace detail {

// Calls Op::op(tag, args...). A named struct rather than a lambda so that
// error messages say "op_visitor<your_op>".
template <typename Op>
struct op_visitor {
    template <typename Tag, typename... X>
    requires requires(Tag t, X&&... x) { Op::op(t, static_cast<X&&>(x)...); }
    decltype(auto) operator()(Tag t, X&&... x) const { return Op::op(t, static_cast<X&&>(x)...); }
};

template <typename Op>
struct op_check {
    static constexpr bool has_space = requires { typename Op::space; };
    static_assert(has_space, "dispatch_table_from_op<Op>: Op needs `using space = axes<...>;`");
    static constexpr bool has_dispatcher = requires { typename Op::dispatcher; };
    static_assert(has_dispatcher,
                  "dispatch_table_from_op<Op>: Op needs `using dispatcher = "
                  "dispatch_table<space, R(Args...)>;`");
    static constexpr bool ok = has_space && has_dispatcher;
};

// Op::subspaces, or the whole space where Op does not say.
template <typename Op>
auto op_subspaces() {
    if constexpr (requires { typename Op::subspaces; })
        return typename Op::subspaces{};
    else
        return coverage<typename Op::space>{};
}

}  // namespace detail

// Builds Op::dispatcher over Op::subspaces (every point of Op::space where
// Op has no subspaces), calling Op::op(tag, args...).
template <typename Op>
auto dispatch_table_from_op(std::string name) {
    if constexpr (detail::op_check<Op>::ok) {
        static_assert(std::is_same_v<typename Op::dispatcher::space, typename Op::space>,
                      "dispatch_table_from_op<Op>: Op::dispatcher must be a dispatch_table over "
                      "Op::space");
        return typename Op::dispatcher(std::move(name), detail::op_subspaces<Op>(), detail::op_visitor<Op>{});
    }
}

}  // namespace switchyard
