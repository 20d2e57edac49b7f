// elementwise_layout: how one elementwise operation walks all of its
// operands, decided once on the host from their sizes and strides. transform
// (switchyard/transform.h) builds it; each device's runner reads it.
//
//     out [4096, 1024] strides (1024, 1)
//     x   [4096, 1024] strides (1024, 1)
//     y         [1024] strides      (1)      broadcast: expanded to (0, 1)
//     -> rank 2, sizes [4096, 1024], strides out (1024, 1), x (1024, 1), y (0, 1)
//
// Inputs broadcast to the output's shape by PyTorch's rules (dimensions
// aligned from the right; a size-1 or missing dimension repeats with stride
// 0). Then the dimensions are put in the order the first output lays them out
// in memory (iteration_order.h) and merged where every operand steps evenly
// across them, so a contiguous or merely transposed operation becomes one
// dimension and a broadcast over rows two. Each operand keeps its own
// strides: a broadcast operand never makes the others strided. Runners walk
// rows of the innermost dimension; an operand's inner stride (1, 0 or
// another) says how it is read there.
//
// Checks, each naming the op and the argument: shapes that do not broadcast,
// outputs of different shapes, an output with internal overlap (it would
// need broadcasting), an output that shares memory with an input other than
// exactly (the same array: in place) or with another output, and more
// operands than max_operands. Memory shared in a way the strides alone
// cannot rule out (x[::2] and x[1::2]) counts as shared: refused, never raced.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

#include "switchyard/view/iteration_order.h"
#include "switchyard/view/overlap.h"
#include "switchyard/view/strided_ref.h"

namespace switchyard {

// The most operands (outputs and inputs together) one elementwise operation
// takes.
inline constexpr int max_operands = 16;

struct elementwise_layout {
    std::int32_t outputs = 0;
    std::int32_t operands = 0;  // outputs first, then inputs, in call order
    std::int32_t rank = 0;      // after reordering and merging; 0 for one element
    std::int64_t numel = 0;
    std::int64_t sizes[max_rank] = {};                  // outermost first
    std::int64_t strides[max_operands][max_rank] = {};  // in elements, per operand
    void* data[max_operands] = {};

