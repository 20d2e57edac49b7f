// emit_msl(trace): the Metal Shading Language kernel of a traced kernel, with
// its uniform words and buffers in the kernel's order; the MSL sibling of
// shader/wgsl.h, from the same trace and in the same statement order.
//
//     kernel void sy_kernel(device float* b0 [[buffer(0)]], device const float* b1 [[buffer(1)]],
//                           constant uint4* u [[buffer(2)]], uint i [[thread_position_in_grid]])
//
// Buffers 0..k-1 are the storage buffers in the order the kernel first
// touched them, buffer k the uniform words (word 0 the element count, as in
// WGSL), one thread per index (dispatched as a 1-D grid of at least `count`
// threads; the kernel returns past the count). With 4 lanes every buffer is
// an array of float4 (half4, int4), uniforms are splatted and math runs per
// component, as in WGSL's vec4 form.
//
// Math functions are WGSL's helpers (shader/wgsl.h), rendered into MSL by
// msl_from_wgsl, a fixed token translation (fn/let/var, bitcast -> as_type,
// f32 -> float, round -> rint, float literals with an f suffix): the
// algorithms exist once, and both languages compute them in the same order.
// They rely on IEEE float arithmetic without reassociation, so the pipeline
// must be compiled with fast math off (MTLMathModeSafe; Metal's default is
// fast math). f16 computes math in float, as on WebGPU. Metal binds at most
// 31 buffers per stage: a kernel needing more is refused here.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "switchyard/shader/trace.h"
#include "switchyard/shader/wgsl.h"

