// emit_wgsl(trace): the WGSL compute shader of a traced kernel, with its uniform
// words and bindings in the shader's order.
//
// One invocation per for_each index, 256 per workgroup; the workgroup index
// is folded from (x, y) so that more than 65535 workgroups can be dispatched
// (webgpu_device::dispatch spills into y). With 4 lanes (emit_wgsl(t, 4), for
// traces that vectorizable() accepts) one invocation handles 4 consecutive
// indices as vec4 values: every binding is an array of vec4, uniforms are
// splatted, math functions run per component, and the invocation index is the
// vec4 index (word 0 is then the count / 4). Lavapipe runs such kernels 2-2.5x
// faster: it executes invocations in SIMD lanes and each scalar buffer access
// is a bounds-checked gather. Bindings 0..k-1 are the storage
// buffers in the order the kernel first touched them, binding k the uniform
// words (word 0 is the element count). Every trace node becomes one `let`, in
// program order. Math functions are the float algorithms of switchyard/math.h
// written in WGSL (exp by Cody-Waite reduction and a polynomial, log1p and
// expm1 without cancellation, softplus on confined arguments), because
// WGSL's exp and log are allowed errors of several ulp and it has no log1p.
// abs, sqrt, min and max are WGSL's builtins: min/max do not promise math.h's
// NaN propagation (WGSL leaves NaN behaviour to the implementation). f16
// values compute math in f32.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "switchyard/shader/text.h"
#include "switchyard/shader/trace.h"

