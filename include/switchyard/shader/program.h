// trace_and_emit: what every shader device's for_each does before it
// dispatches: trace the kernel with a placeholder index, emit it in the
// device's language (4 indices per thread when the count allows and every
// view is contiguous), and, the first time a kernel type is seen, trace it
// again with other placeholders to refuse a kernel whose trace depends on
// the index value (float(i), i % 2, i == 0, ...), which a shader could not
// reproduce.
#pragma once

#include <atomic>
#include <cstdint>
#include <iterator>
#include <string>

#include "switchyard/shader/trace.h"
#include "switchyard/shader/wgsl.h"

namespace switchyard::shader {

// Placeholder indices. The first, far from any real index, is the one the
// kernel is traced with: a view indexed by a constant or an offset index
// misses it. The others differ from it in sign, magnitude and low bits, so
// that a kernel computing with its index (i == 0, i % 4, i & 1, i < n)
// traces differently for one of them.
inline constexpr std::int64_t index_placeholders[] = {0x5EED123456789ABBll, -0x2BADCAFE00000011ll, 0, 1, 2, 3};

template <typename Tag, typename F>
trace trace_kernel(char const* device, Tag tag, F const& f, std::int64_t index_value, bool has_f16, bool has_bf16) {
    trace t(device, index_value, has_f16, has_bf16);
    trace_scope const scope(t);
    f(tag, index_value);
    return t;
}

struct traced_kernel {
    trace kernel;
    shader_program program;
    std::uint32_t lanes = 1;  // indices per thread
};

// emit(trace, lanes) -> shader_program is the device's emitter.
template <typename Tag, typename F, typename Emit>
traced_kernel trace_and_emit(char const* device, Tag tag, F const& f, std::int64_t count, bool has_f16, bool has_bf16,
                             Emit const& emit) {
    trace t = trace_kernel(device, tag, f, index_placeholders[0], has_f16, has_bf16);
    std::uint32_t const lanes = count % 4 == 0 && vectorizable(t) ? 4 : 1;
    shader_program program = emit(t, lanes);
    static std::atomic<bool> index_use_checked{false};
    if (!index_use_checked.load(std::memory_order_relaxed)) {
        for (std::size_t k = 1; k < std::size(index_placeholders); ++k) {
            trace const other = trace_kernel(device, tag, f, index_placeholders[k], has_f16, has_bf16);
            if (other.ambiguous()) continue;  // a tensor coordinate equal to a small placeholder
            shader_program const again = emit(other, lanes);
            if (again.uniforms != program.uniforms || again.text != program.text)
                throw shader_error(std::string(device) +
                                   ": the kernel computes with its for_each index (its trace changes with the index "
                                   "value); on shader devices the index may only index views (view[i], or a tensor "
                                   "view coordinate: t(i, 0))");
        }
        index_use_checked.store(true, std::memory_order_relaxed);
    }
    return {std::move(t), std::move(program), lanes};
}

}  // namespace switchyard::shader