    // The innermost dimension's size (1 for rank 0) and an operand's stride
    // along it (0 for rank 0).
    constexpr std::int64_t row_size() const noexcept { return rank > 0 ? sizes[rank - 1] : 1; }
    constexpr std::int64_t inner_stride(int operand) const noexcept {
        return rank > 0 ? strides[operand][rank - 1] : 0;
    }
    // The element offset of operand k at flat index i (row-major over sizes).
    constexpr std::int64_t offset(int operand, std::int64_t i) const noexcept {
        std::int64_t o = 0;
        for (std::int32_t d = rank; d-- > 0;) {
            o += (i % sizes[d]) * strides[operand][d];
            i /= sizes[d];
        }
        return o;
    }
};

namespace detail {

[[noreturn]] inline void layout_fail(char const* op, std::string const& what) {
    throw std::invalid_argument(std::string(op) + ": " + what);
}

// `in` with the rank and sizes of `shape`, broadcast dimensions at stride 0.
inline strided_ref broadcast_to(char const* op, strided_ref const& in, strided_ref const& shape) {
    if (in.rank > shape.rank)
        layout_fail(op, "input " + ref_label(in.name) + " has shape " + shape_string(in) +
                            ", which does not broadcast to the output shape " + shape_string(shape) +
                            " (it has more dimensions)");
    strided_ref e = in;
    e.rank = shape.rank;
    std::int32_t const lead = shape.rank - in.rank;
    for (std::int32_t d = shape.rank; d-- > 0;) {
        std::int32_t const src = d - lead;
        std::int64_t const size = src >= 0 ? in.sizes[src] : 1;
        std::int64_t const stride = src >= 0 ? in.strides[src] : 0;
        if (size == shape.sizes[d]) {
            e.sizes[d] = size;
            e.strides[d] = size == 1 ? 0 : stride;
        } else if (size == 1) {
            e.sizes[d] = shape.sizes[d];
            e.strides[d] = 0;
        } else {
            layout_fail(op, "input " + ref_label(in.name) + " has shape " + shape_string(in) +
                                ", which does not broadcast to the output shape " + shape_string(shape) + " (size " +
                                std::to_string(size) + " against " + std::to_string(shape.sizes[d]) + " in dimension " +
                                std::to_string(d) + " of the output)");
        }
    }
    return e;
}

inline bool same_shape(strided_ref const& a, strided_ref const& b) noexcept {
    if (a.rank != b.rank) return false;
    for (std::int32_t d = 0; d < a.rank; ++d)
        if (a.sizes[d] != b.sizes[d]) return false;
    return true;
}

}  // namespace detail

// The layout of outputs `outs[0..n_out)` and inputs `ins[0..n_in)`; `op`
// names the operation in errors.
inline elementwise_layout make_elementwise_layout(char const* op, strided_ref const* outs, int n_out,
                                                  strided_ref const* ins, int n_in) {
    using detail::layout_fail;
    using detail::ref_label;
    if (n_out < 1) layout_fail(op, "an elementwise operation needs at least one output");
    if (n_in < 0 || n_out + n_in > max_operands)
        layout_fail(op, std::to_string(n_out) + " outputs and " + std::to_string(n_in) + " inputs exceed the " +
                            std::to_string(max_operands) + " operands one elementwise operation takes");
    strided_ref const& shape = outs[0];
    strided_ref refs[max_operands];
    for (int k = 0; k < n_out; ++k) {
        strided_ref const& o = outs[k];
        if (!detail::same_shape(o, shape))
            layout_fail(op, "output " + ref_label(o.name) + " has shape " + detail::shape_string(o) + " but output " +
                                ref_label(shape.name) + " has " + detail::shape_string(shape) +
                                "; outputs must have one shape");
        if (has_internal_overlap(o))
            layout_fail(op, "output " + ref_label(o.name) +
                                " has internal overlap (a dimension of size > 1 with stride 0, as after expand); "
                                "an output needs one element per index and is never broadcast");
        for (int j = 0; j < k; ++j)
            if (memory_overlap_of(o, outs[j]) != memory_overlap::none)
                layout_fail(op, "output " + ref_label(o.name) + " overlaps output " + ref_label(outs[j].name) +
                                    " in memory; outputs must not share memory");
        refs[k] = o;
    }
    for (int k = 0; k < n_in; ++k) {
        strided_ref const& in = ins[k];
        refs[n_out + k] = detail::broadcast_to(op, in, shape);
        for (int j = 0; j < n_out; ++j) {
            if (!in_place_or_disjoint(outs[j], in))
                layout_fail(op,
                            "output " + ref_label(outs[j].name) + " shares memory with input " + ref_label(in.name) +
                                " but is not exactly that array; pass separate memory or the same array (in place)");
        }
    }

    int const n = n_out + n_in;
    elementwise_layout layout;
    layout.outputs = n_out;
    layout.operands = n;
    layout.numel = shape.numel();
    for (int k = 0; k < n; ++k) layout.data[k] = refs[k].data;
    if (layout.numel == 0) return layout;

    strided_ref const* ordered[max_operands];
    for (int k = 0; k < n; ++k) ordered[k] = &refs[k];
    iteration_order const order = joint_iteration_order(ordered, n);
    // Outermost to innermost; size-1 dimensions dropped; a dimension merged
    // into the one outside it where every operand steps evenly across both.
    for (std::int32_t p = 0; p < order.rank; ++p) {
        std::int32_t const d = order.dims[p];
        std::int64_t const size = shape.sizes[d];
        if (size == 1) continue;
        bool merge = layout.rank > 0;
        for (int k = 0; merge && k < n; ++k) {
            std::int64_t step = 0;  // an overflowing product never equals a valid stride: no merge
            merge =
                !__builtin_mul_overflow(size, refs[k].strides[d], &step) && layout.strides[k][layout.rank - 1] == step;
        }
        if (!merge) ++layout.rank;
        std::int32_t const r = layout.rank - 1;
        layout.sizes[r] = merge ? layout.sizes[r] * size : size;
        for (int k = 0; k < n; ++k) layout.strides[k][r] = refs[k].strides[d];
    }
    return layout;
}

}  // namespace switchyard