namespace switchyard::shader {

inline constexpr std::uint32_t wgsl_workgroup_size = 256;

namespace detail {

inline char const* wgsl_type(scalar s) {
    switch (s) {
        case scalar::f32: return "f32";
        case scalar::f16: return "f16";
        case scalar::i32: return "i32";  // no bf16: traces for WebGPU refuse it (require_supported)
        case scalar::u32: return "u32";
        case scalar::boolean: return "bool";
        default: return "?";
    }
}

// The WGSL helper functions, each with the helpers it calls.
struct wgsl_helper {
    char const* name;
    std::vector<char const*> needs;
    char const* text;
};

inline std::vector<wgsl_helper> const& wgsl_helpers() {
    static std::vector<wgsl_helper> const helpers = {
        {"sy_f32_bits", {}, R"(fn sy_f32_bits(b: u32) -> f32 {
    return bitcast<f32>(b);
}
)"},
        {"sy_expm1_tail", {}, R"(// expm1(r + rc) - r for |r| <= ln2/2.
fn sy_expm1_tail(r: f32, rc: f32) -> f32 {
    return rc + (r * r) * (0.5 + r * (0.166666672 + r * (0.0416666828 + r * (0.00833320245 + r * (0.00139151397 + r * 0.000199489426)))));
}
)"},
        {"sy_exp_scale", {}, R"(// p * 2^k for k in [-150, 128], in two exact steps.
fn sy_exp_scale(p: f32, k: i32) -> f32 {
    let kk = bitcast<u32>(k + 256);
    let s1 = bitcast<f32>(((kk >> 1u) - 1u) << 23u);
    let s2 = bitcast<f32>((kk - (kk >> 1u) - 1u) << 23u);
    return (p * s1) * s2;
}
)"},
        {"sy_reduce_ln2", {}, R"(// x = k ln2 + r + rc with k = round(x / ln2): (r, rc, k).
fn sy_reduce_ln2(x: f32) -> vec3<f32> {
    let kf = round(x * 1.44269502);
    let hi = x - kf * 0.693145752;
    let lo = kf * 1.42860677e-06;
    let r = hi - lo;
    return vec3<f32>(r, (hi - r) - lo, kf);
}
)"},
        {"sy_exp",
         {"sy_reduce_ln2", "sy_expm1_tail", "sy_exp_scale"},
         R"(// NaN is passed on explicitly, as everywhere below: clamp may turn it into
// a bound. (x == x, not x != x: WGSL's != on floats may be an ordered
// comparison, false for NaN.)
fn sy_exp(x: f32) -> f32 {
    let red = sy_reduce_ln2(clamp(x, -104.0, 89.0));
    return select(x, sy_exp_scale(1.0 + (red.x + sy_expm1_tail(red.x, red.y)), i32(red.z)), x == x);
}
)"},
        {"sy_exp_pair",
         {"sy_reduce_ln2", "sy_expm1_tail", "sy_exp_scale"},
         R"(// exp(x) as hi + lo, lo the rounding error of hi.
fn sy_exp_pair(x: f32) -> vec2<f32> {
    let red = sy_reduce_ln2(clamp(x, -104.0, 89.0));
    let one_r = 1.0 + red.x;
    let t = ((1.0 - one_r) + red.x) + sy_expm1_tail(red.x, red.y);
    let p = one_r + t;
    let p_lo = (one_r - p) + t;
    return vec2<f32>(sy_exp_scale(p, i32(red.z)), sy_exp_scale(p_lo, i32(red.z)));
}
)"},
        {"sy_logistic", {"sy_exp_pair"}, R"(// (one ? 1 : e) / (1 + e), e = exp(-a), a >= 0.
fn sy_logistic(a: f32, one: bool) -> f32 {
    let e = sy_exp_pair(-a);
    let d = 1.0 + e.x;
    let d_lo = ((1.0 - d) + e.x) + e.y;
    let n = select(e.x, 1.0, one);
    let n_lo = select(e.y, 0.0, one);
    let q = n / d;
    let inv_d = select(1.0 - q, q, one);
    return q + (n_lo - q * d_lo) * inv_d;
}
)"},
        {"sy_sigmoid", {"sy_logistic"}, R"(fn sy_sigmoid(x: f32) -> f32 {
    return select(x, sy_logistic(abs(x), x >= 0.0), x == x);
}
)"},
        {"sy_tanh", {"sy_logistic"}, R"(fn sy_tanh(x: f32) -> f32 {
    let a = abs(x);
    let z = a * a;
    let small = a + a * (z * (-0.333333313 + z * (0.133332208 + z * (-0.0539481789 + z * (0.021706894 + z * (-0.00819001347 + z * 0.00215268484))))));
    let large = 1.0 - 2.0 * sy_logistic(2.0 * a, false);
    let r = select(large, small, a < 0.625);
    let with_sign = bitcast<f32>((bitcast<u32>(r) & 0x7fffffffu) | (bitcast<u32>(x) & 0x80000000u));
    return select(x, with_sign, x == x);
}
)"},
        {"sy_log_finish", {}, R"(// e ln2 + log1p(f) + corr for f in [sqrt(1/2) - 1, sqrt(2) - 1].
fn sy_log_finish(e: f32, f: f32, corr: f32) -> f32 {
    let tail = (f * f) * (-0.499999881 + f * (0.333333254 + f * (-0.250015855 + f * (0.200019836 + f * (-0.166089997 + f * (0.141815811 + f * (-0.132434726 + f * (0.129063234 + f * -0.0762293264))))))));
    let ehi = e * 0.693145752;
    let hi = ehi + f;
    let err = (ehi - hi) + f;
    return hi + (err + (tail + (corr + e * 1.42860677e-06)));
}
)"},
        {"sy_log", {"sy_log_finish", "sy_f32_bits"}, R"(fn sy_log(x: f32) -> f32 {
    let subnormal = x < 1.17549435e-38;
    let xs = select(x, x * 8388608.0, subnormal);
    let iu = bitcast<u32>(xs) - 0x3f3504f3u;
    let e = f32(bitcast<i32>(iu) >> 23u) - select(0.0, 23.0, subnormal);
    let m = bitcast<f32>((iu & 0x007fffffu) + 0x3f3504f3u);
    var r = sy_log_finish(e, m - 1.0, 0.0);
    r = select(r, sy_f32_bits(0x7fc00000u), x < 0.0);
    r = select(r, sy_f32_bits(0xff800000u), x == 0.0);
    return select(x, r, x < sy_f32_bits(0x7f800000u));
}
)"},
        {"sy_log1p_near", {}, R"(// log1p(f) = f + f^2 Q(f) for f in [-1/4, 1/2].
fn sy_log1p_near(f: f32) -> f32 {
    let q = -0.5 + f * (0.333334535 + f * (-0.250000536 + f * (0.199906066 + f * (-0.16647768 + f * (0.144820675 + f * (-0.13162224 + f * (0.104482777 + f * -0.0449090898)))))));
    return f + (f * f) * q;
}
)"},
        {"sy_log1p",
         {"sy_log1p_near", "sy_log_finish", "sy_f32_bits"},
         R"(// log1p without cancellation. On [-1/4, 1/2] a polynomial in x itself;
// elsewhere through u = 1 + x and c = what rounding u lost. (Shader compilers
// may reassociate c = x - (u - 1) to 0, so c is only relied on where it is
// below an ulp of the result.)
fn sy_log1p(x: f32) -> f32 {
    let u = 1.0 + x;
    let c = x - (u - 1.0);
    let iu = bitcast<u32>(u) - 0x3f3504f3u;
    let ei = bitcast<i32>(iu) >> 23u;
    let f = bitcast<f32>((iu & 0x007fffffu) + 0x3f3504f3u) - 1.0;
    let scale = bitcast<f32>(bitcast<u32>(127 - min(ei, 100)) << 23u);
    let corr = (c * scale) * (1.0 + f * (-1.0 + f * (1.0 - f)));
    var r = select(sy_log_finish(f32(ei), f, corr), sy_log1p_near(x), x >= -0.25 && x <= 0.5);
    r = select(r, x, x == 0.0);
    r = select(r, sy_f32_bits(0x7fc00000u), x < -1.0);
    r = select(r, sy_f32_bits(0xff800000u), x == -1.0);
    return select(x, r, x < sy_f32_bits(0x7f800000u));
}
)"},
        {"sy_expm1",
         {"sy_reduce_ln2", "sy_expm1_tail"},
         R"(// expm1 without cancellation: 2 (h r + (h - 1/2) + h q), h = 2^(k-1).
fn sy_expm1(x: f32) -> f32 {
    let red = sy_reduce_ln2(clamp(x, -18.0, 89.0));
    let q = sy_expm1_tail(red.x, red.y);
    let h = bitcast<f32>(bitcast<u32>(i32(red.z) + 126) << 23u);
    let hm = h - 0.5;
    let hm_err = select(h - (hm + 0.5), (h - hm) - 0.5, h >= 0.5);
    let hr = h * red.x;
    let sum = hm + hr;
    let sum_err = (hm - sum) + hr;
    let result = 2.0 * (sum + (sum_err + (hm_err + h * q)));
    return select(x, select(result, x, abs(x) < 2.98023224e-08), x == x);
}
)"},
        {"sy_exp_nonpositive", {"sy_expm1_tail"}, R"(// exp(-a) for a in [0, 104].
fn sy_exp_nonpositive(a: f32) -> f32 {
    let kf = round(-a * 1.44269502);
    let r = (kf * -1.42860677e-06) + (kf * -0.693145752 - a);
    let p = 1.0 + (r + sy_expm1_tail(r, 0.0));
    return (p * bitcast<f32>(bitcast<u32>(i32(kf) + 191) << 23u)) * 5.42101086e-20;
}
)"},
        {"sy_log1p_unit",
         {"sy_log1p_near"},
         R"(// log1p(e) for e in [0, 1]: above 1/2, 1 + e = 2 (1 + f) with f = (e - 1)/2 exact.
fn sy_log1p_unit(e: f32) -> f32 {
    let halved = e >= 0.5;
    let l = sy_log1p_near(select(e, e * 0.5 - 0.5, halved));
    return select(l, l + 0.693147182, halved);
}
)"},
        {"sy_softplus", {"sy_exp_nonpositive", "sy_log1p_unit"}, R"(// log(1 + exp(x)) = max(x, 0) + log1p(exp(-|x|)).
fn sy_softplus(x: f32) -> f32 {
    let tail = sy_log1p_unit(sy_exp_nonpositive(min(abs(x), 104.0)));
    return select(x, select(0.0, x, x > 0.0) + tail, x == x);
}
)"},
    };
    return helpers;
}

