// row_layout: how transform_rows (switchyard/transform_rows.h) walks its
// operands, decided once on the host: rows along the output's last
// dimension, each operand's stride along it, and an elementwise layout of
// the rows' starts over the other dimensions.
//
//     out [4096, 1024] strides (1024, 1)
//     x   [4096, 1024] strides (1024, 1)
//     b         [1024] strides      (1)      broadcast over rows
//     -> 4096 rows of 1024; inner strides out 1, x 1, b 1;
//        rows: sizes [4096], strides out (1024), x (1024), b (0)
//
// Inputs broadcast to the output's shape and are checked as transform's are
// (view/elementwise_layout.h): the same errors, and the output may be an
// input exactly (in place: a row's statistics are final before any of it is
// written, and each element is read before it is written).
// A rank-0 output is one row of one element.
#pragma once

#include <cstdint>

#include "switchyard/view/elementwise_layout.h"
#include "switchyard/view/strided_ref.h"

namespace switchyard {

struct row_layout {
    std::int64_t rows = 0;
    std::int64_t row_size = 1;
    std::int64_t inner[max_operands] = {};  // per operand, the output first: stride along a row
    elementwise_layout starts;              // the rows' first elements, over the other dimensions

    std::int64_t row_offset(int operand, std::int64_t row) const noexcept { return starts.offset(operand, row); }
};

// The layout of rows of `out` and of inputs `ins[0..n_in)` broadcast to it.
inline row_layout make_row_layout(char const* op, strided_ref const& out, strided_ref const* ins, int n_in) {
    // Every check on the whole operands first.
    elementwise_layout const whole = make_elementwise_layout(op, &out, 1, ins, n_in);
    row_layout layout;
    if (out.rank == 0) {
        layout.rows = 1;
        layout.starts = whole;
        return layout;
    }
    std::int32_t const last = out.rank - 1;
    layout.row_size = out.sizes[last];
    layout.rows = layout.row_size > 0 ? whole.numel / layout.row_size : 0;
    strided_ref firsts[max_operands];
    firsts[0] = out;
    for (int k = 0; k < n_in; ++k) firsts[1 + k] = detail::broadcast_to(op, ins[k], out);
    for (int k = 0; k < 1 + n_in; ++k) {
        layout.inner[k] = firsts[k].strides[last];
        // The row's first element: the operand without its last dimension.
        firsts[k].rank = last;
    }
    layout.starts = make_elementwise_layout(op, firsts, 1, firsts + 1, n_in);
    return layout;
}

}  // namespace switchyard
