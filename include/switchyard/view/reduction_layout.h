// reduction_layout: how a reduction (switchyard/reduce.h) walks its output
// and inputs, decided once on the host from their sizes and strides.
//
//     x   [4096, 1024] strides (1024, 1), dims{-1}
//     out [4096]       strides (1)
//     -> kept [4096]: out (1), x (1024); reduced [1024]: out (0), x (1); reduced_inner
//
// The inputs broadcast together by PyTorch's rules; `dims` names dimensions
// of that shape (negative counts from the end) or all of them (all_dims).
// The output has the shape with those dimensions removed, or kept with size
// 1 (keepdim). Dimensions are put in the order the first input lays them out
// in memory (iteration_order.h), split into kept and reduced ones, and merged
// within each group where every operand steps evenly. Output element m
// combines f over reduced index r in [0, reduced_numel) at offsets
// kept_offset(k, m) + reduced_offset(k, r). `reduced_inner` says the first
// input's innermost dimension is reduced (a row reduction: one output reads
// a contiguous run) rather than kept (a column reduction: neighbouring
// outputs read neighbouring elements).
//
// An indexed reduction (argmin, argmax) gets one more operand after the
// inputs, with no data: its offset at reduced index r is the row-major index
// of that element among the reduced dimensions of the broadcast shape (what
// torch.argmax returns), whatever order memory puts the dimensions in.
//
// Checks, each naming the op and the argument: inputs that do not broadcast,
// a dimension out of range or repeated, an empty dims list, an output of
// another shape than the reduced one, an output with internal overlap or
// sharing memory with an input, and more operands than max_operands.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <stdexcept>
#include <string>

#include "switchyard/view/elementwise_layout.h"
#include "switchyard/view/iteration_order.h"
#include "switchyard/view/overlap.h"
#include "switchyard/view/strided_ref.h"

namespace switchyard {

// The dimensions a reduction reduces: dims{-1}, dims{0, 2}, or all_dims.
struct dims {
    bool all = false;
    std::int32_t count = 0;  // may exceed max_rank: refused by the layout
    std::int64_t list[max_rank] = {};

    constexpr dims(std::initializer_list<std::int64_t> d) : dims(d.begin(), d.size()) {}
    constexpr dims(std::int64_t const* d, std::size_t n) : count(static_cast<std::int32_t>(n)) {
        for (std::size_t k = 0; k < n && k < max_rank; ++k) list[k] = d[k];
    }
    static constexpr dims every() {
        dims d{};
        d.all = true;
        return d;
    }
};

inline constexpr dims all_dims = dims::every();

struct reduction_layout {
    std::int32_t operands = 0;  // the output first, then the inputs in call order, then any index operand
    std::int64_t kept_numel = 0;
    std::int64_t reduced_numel = 0;
    std::int32_t kept_rank = 0;  // after merging; outermost first
    std::int32_t reduced_rank = 0;
    std::int64_t kept_sizes[max_rank] = {};
    std::int64_t reduced_sizes[max_rank] = {};
    std::int64_t kept_strides[max_operands][max_rank] = {};  // in elements, per operand
    std::int64_t reduced_strides[max_operands][max_rank] = {};
    void* data[max_operands] = {};
    bool reduced_inner = false;