namespace switchyard::shader {

// The buffers one Metal compute stage binds.
inline constexpr std::size_t msl_max_buffers = 31;

namespace detail {

inline char const* msl_type(scalar s) {
    switch (s) {
        case scalar::f32: return "float";
        case scalar::f16: return "half";
        case scalar::bf16: return "bfloat";  // MSL 3.1
        case scalar::i32: return "int";
        case scalar::u32: return "uint";
        case scalar::boolean: return "bool";
        default: return "?";
    }
}

inline bool is_identifier_char(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

// A WGSL type as MSL: f32 -> float, vec3<f32> -> float3.
inline std::string msl_from_wgsl_type(std::string const& wgsl) {
    for (scalar s : {scalar::f32, scalar::f16, scalar::i32, scalar::u32, scalar::boolean}) {
        if (wgsl == wgsl_type(s)) return msl_type(s);
        for (char n : {'2', '3', '4'})
            if (wgsl == concat("vec", std::string(1, n), "<", wgsl_type(s), ">"))
                return msl_type(s) + std::string(1, n);
    }
    throw shader_error("metal: the MSL translation meets WGSL type '" + wgsl + "', which it does not know");
}

// One line of a WGSL helper's body as MSL: identifiers renamed, float
// literals suffixed with f, `let`/`var` declarations as `const auto`/`auto`.
inline std::string msl_from_wgsl_line(std::string const& line) {
    std::string out;
    std::size_t k = 0;
    while (k < line.size()) {
        char const ch = line[k];
        if (ch == '/' && k + 1 < line.size() && line[k + 1] == '/') {  // a comment: kept as written
            out += line.substr(k);
            break;
        }
        bool const starts_token = k == 0 || !(is_identifier_char(line[k - 1]) || line[k - 1] == '.');
        if (ch >= '0' && ch <= '9' && starts_token) {  // a number
            std::size_t end = k;
            bool const hex = line.compare(k, 2, "0x") == 0;
            bool is_float = false;
            while (end < line.size()) {
                char const c = line[end];
                if (!hex && (c == '.' || c == 'e')) is_float = true;
                if (!hex && c == 'e' && end + 1 < line.size() && (line[end + 1] == '-' || line[end + 1] == '+')) {
                    end += 2;
                    continue;
                }
                if (!is_identifier_char(c) && c != '.') break;
                ++end;
            }
            out += line.substr(k, end - k);
            if (is_float) out += 'f';
            k = end;
            continue;
        }
        if (is_identifier_char(ch) && starts_token) {  // an identifier, with a vecN<T> type as one token
            std::size_t end = k;
            while (end < line.size() && is_identifier_char(line[end])) ++end;
            std::string word = line.substr(k, end - k);
            if (word.size() == 4 && word.compare(0, 3, "vec") == 0 && end < line.size() && line[end] == '<') {
                std::size_t const close = line.find('>', end);
                out += msl_from_wgsl_type(line.substr(k, close + 1 - k));
                k = close + 1;
                continue;
            }
            if (word == "let")
                word = "const auto";
            else if (word == "var")
                word = "auto";
            else if (word == "bitcast")
                word = "as_type";
            else if (word == "round")  // WGSL rounds halfway cases to even, as MSL's rint does
                word = "rint";
            else if (word == "f32" || word == "f16" || word == "i32" || word == "u32")
                word = msl_from_wgsl_type(word);
            out += word;
            k = end;
            continue;
        }
        out += ch;
        ++k;
    }
    return out;
}

// A WGSL helper function as MSL. The helpers' first line of code is their
// header, `fn name(a: T, ...) -> R {`; comment lines before it are kept.
inline std::string msl_from_wgsl(std::string const& wgsl) {
    std::string out;
    std::size_t at = 0;
    while (at < wgsl.size()) {
        std::size_t const eol = wgsl.find('\n', at);
        std::string const line = wgsl.substr(at, eol == std::string::npos ? std::string::npos : eol - at);
        at = eol == std::string::npos ? wgsl.size() : eol + 1;
        if (line.compare(0, 3, "fn ") == 0) {
            std::size_t const open = line.find('('), close = line.find(')'), arrow = line.find("->");
            std::string params;
            std::string const list = line.substr(open + 1, close - open - 1);
            for (std::size_t p = 0; p < list.size();) {
                std::size_t const comma = list.find(',', p);
                std::string const one = list.substr(p, comma == std::string::npos ? std::string::npos : comma - p);
                std::size_t const colon = one.find(':');
                std::size_t const name_start = one.find_first_not_of(' ');
                params += concat(params.empty() ? "" : ", ", msl_from_wgsl_type(one.substr(colon + 2)), " ",
                                 one.substr(name_start, colon - name_start));
                p = comma == std::string::npos ? list.size() : comma + 1;
            }
            std::string const result = line.substr(arrow + 3, line.find(" {", arrow) - arrow - 3);
            out += concat("inline ", msl_from_wgsl_type(result), " ", line.substr(3, open - 3), "(", params, ") {\n");
            continue;
        }
        out += msl_from_wgsl_line(line) + "\n";
    }
    return out;
}

inline std::string msl_uniform_word(std::uint32_t slot) {
    static char const lanes[] = "xyzw";
    return concat("u[", std::to_string(slot / 4), "].", lanes[slot % 4]);
}

// The MSL expression of a node that is not an index, load or store (see
// wgsl_expression, which this mirrors).
inline std::string msl_expression(trace const& t, node const& nd, std::string const& a, std::string const& b,
                                  std::string const& c, bool vec, std::vector<std::uint32_t>& uniforms,
                                  std::vector<std::string>& helpers) {
    auto typed = [vec](scalar s) { return vec ? concat(msl_type(s), "4") : std::string(msl_type(s)); };
    std::string const type = typed(nd.type);
    switch (nd.code) {
        case op::uniform: {
            uniforms.push_back(t.uniforms()[nd.slot]);
            std::string const w = msl_uniform_word(static_cast<std::uint32_t>(uniforms.size() - 1));
            std::string expr;
            switch (nd.type) {
                case scalar::f32: expr = concat("as_type<float>(", w, ")"); break;
                case scalar::f16: expr = concat("half(as_type<float>(", w, "))"); break;
                case scalar::bf16: expr = concat("bfloat(as_type<float>(", w, "))"); break;
                case scalar::i32: expr = concat("as_type<int>(", w, ")"); break;
                case scalar::boolean: expr = concat("(", w, " != 0u)"); break;
                default: expr = w; break;
            }
            return vec ? concat(type, "(", expr, ")") : expr;  // splat
        }
        case op::convert: {
            scalar const from = t.type_of(nd.a);
            if (from == scalar::boolean) return concat("select(", type, "(0), ", type, "(1), ", a, ")");
            if (nd.type == scalar::boolean) return concat("(", a, " != ", typed(from), "(0))");
            return concat(type, "(", a, ")");
        }
        case op::select: return concat("select(", c, ", ", b, ", ", a, ")");
        case op::neg: return "-" + a;
        case op::logical_not: return "!" + a;
        case op::bit_not: return "~" + a;
        case op::abs: return concat("abs(", a, ")");
        case op::sqrt: return concat("sqrt(", a, ")");
        case op::min: return concat("min(", a, ", ", b, ")");
        case op::max: return concat("max(", a, ", ", b, ")");
        default: break;
    }
    if (char const* fn = math_function(nd.code)) {
        add_helper(fn, helpers);
        auto call = [&](std::string const& arg) {
            return nd.type == scalar::f32 ? concat(fn, "(", arg, ")")
                                          : concat(msl_type(nd.type), "(", fn, "(float(", arg, ")))");
        };
        return vec ? concat(type, "(", call(a + ".x"), ", ", call(a + ".y"), ", ", call(a + ".z"), ", ", call(a + ".w"),
                            ")")
                   : call(a);
    }
    if (vec && nd.code == op::logical_and) return concat("select(bool4(false), ", b, ", ", a, ")");
    if (vec && nd.code == op::logical_or) return concat("select(", b, ", bool4(true), ", a, ")");
    return concat(a, " ", binary_operator(nd.code), " ", b);
}

struct msl_language {
    static std::string type(scalar s, bool vec) { return vec ? concat(msl_type(s), "4") : std::string(msl_type(s)); }
    static constexpr auto expression = &msl_expression;
    static std::string declaration(std::string const& type, std::string const& name, std::string const& expr) {
        return concat("const ", type, " ", name, " = ", expr);
    }
    // `R name(constant uint4* u, T a0, ...) {`: the uniforms are a kernel
    // parameter in MSL, so functions take them as their first argument.
    static std::string function_head(std::string const& name, std::vector<scalar> const& args, scalar result) {
        std::string s = concat(msl_type(result), " ", name, "(constant uint4* u");
        for (std::size_t k = 0; k < args.size(); ++k) s += concat(", ", msl_type(args[k]), " a", std::to_string(k));
        return concat(s, ") {\n");
    }
};

}  // namespace detail

// The MSL function of node `result` of a trace of op::arg inputs:
// `R <name>(constant uint4* u, T a0, ...)` (detail::emit_function).
inline std::string emit_msl_function(trace const& t, std::int32_t result, std::string const& name,
                                     std::vector<scalar> const& arg_types, std::vector<std::uint32_t>& uniforms,
                                     std::vector<std::string>& helpers) {
    return detail::emit_function<detail::msl_language>(t, result, name, arg_types, uniforms, helpers);
}

// The MSL program of a trace (the kernel function is `sy_kernel`); lanes is
// 1, or 4 for the vector form (only for traces vectorizable() accepts).
inline shader_program emit_msl(trace const& t, std::uint32_t lanes = 1) {
    using namespace detail;
    bool const vec = lanes == 4;
    shader_program program;
    std::vector<std::string> helpers;
    bool uses_f16 = false;
    std::string const body = emit_statements<msl_language>(t, vec, program, helpers, uses_f16);
    if (program.bindings.size() + 1 > msl_max_buffers)
        throw shader_error(concat(t.device(), ": the kernel reads and writes ", std::to_string(program.bindings.size()),
                                  " buffers, and with its uniforms needs ", std::to_string(program.bindings.size() + 1),
                                  "; a Metal compute stage binds at most ", std::to_string(msl_max_buffers),
                                  " buffers"));
    std::string& s = program.text;
    s = "// Generated by switchyard from a traced C++ kernel.\n#include <metal_stdlib>\nusing namespace metal;\n\n";
    for (auto const& h : helpers) s += msl_from_wgsl(helper_text(h)) + "\n";
    s += "kernel void sy_kernel(";
    for (std::size_t k = 0; k < program.bindings.size(); ++k) {
        binding const& bd = t.bindings()[program.bindings[k]];
        s += concat("device ", bd.writable ? "" : "const ", msl_language::type(bd.type, vec), "* b", std::to_string(k),
                    " [[buffer(", std::to_string(k), ")]],\n                      ");
    }
    s += concat("constant uint4* u [[buffer(", std::to_string(program.bindings.size()),
                ")]], uint i [[thread_position_in_grid]]) {\n");
    s += "    if (i >= u[0].x) {\n        return;\n    }\n";
    s += body;
    s += "}\n";
    return program;
}

}  // namespace switchyard::shader
