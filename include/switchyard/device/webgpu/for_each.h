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
#include "switchyard/shader/program.h"
#include "switchyard/shader/tensor_view.h"
#include "switchyard/shader/trace.h"
#include "switchyard/shader/value.h"
#include "switchyard/shader/view.h"
#include "switchyard/shader/wgsl.h"

#define SWITCHYARD_HAS_WEBGPU_FOR_EACH 1

namespace switchyard::detail {

template <typename Tag, typename F>
void webgpu_for_each(Tag tag, std::int64_t count, F const& f) {
    if (count == 0) return;
    // The shader's index, workgroup * 256 + lane, must not wrap in 32 bits.
    constexpr std::int64_t max_count = (std::int64_t{1} << 32) - shader::wgsl_workgroup_size;
    if (count > max_count)
        throw std::invalid_argument("for_each on webgpu: count is " + std::to_string(count) +
                                    "; shader devices index with 32 bits (at most 2^32 - 256 elements)");
    webgpu_device& device = current_webgpu_device();
    auto traced =
        shader::trace_and_emit("webgpu", tag, f, count, device.has_f16(), false,
                               [](shader::trace const& t, std::uint32_t lanes) { return shader::emit_wgsl(t, lanes); });
    shader::trace const& t = traced.kernel;
    shader::wgsl_program& program = traced.program;
    std::uint32_t const lanes = traced.lanes;

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