    // Offsets of operand k at kept flat index m and at reduced flat index r
    // (row-major over each group's sizes), for m in [0, kept_numel) and r in
    // [0, reduced_numel): an index past the group is not wrapped.
    constexpr std::int64_t kept_offset(int k, std::int64_t m) const noexcept {
        return offset_in(kept_sizes, kept_strides[k], kept_rank, m);
    }
    constexpr std::int64_t reduced_offset(int k, std::int64_t r) const noexcept {
        return offset_in(reduced_sizes, reduced_strides[k], reduced_rank, r);
    }
    // The innermost size of a group (1 when the group has no dimension) and
    // operand k's stride along it (0 then).
    constexpr std::int64_t kept_row() const noexcept { return kept_rank > 0 ? kept_sizes[kept_rank - 1] : 1; }
    constexpr std::int64_t reduced_row() const noexcept {
        return reduced_rank > 0 ? reduced_sizes[reduced_rank - 1] : 1;
    }
    constexpr std::int64_t kept_inner_stride(int k) const noexcept {
        return kept_rank > 0 ? kept_strides[k][kept_rank - 1] : 0;
    }
    constexpr std::int64_t reduced_inner_stride(int k) const noexcept {
        return reduced_rank > 0 ? reduced_strides[k][reduced_rank - 1] : 0;
    }

private:
    static constexpr std::int64_t offset_in(std::int64_t const* sizes, std::int64_t const* strides, std::int32_t rank,
                                            std::int64_t i) noexcept {
        // The outermost dimension needs no remainder (i < its size): a rank-1
        // group costs no division.
        std::int64_t o = 0;
        for (std::int32_t d = rank; d-- > 1;) {
            o += (i % sizes[d]) * strides[d];
            i /= sizes[d];
        }
        return rank > 0 ? o + i * strides[0] : o;
    }
};

namespace detail {

// "[1]" or "all" for error messages.
inline std::string dims_string(dims const& over) {
    if (over.all) return "all";
    return shape_string(over.list, static_cast<std::size_t>(over.count < max_rank ? over.count : max_rank));
}

// The shape the inputs broadcast to, as a strided_ref without data.
inline strided_ref broadcast_inputs_shape(char const* op, strided_ref const* ins, int n_in) {
    strided_ref shape;
    shape.name = "inputs";
    for (int k = 0; k < n_in; ++k)
        if (ins[k].rank > shape.rank) shape.rank = ins[k].rank;
    for (std::int32_t d = 0; d < shape.rank; ++d) shape.sizes[d] = 1;
    int decided_by[max_rank] = {};
    for (int k = 0; k < n_in; ++k) {
        std::int32_t const lead = shape.rank - ins[k].rank;
        for (std::int32_t d = 0; d < ins[k].rank; ++d) {
            std::int64_t const size = ins[k].sizes[d];
            std::int64_t& into = shape.sizes[lead + d];
            if (size == into || size == 1) continue;
            if (into != 1)
                layout_fail(op, "input " + ref_label(ins[k].name) + " has shape " + shape_string(ins[k]) +
                                    ", which does not broadcast with input " +
                                    ref_label(ins[decided_by[lead + d]].name) + " of shape " +
                                    shape_string(ins[decided_by[lead + d]]) + " (size " + std::to_string(size) +
                                    " against " + std::to_string(into) + " in dimension " + std::to_string(lead + d) +
                                    " of the broadcast inputs)");
            into = size;
            decided_by[lead + d] = k;
        }
    }
    return shape;
}

// Marks in `reduced` the dimensions of `shape` that `over` names and
// returns how many; refuses a dimension out of range or repeated, and an
// empty list.
inline std::int32_t reduced_dims(char const* op, strided_ref const& shape, dims const& over,
                                 bool (&reduced)[max_rank]) {
    std::int32_t const rank = shape.rank;
    std::int32_t reduced_count = 0;
    if (over.all) {
        for (std::int32_t d = 0; d < rank; ++d) reduced[d] = true;
        reduced_count = rank;
    } else {
        if (over.count == 0)
            layout_fail(op, "dims is empty; name the dimensions to reduce, or pass all_dims to reduce every one");
        if (over.count > max_rank)
            layout_fail(op, "dims names " + std::to_string(over.count) + " dimensions; at most " +
                                std::to_string(max_rank) + " can be reduced");
        // A rank-0 input is reduced over dimension 0 or -1, as in PyTorch.
        std::int64_t const span = rank > 0 ? rank : 1;
        bool seen[max_rank] = {};
        for (std::int32_t k = 0; k < over.count; ++k) {
            std::int64_t const d = over.list[k];
            if (d < -span || d >= span)
                layout_fail(op, "dimension " + std::to_string(d) + " in dims " + detail::dims_string(over) +
                                    " is out of range for the input shape " + shape_string(shape) + " (allowed " +
                                    std::to_string(-span) + " to " + std::to_string(span - 1) + ")");
            std::int64_t const nd = d < 0 ? d + span : d;
            if (seen[nd])
                layout_fail(op, "dimension " + std::to_string(nd) + " appears more than once in dims " +
                                    detail::dims_string(over));
            seen[nd] = true;
            if (rank > 0) {
                reduced[nd] = true;
                ++reduced_count;
            }
        }
    }

    return reduced_count;
}

// The shape of reducing `shape` over `over`, without data: the reduced
// dimensions removed, or kept at size 1 (keepdim); row-major strides.
inline strided_ref reduced_shape(char const* op, strided_ref const& shape, dims const& over, bool keepdim) {
    bool reduced[max_rank] = {};
    (void)reduced_dims(op, shape, over, reduced);
    strided_ref out = shape;
    out.data = nullptr;
    out.rank = 0;
    for (std::int32_t d = 0; d < shape.rank; ++d)
        if (!reduced[d] || keepdim) out.sizes[out.rank++] = reduced[d] ? 1 : shape.sizes[d];
    std::int64_t step = 1;
    for (std::int32_t d = out.rank; d-- > 0;) {
        out.strides[d] = step;
        step *= out.sizes[d];
    }
    return out;
}

}  // namespace detail

// The layout of reducing inputs `ins[0..n_in)` over `over` into `out`; `op`
// names the operation in errors. `indexed` adds the index operand.
inline reduction_layout make_reduction_layout(char const* op, strided_ref const& out, strided_ref const* ins, int n_in,
                                              dims const& over, bool indexed = false) {
    using detail::layout_fail;
    using detail::ref_label;
    using detail::shape_string;
    if (n_in < 1) layout_fail(op, "a reduction needs at least one input");
    if (1 + n_in + (indexed ? 1 : 0) > max_operands)
        layout_fail(op, "1 output and " + std::to_string(n_in) + " inputs exceed the " +
                            std::to_string(max_operands - (indexed ? 1 : 0)) + " operands one " +
                            (indexed ? "indexed " : "") + "reduction takes");
    strided_ref const shape = detail::broadcast_inputs_shape(op, ins, n_in);
    std::int32_t const rank = shape.rank;

    bool reduced[max_rank] = {};
    std::int32_t const reduced_count = detail::reduced_dims(op, shape, over, reduced);

    // The output: the shape without the reduced dimensions, or with them at
    // size 1 (keepdim). Its strides are spread over the input's rank, 0
    // along reduced dimensions.
    strided_ref full_out = out;
    full_out.rank = rank;
    bool const keepdim = out.rank == rank && reduced_count > 0;
    bool shape_ok = out.rank == rank - reduced_count || keepdim || (over.all && out.rank == 0);
    if (over.all && out.rank == 0) {
        for (std::int32_t d = 0; d < rank; ++d) full_out.sizes[d] = 1, full_out.strides[d] = 0;
    } else if (shape_ok) {
        std::int32_t j = 0;
        for (std::int32_t d = 0; d < rank; ++d) {
            if (reduced[d]) {
                if (keepdim) shape_ok = shape_ok && out.sizes[j++] == 1;
                full_out.sizes[d] = 1;
                full_out.strides[d] = 0;
            } else {
                shape_ok = shape_ok && out.sizes[j] == shape.sizes[d];
                full_out.sizes[d] = shape.sizes[d];
                full_out.strides[d] = out.strides[j++];
            }
        }
    }
    if (!shape_ok) {
        std::int64_t want[max_rank] = {}, kept[max_rank] = {};
        std::int32_t n = 0;
        for (std::int32_t d = 0; d < rank; ++d) {
            kept[d] = reduced[d] ? 1 : shape.sizes[d];
            if (!reduced[d]) want[n++] = shape.sizes[d];
        }
        layout_fail(op, "output " + ref_label(out.name) + " has shape " + shape_string(out) + " but reducing dims " +
                            detail::dims_string(over) + " of the input shape " + shape_string(shape) + " gives " +
                            shape_string(want, static_cast<std::size_t>(n)) + " (or " +
                            shape_string(kept, static_cast<std::size_t>(rank)) + " with keepdim)");
    }
    if (has_internal_overlap(out))
        layout_fail(op, "output " + ref_label(out.name) +
                            " has internal overlap (a dimension of size > 1 with stride 0, as after expand); "
                            "an output needs one element per index");
    for (int k = 0; k < n_in; ++k)
        if (memory_overlap_of(out, ins[k]) != memory_overlap::none)
            layout_fail(op, "output " + ref_label(out.name) + " shares memory with input " + ref_label(ins[k].name) +
                                "; a reduction reads its inputs while it writes, so pass separate memory");

    int const n = 1 + n_in + (indexed ? 1 : 0);
    strided_ref refs[max_operands];
    refs[0] = full_out;
    for (int k = 0; k < n_in; ++k) refs[1 + k] = detail::broadcast_to(op, ins[k], shape);
    if (indexed) {
        strided_ref& index = refs[1 + n_in];
        index = shape;
        index.data = nullptr;
        std::int64_t step = 1;
        for (std::int32_t d = rank; d-- > 0;) {
            index.strides[d] = reduced[d] ? step : 0;
            if (reduced[d]) step *= shape.sizes[d];
        }
    }

    reduction_layout layout;
    layout.operands = n;
    for (int k = 0; k < n; ++k) layout.data[k] = refs[k].data;
    layout.kept_numel = 1;
    layout.reduced_numel = 1;
    for (std::int32_t d = 0; d < rank; ++d) (reduced[d] ? layout.reduced_numel : layout.kept_numel) *= shape.sizes[d];

    // Order by the inputs' memory (the first input leads; the output, read
    // once per kept element, follows).
    strided_ref const* ordered[max_operands];
    for (int k = 0; k < n_in; ++k) ordered[k] = &refs[1 + k];
    ordered[n_in] = &refs[0];
    iteration_order const order = joint_iteration_order(ordered, 1 + n_in);
    for (std::int32_t p = 0; p < order.rank; ++p) {
        std::int32_t const d = order.dims[p];
        std::int64_t const size = shape.sizes[d];
        if (size == 1) continue;
        bool const is_reduced = reduced[d];
        layout.reduced_inner = is_reduced;
        std::int32_t& group_rank = is_reduced ? layout.reduced_rank : layout.kept_rank;
        std::int64_t* sizes = is_reduced ? layout.reduced_sizes : layout.kept_sizes;
        auto strides = is_reduced ? layout.reduced_strides : layout.kept_strides;
        bool merge = group_rank > 0;
        for (int k = 0; merge && k < n; ++k) {
            std::int64_t step = 0;  // an overflowing product never equals a valid stride: no merge
            merge = !__builtin_mul_overflow(size, refs[k].strides[d], &step) && strides[k][group_rank - 1] == step;
        }
        if (!merge) ++group_rank;
        std::int32_t const r = group_rank - 1;
        sizes[r] = merge ? sizes[r] * size : size;
        for (int k = 0; k < n; ++k) strides[k][r] = refs[k].strides[d];
    }
    return layout;
}

}  // namespace switchyard
