// reduction_shape: what one pass of a reduction's shader depends on, and the
// order of its uniform words, shared by every shader language's reduction
// emitter (shader/wgsl_reduce.h, shader/msl_reduce.h) and the runner
// (shader/reduce.h).
//
// Uniform words (u32), in this order: the workgroup count, the reduced
// element count, splits, the block length, the combine's identity (its
// bits; argmin's and argmax's value), the kept sizes, the reduced sizes,
// then per operand (the output first, then each input, then argmin's and
// argmax's index operand) its kept strides and its reduced strides, all in
// elements; then the words of the map and combine functions. Sizes and
// strides are uniforms, so a new shape of the same ranks reuses the
// pipeline.
#pragma once

#include <cstdint>
#include <vector>

#include "switchyard/shader/trace.h"

namespace switchyard::shader {

// Threads of a workgroup (threadgroup) that fold one block together, and
// the reduced elements per block: 32 per thread.
inline constexpr std::uint32_t reduction_group_size = 256;
inline constexpr std::int64_t reduction_block = 32 * std::int64_t{reduction_group_size};

struct reduction_shape {
    scalar out_type = scalar::f32;         // the element type of binding 0 (the output or partials)
    scalar in_type = scalar::f32;          // the element type of the inputs' bindings
    scalar acc_type = scalar::f32;         // values the map returns and the combine folds
    std::vector<std::int32_t> input_slot;  // binding of each input (1, 2, ...); inputs on one buffer share one
    std::int32_t kept_rank = 0;
    std::int32_t reduced_rank = 0;
    bool to_partials = false;    // store at index g of binding 0, not at the output's offset
    bool f16_functions = false;  // the map or combine computes in f16 (shader::uses_f16)
    // argmin and argmax fold (value, index) pairs. Their output and partials
    // are u32 words: an index as an int64's two words (low first), a partial
    // as its value's bits and its index. The first pass has one more operand
    // after the inputs, with strides and no binding, whose offset is each
    // element's index (view/reduction_layout.h); later passes read pairs.
    bool indexed = false;
    bool largest = true;         // indexed: argmax, else argmin
    bool index_operand = false;  // the first pass of an indexed reduction
    bool pairs_in = false;       // later passes: binding 1 holds (value bits, index) pairs

    // The storage bindings: the output and the inputs' distinct slots.
    std::int32_t bindings() const {
        std::int32_t n = 1;
        for (std::int32_t slot : input_slot) n = slot + 1 > n ? slot + 1 : n;
        return n;
    }
};

// The index of the first uniform word after the layout: where the map's and
// combine's words start.
inline std::uint32_t reduction_layout_words(reduction_shape const& r) {
    auto const operands = static_cast<std::uint32_t>(1 + r.input_slot.size() + (r.index_operand ? 1 : 0));
    auto const ranks = static_cast<std::uint32_t>(r.kept_rank + r.reduced_rank);
    return 5 + ranks + operands * ranks;
}

// Word indices of the layout, in reduction_layout_words' order.
inline std::uint32_t kept_size_word(reduction_shape const&, std::int32_t d) { return 5 + std::uint32_t(d); }
inline std::uint32_t reduced_size_word(reduction_shape const& r, std::int32_t d) {
    return 5 + std::uint32_t(r.kept_rank + d);
}
inline std::uint32_t kept_stride_word(reduction_shape const& r, std::int32_t operand, std::int32_t d) {
    auto const ranks = std::uint32_t(r.kept_rank + r.reduced_rank);
    return 5 + ranks + std::uint32_t(operand) * ranks + std::uint32_t(d);
}
inline std::uint32_t reduced_stride_word(reduction_shape const& r, std::int32_t operand, std::int32_t d) {
    return kept_stride_word(r, operand, r.kept_rank + d);
}

}  // namespace switchyard::shader
