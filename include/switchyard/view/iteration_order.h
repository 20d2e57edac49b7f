// iteration_order: the one order in which an elementwise operation walks all
// of its operands, chosen jointly so that memory is read and written in
// address order.
//
// Why jointly: a flat view maps a flat index to an element. Merging adjacent
// dimensions (coalescing) never changes which element an index names, so each
// view does it on its own. Reordering dimensions does change it: if a
// transposed input were walked in its memory order and its row-major output in
// another, out[i] = f(in[i]) would pair the wrong elements. So reordering is
// decided once for all operands, here, and every view of the operation is
// built with the same order:
//
//     auto order = iteration_order_of(out, in);     // out's layout leads
//     auto o = flat_out<device_kind::cpu, dtype::f32, contiguity::strided>(out, order);
//     auto i = flat_in<device_kind::cpu, dtype::f32, contiguity::strided>(in, order);
//
// The order sorts dimensions from outermost to innermost by the operands'
// strides (the first operand decides; later ones break ties; broadcast
// dimensions, stride 0, do not vote). When every operand is dense in that
// order with identical strides, `dense` is true: a flat index is then the
// memory offset of every operand, and contiguous views may be used even for,
// say, a transposed input with a matching output.
#pragma once

#include <concepts>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "switchyard/view/strided_ref.h"

namespace switchyard {

struct iteration_order {
    std::int32_t rank = 0;
    // dims[0] is the outermost logical dimension, dims[rank - 1] the innermost.
    std::int8_t dims[max_rank] = {};
    // Every operand is row-major contiguous once permuted by dims.
    bool dense = false;

    // The logical (row-major) order of a rank-r array.
    static constexpr iteration_order logical(std::int32_t r) noexcept {
        iteration_order o;
        o.rank = r;
        for (std::int32_t d = 0; d < r; ++d) o.dims[d] = static_cast<std::int8_t>(d);
        return o;
    }

    // ref with its dimensions permuted into this order.
    strided_ref permute(strided_ref const& ref) const {
        if (ref.rank != rank)
            throw std::invalid_argument("iteration_order: " + detail::ref_label(ref.name) + " has rank " +
                                        std::to_string(ref.rank) + " but the order was made for rank " +
                                        std::to_string(rank));
        strided_ref p = ref;
        for (std::int32_t d = 0; d < rank; ++d) {
            p.sizes[d] = ref.sizes[dims[d]];
            p.strides[d] = ref.strides[dims[d]];
        }
        return p;
    }
};

namespace detail {

// "[4, 3]" for sizes[0..rank).
inline std::string shape_string(std::int64_t const* sizes, std::size_t rank) {
    std::string s = "[";
    for (std::size_t d = 0; d < rank; ++d) s += (d ? ", " : "") + std::to_string(sizes[d]);
    return s + "]";
}
inline std::string shape_string(strided_ref const& r) {
    return shape_string(r.sizes, static_cast<std::size_t>(r.rank));
}

// True when dimension `outer` should move inside dimension `inner`.
inline bool walks_inside(strided_ref const* const* refs, int n, std::int32_t outer, std::int32_t inner) {
    for (int k = 0; k < n; ++k) {
        strided_ref const* r = refs[k];
        std::int64_t const a = r->strides[outer], b = r->strides[inner];
        if (r->sizes[outer] == 1 || r->sizes[inner] == 1 || a == 0 || b == 0) continue;
        std::uint64_t const ma = stride_magnitude(a), mb = stride_magnitude(b);
        if (ma != mb) return ma < mb;
    }
    return false;
}

}  // namespace detail

// The joint order of n operands of one shape (the caller checks the shapes);
// refs[0]'s layout leads.
inline iteration_order joint_iteration_order(strided_ref const* const* refs, int n) {
    auto order = iteration_order::logical(refs[0]->rank);
    // Insertion sort: stable, so ties keep the logical order.
    for (std::int32_t i = 1; i < order.rank; ++i)
        for (std::int32_t j = i; j > 0 && detail::walks_inside(refs, n, order.dims[j - 1], order.dims[j]); --j) {
            auto const t = order.dims[j - 1];
            order.dims[j - 1] = order.dims[j];
            order.dims[j] = t;
        }
    order.dense = true;
    for (int k = 0; k < n; ++k) order.dense = order.dense && order.permute(*refs[k]).is_contiguous();
    return order;
}

// The joint order of same-shaped operands; the first one's layout leads.
template <std::same_as<strided_ref>... Rest>
iteration_order iteration_order_of(strided_ref const& first, Rest const&... rest) {
    strided_ref const* const refs[] = {&first, &rest...};
    for (auto const* r : refs)
        if (r->rank != first.rank || [&] {
                for (std::int32_t d = 0; d < first.rank; ++d)
                    if (r->sizes[d] != first.sizes[d]) return true;
                return false;
            }())
            throw std::invalid_argument("iteration order: " + detail::ref_label(r->name) + " has shape " +
                                        detail::shape_string(*r) + " but " + detail::ref_label(first.name) + " has " +
                                        detail::shape_string(first) + "; elementwise operands must have one shape");
    return joint_iteration_order(refs, static_cast<int>(sizeof...(Rest)) + 1);
}

// contiguity::contiguous when one flat index is the memory offset of every
// operand (all dense with identical strides), else contiguity::strided.
template <std::same_as<strided_ref>... Rest>
contiguity combined_contiguity(strided_ref const& first, Rest const&... rest) {
    return iteration_order_of(first, rest...).dense ? contiguity::contiguous : contiguity::strided;
}

}  // namespace switchyard