inline void add_helper(std::string const& name, std::vector<std::string>& order) {
    for (auto const& done : order)
        if (done == name) return;
    for (auto const& h : wgsl_helpers()) {
        if (name != h.name) continue;
        for (char const* dep : h.needs) add_helper(dep, order);
        order.push_back(name);
        return;
    }
}

inline char const* helper_text(std::string const& name) {
    for (auto const& h : wgsl_helpers())
        if (name == h.name) return h.text;
    return "";
}

inline char const* math_function(op code) {
    switch (code) {
        case op::exp: return "sy_exp";
        case op::expm1: return "sy_expm1";
        case op::log: return "sy_log";
        case op::log1p: return "sy_log1p";
        case op::tanh: return "sy_tanh";
        case op::sigmoid: return "sy_sigmoid";
        case op::softplus: return "sy_softplus";
        default: return nullptr;
    }
}

inline char const* binary_operator(op code) {
    switch (code) {
        case op::add: return "+";
        case op::sub: return "-";
        case op::mul: return "*";
        case op::div: return "/";
        case op::rem: return "%";
        case op::lt: return "<";
        case op::le: return "<=";
        case op::gt: return ">";
        case op::ge: return ">=";
        case op::eq: return "==";
        case op::ne: return "!=";
        case op::logical_and: return "&&";
        case op::logical_or: return "||";
        case op::bit_and: return "&";
        case op::bit_or: return "|";
        case op::bit_xor: return "^";
        default: return nullptr;
    }
}

