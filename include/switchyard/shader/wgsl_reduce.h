// emit_wgsl_reduction: the WGSL compute shader of one pass of a reduction
// (switchyard/reduce.h on a shader device).
//
// Workgroup g (256 invocations) reduces block g % splits of output element
// g / splits: invocation l folds the map of elements first + l, first + l +
// 256, ... of that block with the combine, in that order, and the workgroup
// folds the 256 results as a fixed binary tree in workgroup memory. The
// order depends only on the shape (never on timing), so a result is bitwise
// the same run to run. With one block per output (splits = 1) the result is
// stored at the output's element; otherwise at index g of a partials buffer
// that the next pass reduces over its blocks.
//
// Uniform words (u32), in this order: the workgroup count, the reduced
// element count, splits, the block length, the combine's identity (its
// bits), the kept sizes, the reduced sizes, then per operand (the output
// first, then each input) its kept strides and its reduced strides, all in
// elements; then the words of the map and combine functions
// (emit_wgsl_function). Sizes and strides are uniforms, so a new shape of
// the same ranks reuses the pipeline.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "switchyard/shader/wgsl.h"

namespace switchyard::shader {

// What one reduction pass's shader text depends on.
struct wgsl_reduction {
    scalar out_type = scalar::f32;         // the element type of binding 0 (the output or partials)
    scalar in_type = scalar::f32;          // the element type of the inputs' bindings
    scalar acc_type = scalar::f32;         // values the map returns and the combine folds
    std::vector<std::int32_t> input_slot;  // binding of each input (1, 2, ...); inputs on one buffer share one
    std::int32_t kept_rank = 0;
    std::int32_t reduced_rank = 0;
    bool to_partials = false;    // store at index g of binding 0, not at the output's offset
    bool f16_functions = false;  // the map or combine computes in f16 (shader::uses_f16)
};

// The index of the first uniform word after the layout: where the map's and
// combine's words start.
inline std::uint32_t wgsl_reduction_layout_words(wgsl_reduction const& r) {
    auto const operands = static_cast<std::uint32_t>(1 + r.input_slot.size());
    auto const ranks = static_cast<std::uint32_t>(r.kept_rank + r.reduced_rank);
    return 5 + ranks + operands * ranks;
}

// Word indices of the layout, as wgsl_reduction_layout_words orders them.
inline std::uint32_t wgsl_kept_size_word(wgsl_reduction const&, std::int32_t d) { return 5 + std::uint32_t(d); }
inline std::uint32_t wgsl_reduced_size_word(wgsl_reduction const& r, std::int32_t d) {
    return 5 + std::uint32_t(r.kept_rank + d);
}
inline std::uint32_t wgsl_kept_stride_word(wgsl_reduction const& r, std::int32_t operand, std::int32_t d) {
    auto const ranks = std::uint32_t(r.kept_rank + r.reduced_rank);
    return 5 + ranks + std::uint32_t(operand) * ranks + std::uint32_t(d);
}
inline std::uint32_t wgsl_reduced_stride_word(wgsl_reduction const& r, std::int32_t operand, std::int32_t d) {
    return wgsl_kept_stride_word(r, operand, r.kept_rank + d);
}

namespace detail {

// `let <prefix><d> = ...` coordinates of flat index `index` over `rank`
// sizes, row-major, then per operand `let <offset><k> = sum coordinate * stride`.
template <typename SizeWord, typename StrideWord>
std::string wgsl_offsets(std::string const& index, std::string const& prefix, std::string const& offset,
                         std::int32_t rank, std::int32_t operands, SizeWord size_word, StrideWord stride_word,
                         std::string const& indent) {
    std::string s;
    if (rank > 0) {
        s += concat(indent, "var ", prefix, "rest = ", index, ";\n");
        for (std::int32_t d = rank; d-- > 1;) {
            std::string const size = detail::uniform_word(size_word(d));
            s += concat(indent, "let ", prefix, std::to_string(d), " = ", prefix, "rest % ", size, ";\n", indent,
                        prefix, "rest = ", prefix, "rest / ", size, ";\n");
        }
        s += concat(indent, "let ", prefix, "0 = ", prefix, "rest;\n");
    }
    for (std::int32_t k = 0; k < operands; ++k) {
        std::string sum;
        for (std::int32_t d = 0; d < rank; ++d)
            sum += concat(d ? " + " : "", prefix, std::to_string(d), " * ", detail::uniform_word(stride_word(k, d)));
        s += concat(indent, "let ", offset, std::to_string(k), " = ", rank > 0 ? sum : std::string("0u"), ";\n");
    }
    return s;
}

}  // namespace detail

// The shader of one pass. map is `fn sy_map(a0: ACC, ...) -> ACC` (one
// argument per input), combine `fn sy_combine(a0: ACC, a1: ACC) -> ACC`;
// helpers are the math helpers they call; uniform_words the total count.
inline std::string emit_wgsl_reduction(wgsl_reduction const& r, std::string const& map, std::string const& combine,
                                       std::vector<std::string> const& helpers, std::size_t uniform_words) {
    using namespace detail;
    std::string const acc = wgsl_type(r.acc_type);
    std::string const in = wgsl_type(r.in_type);
    auto const inputs = static_cast<std::int32_t>(r.input_slot.size());
    std::int32_t bindings = 1;
    for (std::int32_t slot : r.input_slot) bindings = slot + 1 > bindings ? slot + 1 : bindings;
    bool const f16 =
        r.f16_functions || r.out_type == scalar::f16 || r.in_type == scalar::f16 || r.acc_type == scalar::f16;

    std::string s = "// Generated by switchyard: one pass of a reduction.\n";
    if (f16) s += "enable f16;\n";
    s += concat("\nstruct Uniforms {\n    w: array<vec4<u32>, ", std::to_string((uniform_words + 3) / 4), ">,\n};\n\n");
    s += concat("@group(0) @binding(0) var<storage, read_write> b0: array<", wgsl_type(r.out_type), ">;\n");
    for (std::int32_t b = 1; b < bindings; ++b)
        s += concat("@group(0) @binding(", std::to_string(b), ") var<storage, read> b", std::to_string(b), ": array<",
                    in, ">;\n");
    s += concat("@group(0) @binding(", std::to_string(bindings), ") var<uniform> u: Uniforms;\n\n");
    for (auto const& h : helpers) s += std::string(helper_text(h)) + "\n";
    s += map + "\n" + combine + "\n";
    std::string const wg = std::to_string(wgsl_workgroup_size);
    std::string identity = detail::uniform_word(4);
    if (r.acc_type != scalar::u32) identity = concat("bitcast<", acc, ">(", identity, ")");
    s += concat("var<workgroup> sy_lanes: array<", acc, ", ", wg, ">;\n\n");
    s += concat("@compute @workgroup_size(", wg,
                ")\nfn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>,\n"
                "        @builtin(local_invocation_index) lane: u32) {\n"
                "    let g = wg.y * groups.x + wg.x;\n"
                "    if (g >= ",
                detail::uniform_word(0), ") {\n        return;\n    }\n");
    s += concat("    let m = g / ", detail::uniform_word(2), ";\n    let block_begin = (g % ", detail::uniform_word(2),
                ") * ", detail::uniform_word(3), ";\n    let block_end = min(block_begin + ", detail::uniform_word(3),
                ", ", detail::uniform_word(1), ");\n");
    s += wgsl_offsets(
        "m", "kc", "ko", r.kept_rank, 1 + inputs, [&](std::int32_t d) { return wgsl_kept_size_word(r, d); },
        [&](std::int32_t k, std::int32_t d) { return wgsl_kept_stride_word(r, k, d); }, "    ");
    s += concat("    var acc: ", acc, " = ", identity, ";\n");
    s += concat("    for (var r = block_begin + lane; r < block_end; r = r + ", wg, "u) {\n");
    s += wgsl_offsets(
        "r", "rc", "ro", r.reduced_rank, 1 + inputs, [&](std::int32_t d) { return wgsl_reduced_size_word(r, d); },
        [&](std::int32_t k, std::int32_t d) { return wgsl_reduced_stride_word(r, k, d); }, "        ");
    s += "        acc = sy_combine(acc, sy_map(";
    for (std::int32_t k = 0; k < inputs; ++k) {
        std::string const at = concat("ko", std::to_string(k + 1), " + ro", std::to_string(k + 1));
        std::string const load = concat("b", std::to_string(r.input_slot[static_cast<std::size_t>(k)]), "[", at, "]");
        s += concat(k ? ", " : "", r.in_type == r.acc_type ? load : concat(acc, "(", load, ")"));
    }
    s += "));\n    }\n";
    s += concat("    sy_lanes[lane] = acc;\n    workgroupBarrier();\n    for (var span = ",
                std::to_string(wgsl_workgroup_size / 2),
                "u; span > 0u; span = span >> 1u) {\n        if (lane < span) {\n"
                "            sy_lanes[lane] = sy_combine(sy_lanes[lane], sy_lanes[lane + span]);\n"
                "        }\n        workgroupBarrier();\n    }\n");
    std::string const result =
        r.out_type == r.acc_type ? std::string("sy_lanes[0]") : concat(wgsl_type(r.out_type), "(sy_lanes[0])");
    s += concat("    if (lane == 0u) {\n        b0[", r.to_partials ? "g" : "ko0", "] = ", result, ";\n    }\n}\n");
    return s;
}

}  // namespace switchyard::shader
