// emit_reduction<Syntax>: the compute kernel of one pass of a reduction
// (switchyard/reduce.h on a shader device), written once for every shader
// language; Syntax spells it (shader/wgsl_reduce.h, shader/msl_reduce.h).
//
// Workgroup g (reduction_group_size threads) reduces block g % splits of
// output element g / splits: thread l folds the map of elements first + l,
// first + l + 256, ... of that block with the combine, in that order, and
// the workgroup folds the 256 results as a fixed binary tree in workgroup
// memory. The order depends only on the shape (never on timing), so a
// result is bitwise the same run to run. With one block per output
// (splits = 1) the result is stored at the output's element; otherwise at
// index g of a partials buffer that the next pass reduces over its blocks.
// argmin and argmax fold (value, index) pairs the same way, a second
// workgroup array holding the indices (reduction_shape::indexed).
// Uniform words: shader/reduction_shape.h.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "switchyard/shader/reduction_shape.h"
#include "switchyard/shader/text.h"

namespace switchyard::shader::detail {

// Declarations of the coordinates of flat index `index` over `rank` sizes
// (row-major: <prefix>0 .. <prefix>rank-1), then per operand k
// <offset>k = sum of coordinate * stride.
template <typename Syntax, typename SizeWord, typename StrideWord>
std::string reduction_offsets(std::string const& index, std::string const& prefix, std::string const& offset,
                              std::int32_t rank, std::int32_t operands, SizeWord size_word, StrideWord stride_word,
                              std::string const& indent) {
    std::string s;
    if (rank > 0) {
        s += concat(indent, Syntax::variable(concat(prefix, "rest"), index), "\n");
        for (std::int32_t d = rank; d-- > 1;) {
            std::string const size = Syntax::word(size_word(d));
            s += concat(indent, Syntax::constant(concat(prefix, std::to_string(d)), concat(prefix, "rest % ", size)),
                        "\n", indent, prefix, "rest = ", prefix, "rest / ", size, ";\n");
        }
        s += concat(indent, Syntax::constant(concat(prefix, "0"), concat(prefix, "rest")), "\n");
    }
    for (std::int32_t k = 0; k < operands; ++k) {
        std::string sum;
        for (std::int32_t d = 0; d < rank; ++d)
            sum += concat(d ? " + " : "", prefix, std::to_string(d), " * ", Syntax::word(stride_word(k, d)));
        s += concat(indent, Syntax::constant(concat(offset, std::to_string(k)), rank > 0 ? sum : std::string("0u")),
                    "\n");
    }
    return s;
}

// Whether float value v is a NaN, by its bits: WGSL lets a compiler assume
// floats are never NaN and fold `v != v` to false (lavapipe does), but not
// an integer test. Integers are never NaN.
template <typename Syntax>
std::string is_nan_test(scalar type, std::string const& v) {
    if (type != scalar::f32) return "false";
    return concat("((", Syntax::bitcast(Syntax::type(scalar::u32), v), " & 2147483647u) > 2139095040u)");
}

// Whether the pair (bv, bi) beats (av, ai) for argmax (largest) or argmin:
// a NaN over a number, else the larger (smaller) value, else on a tie (two
// NaNs, or equal values) the smaller index. That is a total order on pairs
// with distinct indices (core/combine.h's pick_indexed), so the result does
// not depend on the order elements are folded in. Every term is in
// parentheses: WGSL does not mix && and || without them.
template <typename Syntax>
std::string beats(bool largest, scalar type, std::string const& av, std::string const& ai, std::string const& bv,
                  std::string const& bi) {
    std::string const a_nan = is_nan_test<Syntax>(type, av), b_nan = is_nan_test<Syntax>(type, bv);
    return concat("(", b_nan, " && !", a_nan, ") || (!", a_nan, " && !", b_nan, " && (", bv, largest ? " > " : " < ",
                  av, ")) || ((", a_nan, " == ", b_nan, ") && (", a_nan, " || (", av, " == ", bv, ")) && (", bi, " < ",
                  ai, "))");
}

// The kernel of one pass. map is the function sy_map(a0: ACC, ...) -> ACC
// (one argument per input), combine sy_combine(a0: ACC, a1: ACC) -> ACC (empty
// for argmin and argmax, whose pairs compare with beats), in the language's
// own form; helpers the math helpers they call;
// uniform_words the total count. Syntax provides:
//   type(scalar), word(i) (uniform word i as an unsigned integer),
//   constant(name, expr) / variable(name, expr) (unsigned declarations),
//   typed_variable(type, name, expr), call(function, arguments),
//   bitcast(type, expr), barrier(), loop(name, first, end, step),
//   head(shape, helpers and functions, uniform_words) (everything before
//   the kernel body: bindings, functions, the workgroup array sy_lanes (and
//   sy_index of u32 when r.indexed) and the kernel's signature, which names
//   the group `g` and the thread `lane`).
template <typename Syntax>
std::string emit_reduction(reduction_shape const& r, std::string const& map, std::string const& combine,
                           std::vector<std::string> const& helpers, std::size_t uniform_words) {
    using S = Syntax;
    std::string const acc = S::type(r.acc_type);
    auto const inputs = static_cast<std::int32_t>(r.input_slot.size());
    std::string functions;
    for (auto const& h : helpers) functions += S::helper(h) + "\n";
    functions += map + "\n" + combine + "\n";
    std::string s = S::head(r, functions, uniform_words);
    s += concat("    if (g >= ", S::word(0), ") {\n        return;\n    }\n");
    s += concat("    ", S::constant("m", concat("g / ", S::word(2))), "\n");
    s += concat("    ", S::constant("block_begin", concat("(g % ", S::word(2), ") * ", S::word(3))), "\n");
    s +=
        concat("    ", S::constant("block_end", concat("min(block_begin + ", S::word(3), ", ", S::word(1), ")")), "\n");
    // argmin's and argmax's first pass has the index operand after the inputs.
    std::int32_t const operands = 1 + inputs + (r.index_operand ? 1 : 0);
    s += reduction_offsets<S>(
        "m", "kc", "ko", r.kept_rank, operands, [&](std::int32_t d) { return kept_size_word(r, d); },
        [&](std::int32_t k, std::int32_t d) { return kept_stride_word(r, k, d); }, "    ");
    std::string const identity = r.acc_type == scalar::u32 ? S::word(4) : S::bitcast(acc, S::word(4));
    std::string const index = S::type(scalar::u32);
    s += concat("    ", S::typed_variable(acc, "acc", identity), "\n");
    // No element has the largest index: the identity loses every tie.
    if (r.indexed) s += concat("    ", S::typed_variable(index, "acc_index", "4294967295u"), "\n");
    s += concat("    ", S::loop("r", "block_begin + lane", "block_end", std::to_string(reduction_group_size)), " {\n");
    s += reduction_offsets<S>(
        "r", "rc", "ro", r.reduced_rank, operands, [&](std::int32_t d) { return reduced_size_word(r, d); },
        [&](std::int32_t k, std::int32_t d) { return reduced_stride_word(r, k, d); }, "        ");
    std::string arguments;
    for (std::int32_t k = 0; k < inputs; ++k) {
        std::string const at = concat("ko", std::to_string(k + 1), " + ro", std::to_string(k + 1));
        std::string const load = concat("b", std::to_string(r.input_slot[static_cast<std::size_t>(k)]), "[", at, "]");
        arguments += concat(k ? ", " : "", r.in_type == r.acc_type ? load : concat(acc, "(", load, ")"));
    }
    if (!r.indexed) {
        s += concat("        acc = ", S::call("sy_combine", concat("acc, ", S::call("sy_map", arguments))),
                    ";\n    }\n");
    } else {
        std::string value, at;
        if (r.pairs_in) {  // a previous pass's (value bits, index) pairs
            value = S::bitcast(acc, "b1[2u * (ko1 + ro1)]");
            at = "b1[2u * (ko1 + ro1) + 1u]";
        } else {
            value = S::call("sy_map", arguments);
            std::string const k = std::to_string(inputs + 1);
            at = concat("ko", k, " + ro", k);
        }
        s += concat("        ", S::typed_variable(acc, "v", value), "\n        ", S::typed_variable(index, "vi", at),
                    "\n");
        s += concat("        if (", beats<S>(r.largest, r.acc_type, "acc", "acc_index", "v", "vi"),
                    ") {\n            acc = v;\n            acc_index = vi;\n        }\n    }\n");
    }
    s += concat("    sy_lanes[lane] = acc;\n");
    if (r.indexed) s += "    sy_index[lane] = acc_index;\n";
    s += concat("    ", S::barrier(), ";\n");
    s += concat("    ", S::loop_halving("span", std::to_string(reduction_group_size / 2)), " {\n");
    if (!r.indexed) {
        s += concat("        if (lane < span) {\n            sy_lanes[lane] = ",
                    S::call("sy_combine", "sy_lanes[lane], sy_lanes[lane + span]"), ";\n        }\n");
    } else {
        s += concat("        if (lane < span) {\n            ",
                    S::typed_variable(acc, "next_value", "sy_lanes[lane + span]"), "\n            ",
                    S::typed_variable(index, "next_index", "sy_index[lane + span]"), "\n            if (",
                    beats<S>(r.largest, r.acc_type, "sy_lanes[lane]", "sy_index[lane]", "next_value", "next_index"),
                    ") {\n                sy_lanes[lane] = next_value;\n                sy_index[lane] = next_index;\n"
                    "            }\n        }\n");
    }
    s += concat("        ", S::barrier(), ";\n    }\n");
    s += "    if (lane == 0u) {\n";
    if (!r.indexed) {
        std::string const result =
            r.out_type == r.acc_type ? std::string("sy_lanes[0]") : concat(S::type(r.out_type), "(sy_lanes[0])");
        s += concat("        b0[", r.to_partials ? "g" : "ko0", "] = ", result, ";\n");
    } else if (r.to_partials) {
        s += concat("        b0[2u * g] = ", S::bitcast(index, "sy_lanes[0]"),
                    ";\n        b0[2u * g + 1u] = sy_index[0];\n");
    } else {  // the int64 index, low word first (WebGPU and Metal are little-endian)
        s += "        b0[2u * ko0] = sy_index[0];\n        b0[2u * ko0 + 1u] = 0u;\n";
    }
    s += "    }\n}\n";
    return s;
}

}  // namespace switchyard::shader::detail