inline std::string uniform_word(std::uint32_t slot) {
    static char const lanes[] = "xyzw";
    return concat("u.w[", std::to_string(slot / 4), "].", lanes[slot % 4]);
}

// The WGSL expression of a node that is not an index, argument, load or
// store, given its operands' names. A uniform node appends its word to
// `uniforms` (the program's words) and refers to it there; a math node adds
// the helpers it calls to `helpers`. vec: the vec4 form of emit_wgsl.
inline std::string wgsl_expression(trace const& t, node const& nd, std::string const& a, std::string const& b,
                                   std::string const& c, bool vec, std::vector<std::uint32_t>& uniforms,
                                   std::vector<std::string>& helpers) {
    auto typed = [vec](std::string const& scalar_type) { return vec ? "vec4<" + scalar_type + ">" : scalar_type; };
    std::string const type = typed(wgsl_type(nd.type));
    std::string expr;
    switch (nd.code) {
        case op::uniform: {
            uniforms.push_back(t.uniforms()[nd.slot]);
            std::string const w = uniform_word(static_cast<std::uint32_t>(uniforms.size() - 1));
            switch (nd.type) {
                case scalar::f32: expr = "bitcast<f32>(" + w + ")"; break;
                case scalar::f16: expr = "f16(bitcast<f32>(" + w + "))"; break;
                case scalar::i32: expr = "bitcast<i32>(" + w + ")"; break;
                case scalar::boolean: expr = "(" + w + " != 0u)"; break;
                default: expr = w; break;
            }
            if (vec) expr = type + "(" + expr + ")";  // splat
            return expr;
        }
        case op::convert: {
            scalar const from = t.type_of(nd.a);
            if (from == scalar::boolean) return "select(" + type + "(0), " + type + "(1), " + a + ")";
            if (nd.type == scalar::boolean) return concat("(", a, " != ", typed(wgsl_type(from)), "(0))");
            return type + "(" + a + ")";
        }
        case op::select: return "select(" + c + ", " + b + ", " + a + ")";
        case op::neg: return "-" + a;
        case op::logical_not: return "!" + a;
        case op::bit_not: return "~" + a;
        case op::abs: return "abs(" + a + ")";
        case op::sqrt: return "sqrt(" + a + ")";
        case op::min: return "min(" + a + ", " + b + ")";
        case op::max: return "max(" + a + ", " + b + ")";
        default: break;
    }
    if (char const* fn = math_function(nd.code)) {
        add_helper(fn, helpers);
        std::string const scalar_type = wgsl_type(nd.type);
        auto call = [&](std::string const& arg) {
            return nd.type == scalar::f32 ? std::string(fn) + "(" + arg + ")"
                                          : scalar_type + "(" + fn + "(f32(" + arg + ")))";
        };
        // The helpers are scalar functions: a vec4 calls them per component.
        return vec ? concat(type, "(", call(a + ".x"), ", ", call(a + ".y"), ", ", call(a + ".z"), ", ", call(a + ".w"),
                            ")")
                   : call(a);
    }
    if (vec && (nd.code == op::logical_and || nd.code == op::logical_or))
        // && and || take scalar bools only; & and | work per component.
        return a + (nd.code == op::logical_and ? " & " : " | ") + b;
    return a + " " + binary_operator(nd.code) + " " + b;
}

}  // namespace detail

