// for_each on WebGPU: traces the kernel (shader/trace.h), emits WGSL
// (shader/wgsl.h), takes the pipeline from the device's cache and records one
// dispatch into the device's open command encoder. Nothing is submitted here:
// sync() or a readback submits everything recorded, once. A kernel whose
// views are all contiguous runs 4 indices per invocation as vec4 values when
// the count is a multiple of 4 (shader/wgsl.h, vectorizable).
//
// The kernel is called with a placeholder index that views recognise; it may
// use the index only to index views. The first call of each kernel type
// traces it again with other placeholders and refuses a kernel whose trace
// depends on the index value (float(i), i % 2, i == 0, ...), which a shader
// could not reproduce. Included by switchyard/for_each.h when SWITCHYARD_WITH_WEBGPU is
// defined.
#pragma once

#include <atomic>
#include <cstdint>
#include <iterator>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "switchyard/device/webgpu.h"
#include "switchyard/device/webgpu/current_device.h"
#include "switchyard/shader/math.h"
#include "switchyard/shader/tensor_view.h"
#include "switchyard/shader/trace.h"
#include "switchyard/shader/value.h"
#include "switchyard/shader/view.h"
#include "switchyard/shader/wgsl.h"

#define SWITCHYARD_HAS_WEBGPU_FOR_EACH 1

namespace switchyard::detail {

// Placeholder indices. The first, far from any real index, is the one the
// kernel is traced with: a view indexed by a constant or an offset index
// misses it. The others differ from it in sign, magnitude and low bits, so
// that a kernel computing with its index (i == 0, i % 4, i & 1, i < n)
// traces differently for one of them.
inline constexpr std::int64_t shader_index_placeholders[] = {0x5EED123456789ABBll, -0x2BADCAFE00000011ll, 0, 1, 2, 3};

template <typename Tag, typename F>
shader::trace trace_kernel(Tag tag, F const& f, std::int64_t index_value, bool has_f16) {
    shader::trace t("webgpu", index_value, has_f16);
    shader::trace_scope const scope(t);
    f(tag, index_value);
    return t;
}

template <typename Tag, typename F>
void webgpu_for_each(Tag tag, std::int64_t count, F const& f) {
    if (count == 0) return;
    // The shader's index, workgroup * 256 + lane, must not wrap in 32 bits.
    constexpr std::int64_t max_count = (std::int64_t{1} << 32) - shader::wgsl_workgroup_size;
    if (count > max_count)
        throw std::invalid_argument("for_each on webgpu: count is " + std::to_string(count) +
                                    "; shader devices index with 32 bits (at most 2^32 - 256 elements)");
    webgpu_device& device = current_webgpu_device();
    shader::trace const t = trace_kernel(tag, f, shader_index_placeholders[0], device.has_f16());
    std::uint32_t const lanes = count % 4 == 0 && shader::vectorizable(t) ? 4 : 1;
    shader::wgsl_program program = shader::emit_wgsl(t, lanes);

    static std::atomic<bool> index_use_checked{false};
    if (!index_use_checked.load(std::memory_order_relaxed)) {
        for (std::size_t k = 1; k < std::size(shader_index_placeholders); ++k) {
            shader::trace const other = trace_kernel(tag, f, shader_index_placeholders[k], device.has_f16());
            if (other.ambiguous()) continue;  // a tensor coordinate equal to a small placeholder
            shader::wgsl_program const again = shader::emit_wgsl(other, lanes);
            if (again.uniforms != program.uniforms || again.text != program.text)
                throw shader::shader_error(
                    "webgpu: the kernel computes with its for_each index (its trace changes with the index "
                    "value); on shader devices the index may only index views (view[i], or a tensor view "
                    "coordinate: t(i, 0))");
        }
        index_use_checked.store(true, std::memory_order_relaxed);
    }

    std::vector<webgpu_binding> bindings;
    for (std::uint32_t k : program.bindings) {
        shader::binding const& b = t.bindings()[k];
        if (!device.owns(b.buffer))
            throw std::invalid_argument(std::string("for_each on webgpu: '") + b.name +
                                        "' is not a live buffer of the current webgpu device (allocate it with "
                                        "that device's alloc, or select the device with webgpu_device_guard)");
        if (b.elements < count)
            throw std::invalid_argument("for_each on webgpu: count is " + std::to_string(count) + " but '" + b.name +
                                        "' has " + std::to_string(b.elements) + " elements");
        bindings.push_back({const_cast<void*>(b.buffer), b.bytes > 4 ? b.bytes : 4});
    }
    device.bind_check(bindings);
    std::uint64_t const uniform_bytes =  // padded as dispatch pads it
        (program.uniforms.size() * sizeof(program.uniforms[0]) + 15) & ~std::uint64_t{15};
    std::uint64_t const uniform_limit = device.limits().maxUniformBufferBindingSize;
    if (uniform_bytes > uniform_limit)
        throw std::invalid_argument(
            "for_each on webgpu: the kernel's host scalars (with its views' sizes and strides) take " +
            std::to_string(uniform_bytes) + " bytes of uniforms, but the adapter's maxUniformBufferBindingSize is " +
            std::to_string(uniform_limit) + " bytes (about " + std::to_string(uniform_limit / 4) +
            " scalars); pass large sets of constants in a buffer (a view) instead of capturing them");
    std::uint64_t const invocations = static_cast<std::uint64_t>(count) / lanes;
    program.uniforms[0] = static_cast<std::uint32_t>(invocations);
    WGPUComputePipeline const pipeline = device.cached_pipeline(program.text);
    std::uint64_t const groups = (invocations + shader::wgsl_workgroup_size - 1) / shader::wgsl_workgroup_size;
    device.dispatch(pipeline, bindings, std::as_bytes(std::span(program.uniforms)), groups);
}

}  // namespace switchyard::detail
