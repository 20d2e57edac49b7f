// Fuzz target: the WGSL emitter. The fuzzer's bytes are a small stack
// program (loads of f32/f16 views, contiguous or strided, host constants,
// unary math, arithmetic, comparisons and select, stores to one or two
// outputs) run as a kernel under a trace. The emitted program must be
// well formed (every value defined once before it is used, balanced
// brackets, every helper, binding and uniform word it names declared),
// identical when traced twice, and identical in text (not in uniforms) when
// only the host constants change (unless a select was decided on the host).
// vec4 emission is checked the same way where the trace allows it.
#include <switchyard/switchyard.h>

#include <cstdint>
#include <cstring>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "fuzz_bytes.h"

namespace sy = switchyard;
using sy::contiguity;
using sy::device_kind;
using sy::dtype;

namespace {

int buffers[5];  // stand-in buffer handles: tracing never touches memory

enum class code : std::uint8_t { load, constant, unary, binary, select, store, count };

struct instruction {
    code what;
    std::uint8_t arg;
};

struct program {
    std::vector<instruction> steps;
    std::vector<float> constants;
};

program read_program(fuzz::bytes& in) {
    program p;
    int depth = 0;
    for (int n = 0; n < 200 && !in.empty(); ++n) {
        auto const what = static_cast<code>(in.in(0, static_cast<std::int64_t>(code::count) - 1));
        auto const arg = static_cast<std::uint8_t>(in.in(0, 255));
        int const needs = what == code::binary                         ? 2
                          : what == code::select                       ? 4
                          : what == code::unary || what == code::store ? 1
                                                                       : 0;
        if (depth < needs) continue;
        if (what == code::constant) p.constants.push_back(in.raw<float>());
        p.steps.push_back({what, arg});
        depth += what == code::binary   ? -1
                 : what == code::select ? -3
                 : what == code::store  ? -1
                 : what == code::unary  ? 0
                                        : 1;
    }
    return p;
}

template <typename V>
V unary(std::uint8_t which, V const& x) {
    switch (which % 12) {
        case 0: return sy::exp(x);
        case 1: return sy::expm1(x);
        case 2: return sy::log(x);
        case 3: return sy::log1p(x);
        case 4: return sy::tanh(x);
        case 5: return sy::sigmoid(x);
        case 6: return sy::softplus(x);
        case 7: return sy::sqrt(x);
        case 8: return sy::abs(x);
        case 9: return -x;
        case 10: return sy::softplus_to<sy::half>(x);
        default: return sy::sigmoid_to<sy::half>(x);
    }
}

template <typename V>
V binary(std::uint8_t which, V const& a, V const& b) {
    switch (which % 6) {
        case 0: return a + b;
        case 1: return a - b;
        case 2: return a * b;
        case 3: return a / b;
        case 4: return sy::min(a, b);
        default: return sy::max(a, b);
    }
}

// Set when a select's condition was a host bool (both sides host numbers):
// the trace then took one side, so the kernel's structure depends on the
// constants' values, by design (docs/webgpu.md).
bool decided_on_host = false;

template <typename V>
V pick(std::uint8_t which, V const& a, V const& b, V const& x, V const& y) {
    auto const cond = which % 3 == 0 ? a < b : which % 3 == 1 ? a > b : a == b;
    decided_on_host = decided_on_host || !cond.symbolic();
    return sy::select(cond, x, y);
}

struct layout_choice {
    bool f16;
    bool strided[3];
    int inputs;
    int outputs;
};

template <dtype D, contiguity L>
sy::shader::trace run_trace(program const& p, layout_choice const& l, std::vector<float> const& constants) {
    using tag = sy::tag<device_kind::webgpu, D, L>;
    using storage = sy::storage_t<tag>;
    using compute = sy::compute_t<tag>;
    auto const contiguous = sy::strided_ref::contiguous(&buffers[0], D, device_kind::webgpu, {7, 5}, "x");
    auto const transposed = sy::strided_ref::make(&buffers[0], D, device_kind::webgpu, {7, 5}, {1, 7}, "x.T");
    std::vector<sy::flat_in<device_kind::webgpu, D, L>> ins;
    for (int k = 0; k < l.inputs; ++k) {
        auto r = l.strided[k] ? transposed : contiguous;
        r.data = &buffers[k];
        ins.emplace_back(r);
    }
    std::vector<sy::flat_out<device_kind::webgpu, D, L>> outs;
    for (int k = 0; k < l.outputs; ++k) {
        auto r = contiguous;
        r.data = &buffers[3 + k];
        outs.emplace_back(r);
    }
    sy::shader::trace t("webgpu", 35, true);
    sy::shader::trace_scope const scope(t);
    std::vector<compute> stack;
    std::size_t next_constant = 0;
    std::int64_t const i = 35;  // the trace's index stands for the invocation's
    auto pop = [&] {
        compute v = stack.back();
        stack.pop_back();
        return v;
    };
    for (instruction const& s : p.steps) {
        switch (s.what) {
            case code::load: stack.push_back(static_cast<compute>(ins[s.arg % ins.size()][i])); break;
            case code::constant: stack.push_back(compute(constants[next_constant++])); break;
            case code::unary: stack.push_back(unary(s.arg, pop())); break;
            case code::binary: {
                compute const b = pop(), a = pop();
                stack.push_back(binary(s.arg, a, b));
                break;
            }
            case code::select: {
                compute const y = pop(), x = pop(), b = pop(), a = pop();
                stack.push_back(pick(s.arg, a, b, x, y));
                break;
            }
            case code::store: outs[s.arg % outs.size()][i] = static_cast<storage>(pop()); break;
            case code::count: break;
        }
    }
    // Whatever is left goes to the first output, so every trace stores.
    outs[0][i] = static_cast<storage>(stack.empty() ? compute(1.0f) : stack.back());
    return t;
}

// Balanced brackets, values defined once before use, and every name the
// program uses declared.
void check_well_formed(sy::shader::wgsl_program const& prog) {
    std::string const& text = prog.text;
    int round = 0, square = 0, curly = 0;
    for (char c : text) {
        round += c == '(' ? 1 : c == ')' ? -1 : 0;
        square += c == '[' ? 1 : c == ']' ? -1 : 0;
        curly += c == '{' ? 1 : c == '}' ? -1 : 0;
        FUZZ_CHECK(round >= 0 && square >= 0 && curly >= 0);
    }
    FUZZ_CHECK(round == 0 && square == 0 && curly == 0);
    std::set<std::string> defined;
    std::regex const let_re(R"(^\s*let (v\d+)(:| =))"), use_re(R"(\bv\d+\b)");
    std::regex const helper_def(R"(\bfn (sy_\w+)\()"), helper_use(R"(\b(sy_\w+)\()");
    std::regex const binding_def(R"(var<[^>]*> (b\d+):)"), binding_use(R"(\b(b\d+)\[)");
    std::set<std::string> helpers, bindings;
    for (std::sregex_iterator m(text.begin(), text.end(), helper_def), end; m != end; ++m) helpers.insert((*m)[1]);
    for (std::sregex_iterator m(text.begin(), text.end(), binding_def), end; m != end; ++m) bindings.insert((*m)[1]);
    std::size_t start = text.find("fn main(");
    FUZZ_CHECK(start != std::string::npos);
    std::size_t line_start = start;
    while (line_start < text.size()) {
        std::size_t const line_end = std::min(text.find('\n', line_start), text.size());
        std::string const line = text.substr(line_start, line_end - line_start);
        std::smatch def;
        std::string defined_here;
        if (std::regex_search(line, def, let_re)) {
            defined_here = def[1];
            FUZZ_CHECK(!defined.count(defined_here));
        }
        for (std::sregex_iterator m(line.begin(), line.end(), use_re), end; m != end; ++m)
            if (m->str() != defined_here) FUZZ_CHECK(defined.count(m->str()));
        for (std::sregex_iterator m(line.begin(), line.end(), helper_use), end; m != end; ++m)
            FUZZ_CHECK(helpers.count((*m)[1]));
        for (std::sregex_iterator m(line.begin(), line.end(), binding_use), end; m != end; ++m)
            FUZZ_CHECK(bindings.count((*m)[1]));
        if (!defined_here.empty()) defined.insert(defined_here);
        line_start = line_end + 1;
    }
    // Uniform words: u.w[k] names words 4k..4k+3, all inside the uniforms.
    std::regex const word_re(R"(u\.w\[(\d+)\]\.([xyzw]))");
    for (std::sregex_iterator m(text.begin(), text.end(), word_re), end; m != end; ++m) {
        std::size_t const word = std::stoul((*m)[1]) * 4 + std::string("xyzw").find((*m)[2].str()[0]);
        FUZZ_CHECK(word < prog.uniforms.size());
    }
}

template <dtype D, contiguity L>
void check(program const& p, layout_choice const& l) {
    sy::shader::trace const first = run_trace<D, L>(p, l, p.constants);
    sy::shader::trace const again = run_trace<D, L>(p, l, p.constants);
    std::vector<float> other = p.constants;
    for (float& c : other) c = c * 0.5f + 3.0f;
    decided_on_host = false;
    sy::shader::trace const changed = run_trace<D, L>(p, l, other);
    bool const same_structure = !decided_on_host;
    for (std::uint32_t lanes : {1u, 4u}) {
        if (lanes == 4 && !sy::shader::vectorizable(first)) continue;
        sy::shader::wgsl_program const a = sy::shader::emit_wgsl(first, lanes);
        check_well_formed(a);
        sy::shader::wgsl_program const b = sy::shader::emit_wgsl(again, lanes);
        FUZZ_CHECK(a.text == b.text && a.uniforms == b.uniforms && a.bindings == b.bindings);
        sy::shader::wgsl_program const c = sy::shader::emit_wgsl(changed, lanes);
        if (same_structure)
            FUZZ_CHECK(a.text == c.text && a.bindings == c.bindings && a.uniforms.size() == c.uniforms.size());
        else if (lanes == 1 || sy::shader::vectorizable(changed))
            check_well_formed(sy::shader::emit_wgsl(changed, lanes));
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(std::uint8_t const* data, std::size_t size) {
    fuzz::bytes in(data, size);
    layout_choice l{};
    l.f16 = in.flag();
    l.inputs = static_cast<int>(in.in(1, 3));
    l.outputs = static_cast<int>(in.in(1, 2));
    for (bool& s : l.strided) s = in.in(0, 3) == 0;
    program const p = read_program(in);
    // Contiguous views (vec4 possible) unless an input is transposed.
    bool const strided = l.strided[0] || (l.inputs > 1 && l.strided[1]) || (l.inputs > 2 && l.strided[2]);
    if (l.f16 && strided) check<dtype::f16, contiguity::strided>(p, l);
    if (l.f16 && !strided) check<dtype::f16, contiguity::contiguous>(p, l);
    if (!l.f16 && strided) check<dtype::f32, contiguity::strided>(p, l);
    if (!l.f16 && !strided) check<dtype::f32, contiguity::contiguous>(p, l);
    return 0;
}