// The order an emitter writes a trace's nodes in. Not the order the kernel
// happened to create them in: C++ leaves the evaluation order of function
// arguments (and of the operands of an overloaded +) unspecified, and g++
// and clang differ. Each store, in program order, comes after its operands,
// depth first, left to right; a load stays after the store to its buffer
// that preceded it. Emitters number names, uniform words and binding slots
// in this order, so the same kernel gives the same text (and one cached
// pipeline) whatever compiler built it. Nodes no store uses are left out.
inline std::vector<std::int32_t> emission_order(trace const& t) {
    auto const& nodes = t.nodes();
    std::size_t const n = nodes.size();
    // The node each load or store must follow besides its operands.
    std::vector<std::int32_t> after(n, -1);
    {
        std::vector<std::int32_t> last_store(t.bindings().size(), -1);
        std::int32_t previous_store = -1;
        for (std::size_t k = 0; k < n; ++k) {
            node const& nd = nodes[k];
            if (nd.code == op::load) after[k] = last_store[nd.slot];
            if (nd.code == op::store) {
                after[k] = previous_store;
                previous_store = last_store[nd.slot] = static_cast<std::int32_t>(k);
            }
        }
    }
    std::vector<std::int32_t> order;
    std::vector<char> placed(n, 0);
    // Depth first with a stack of its own, not recursion: a chain of a
    // million operations must not overflow the thread's stack. A node's
    // children are visited in the order `after`, a, b, c.
    struct frame {
        std::int32_t k;
        int next_child;
    };
    std::vector<frame> pending;
    auto place = [&](std::int32_t k) {
        if (k < 0 || placed[static_cast<std::size_t>(k)]) return;
        placed[static_cast<std::size_t>(k)] = 1;
        pending.push_back({k, 0});
    };
    for (std::size_t root = 0; root < n; ++root) {
        if (nodes[root].code != op::store) continue;
        place(static_cast<std::int32_t>(root));
        while (!pending.empty()) {
            frame& f = pending.back();
            auto const k = static_cast<std::size_t>(f.k);
            if (f.next_child == 4) {
                order.push_back(f.k);
                pending.pop_back();
                continue;
            }
            int const child = f.next_child++;
            place(child == 0 ? after[k] : child == 1 ? nodes[k].a : child == 2 ? nodes[k].b : nodes[k].c);
        }
    }

    return order;
}

// Whether emit_wgsl(t, 4) may run the trace: every load and store is at the
// index itself and the index is used for nothing else (every view contiguous),
// so 4 consecutive indices are 4 consecutive elements of every binding. An
// element offset computed otherwise (a strided walk, a constant, a gathered
// coordinate) keeps one index per invocation.
inline bool vectorizable(trace const& t) {
    std::int32_t const index = t.index_node();
    for (node const& nd : t.nodes()) {
        bool const access = nd.code == op::load || nd.code == op::store;
        if (access && nd.a != index) return false;
        if ((!access && nd.a == index) || nd.b == index || nd.c == index) return false;
    }
    return true;
}

// A kernel's shader and the data its bindings take, in the shader's order.
struct shader_program {
    std::string text;
    std::vector<std::uint32_t> uniforms;  // the uniform words; word 0 is the trace's word 0 (the count)
    std::vector<std::uint32_t> bindings;  // binding k of the shader is the trace's binding bindings[k]
};
using wgsl_program = shader_program;

namespace detail {

// A kernel's statements, one per node in emission_order, in a shader
// language L: L::type(scalar, vec), L::expression(...) for a node that is
// not an index, load or store, and L::declaration(type, name, expr). Fills
// the program's uniform words and binding order; `helpers` gets the helper
// functions the statements call, in an order that defines each before use;
// uses_f16 whether a statement or a binding has type f16.
template <typename L>
std::string emit_statements(trace const& t, bool vec, shader_program& program, std::vector<std::string>& helpers,
                            bool& uses_f16) {
    auto const& nodes = t.nodes();
    std::vector<std::int32_t> const order = emission_order(t);
    program.uniforms.push_back(t.uniforms()[0]);
    std::vector<std::string> name(nodes.size());
    std::vector<std::int32_t> binding_slot(t.bindings().size(), -1);
    auto slot_of = [&](std::uint32_t trace_slot) {
        if (binding_slot[trace_slot] < 0) {
            binding_slot[trace_slot] = static_cast<std::int32_t>(program.bindings.size());
            program.bindings.push_back(trace_slot);
        }
        return concat("b", std::to_string(binding_slot[trace_slot]));
    };
    std::string body;
    std::size_t values = 0;
    for (std::int32_t id : order) {
        node const& nd = nodes[static_cast<std::size_t>(id)];
        uses_f16 = uses_f16 || nd.type == scalar::f16;
        auto const& a = nd.a >= 0 ? name[static_cast<std::size_t>(nd.a)] : name[0];
        auto const& b = nd.b >= 0 ? name[static_cast<std::size_t>(nd.b)] : name[0];
        auto const& c = nd.c >= 0 ? name[static_cast<std::size_t>(nd.c)] : name[0];
        std::string expr;
        switch (nd.code) {
            case op::index:
                // Not = "i": g++ 12 falsely flags assigning a 1-character literal (PR 105329).
                name[static_cast<std::size_t>(id)] = std::string("i");
                continue;
            case op::store: body += concat("    ", slot_of(nd.slot), "[", a, "] = ", b, ";\n"); continue;
            case op::load: expr = slot_of(nd.slot) + "[" + a + "]"; break;
            default: expr = L::expression(t, nd, a, b, c, vec, program.uniforms, helpers); break;
        }
        std::string& own = name[static_cast<std::size_t>(id)];
        own = concat("v", std::to_string(values++));
        body += concat("    ", L::declaration(L::type(nd.type, vec), own, expr), ";\n");
    }
    for (std::uint32_t k : program.bindings) uses_f16 = uses_f16 || t.bindings()[k].type == scalar::f16;
    return body;
}

struct wgsl_language {
    static std::string type(scalar s, bool vec) { return vec ? concat("vec4<", wgsl_type(s), ">") : wgsl_type(s); }
    static constexpr auto expression = &wgsl_expression;
    static std::string declaration(std::string const& type, std::string const& name, std::string const& expr) {
        return concat("let ", name, ": ", type, " = ", expr);
    }
    // `fn name(a0: T, ...) -> R {`; functions read the uniforms `u` directly.
    static std::string function_head(std::string const& name, std::vector<scalar> const& args, scalar result) {
        std::string s = concat("fn ", name, "(");
        for (std::size_t k = 0; k < args.size(); ++k)
            s += concat(k ? ", " : "", "a", std::to_string(k), ": ", wgsl_type(args[k]));
        return concat(s, ") -> ", wgsl_type(result), " {\n");
    }
};

}  // namespace detail

// The WGSL program of a trace, its nodes in emission_order.
// lanes is 1, or 4 for the vec4 form (only for traces vectorizable() accepts).
inline wgsl_program emit_wgsl(trace const& t, std::uint32_t lanes = 1) {
    using namespace detail;
    bool const vec = lanes == 4;
    wgsl_program program;
    std::vector<std::string> helpers;
    bool uses_f16 = false;
    std::string const body = emit_statements<wgsl_language>(t, vec, program, helpers, uses_f16);

    std::string& s = program.text;
    s = "// Generated by switchyard from a traced C++ kernel.\n";
    if (uses_f16) s += "enable f16;\n";
    s += concat("\nstruct Uniforms {\n    w: array<vec4<u32>, ", std::to_string((program.uniforms.size() + 3) / 4),
                ">,\n};\n\n");
    for (std::size_t k = 0; k < program.bindings.size(); ++k) {
        binding const& bd = t.bindings()[program.bindings[k]];
        s += concat("@group(0) @binding(", std::to_string(k), ") var<storage, ", bd.writable ? "read_write" : "read",
                    "> b", std::to_string(k), ": array<", wgsl_language::type(bd.type, vec), ">;\n");
    }
    s += concat("@group(0) @binding(", std::to_string(program.bindings.size()), ") var<uniform> u: Uniforms;\n\n");
    for (auto const& h : helpers) s += std::string(helper_text(h)) + "\n";
    std::string const wg = std::to_string(wgsl_workgroup_size);
    s += "@compute @workgroup_size(" + wg +
         ")\nfn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>,\n"
         "        @builtin(local_invocation_index) lane: u32) {\n"
         "    let i = (wg.y * groups.x + wg.x) * " +
         wg +
         "u + lane;\n"
         "    if (i >= u.w[0].x) {\n        return;\n    }\n";
    s += body;
    s += "}\n";
    return program;
}

namespace detail {

// A function computing node `result` of a trace whose inputs are op::arg
// nodes, in language L: L::function_head(name, argument types, result type)
// opens it, then one L::declaration per node the result depends on, then
// `return`. The trace holds no loads or stores (a reduction's map or
// combine, traced on symbolic arguments). Uniform words the function reads
// are appended to `uniforms`, helpers it calls to `helpers`.
template <typename L>
std::string emit_function(trace const& t, std::int32_t result, std::string const& name,
                          std::vector<scalar> const& arg_types, std::vector<std::uint32_t>& uniforms,
                          std::vector<std::string>& helpers) {
    auto const& nodes = t.nodes();
    std::vector<char> used(nodes.size(), 0);
    used[static_cast<std::size_t>(result)] = 1;
    // Operands precede their users, so one backward sweep marks every node
    // the result depends on.
    for (std::size_t k = nodes.size(); k-- > 0;) {
        if (!used[k]) continue;
        for (std::int32_t operand : {nodes[k].a, nodes[k].b, nodes[k].c})
            if (operand >= 0) used[static_cast<std::size_t>(operand)] = 1;
    }
    std::string s = L::function_head(name, arg_types, t.type_of(result));
    std::vector<std::string> names(nodes.size());
    std::size_t values = 0;
    for (std::size_t k = 0; k < nodes.size(); ++k) {
        if (!used[k]) continue;
        node const& nd = nodes[k];
        if (nd.code == op::index || nd.code == op::load || nd.code == op::store)
            throw shader_error(std::string(t.device()) +
                               ": a reduction's map or combine read or wrote a view or used a for_each index; it "
                               "computes with its arguments only");
        if (nd.code == op::arg) {
            names[k] = concat("a", std::to_string(nd.slot));
            continue;
        }
        auto operand = [&](std::int32_t id) { return id >= 0 ? names[static_cast<std::size_t>(id)] : std::string(); };
        std::string const expr =
            L::expression(t, nd, operand(nd.a), operand(nd.b), operand(nd.c), false, uniforms, helpers);
        names[k] = concat("v", std::to_string(values++));
        s += concat("    ", L::declaration(L::type(nd.type, false), names[k], expr), ";\n");
    }
    s += concat("    return ", names[static_cast<std::size_t>(result)], ";\n}\n");
    return s;
}

}  // namespace detail

// The WGSL function of node `result` of a trace of op::arg inputs:
// `fn <name>(a0: T, a1: T, ...) -> R` (detail::emit_function).
inline std::string emit_wgsl_function(trace const& t, std::int32_t result, std::string const& name,
                                      std::vector<scalar> const& arg_types, std::vector<std::uint32_t>& uniforms,
                                      std::vector<std::string>& helpers) {
    return detail::emit_function<detail::wgsl_language>(t, result, name, arg_types, uniforms, helpers);
}

}  // namespace switchyard::shader
