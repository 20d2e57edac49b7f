// for_each on Metal: traces the kernel, emits MSL (shader/msl.h), takes the
// pipeline from the current metal_device's cache and records one dispatch
// into its open command buffer; sync() or a readback commits everything
// recorded, once. As on WebGPU (shader/program.h): 4 indices per thread
// when the count allows and every view is contiguous, and a kernel that
// computes with its index is refused. Included by switchyard/for_each.h
// when SWITCHYARD_WITH_METAL is defined.
#pragma once

#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "switchyard/device/metal.h"
#include "switchyard/device/metal/current_device.h"
#include "switchyard/shader/math.h"
#include "switchyard/shader/msl.h"
#include "switchyard/shader/program.h"
#include "switchyard/shader/tensor_view.h"
#include "switchyard/shader/value.h"
#include "switchyard/shader/view.h"

#define SWITCHYARD_HAS_METAL_FOR_EACH 1

namespace switchyard::detail {

template <typename Tag, typename F>
void metal_for_each(Tag tag, std::int64_t count, F const& f) {
    if (count == 0) return;
    constexpr std::int64_t max_count = std::int64_t{1} << 32;  // the kernel's index is a uint
    if (count >= max_count)
        throw std::invalid_argument("for_each on metal: count is " + std::to_string(count) +
                                    "; shader devices index with 32 bits (fewer than 2^32 elements)");
    metal_device& device = current_metal_device();
    auto traced =
        shader::trace_and_emit("metal", tag, f, count, device.has_f16(), device.has_bf16(),
                               [](shader::trace const& t, std::uint32_t lanes) { return shader::emit_msl(t, lanes); });
    std::vector<metal_binding> bindings;
    bool aligned_for_lanes = true;
    for (std::uint32_t k : traced.program.bindings) {
        shader::binding const& b = traced.kernel.bindings()[k];
        metal_device::bound_buffer const at = device.resolve(b.buffer);
        aligned_for_lanes = aligned_for_lanes && at.offset % 16 == 0;
        // Metal binds a buffer from an offset aligned to the element read.
        std::uint64_t const element_bytes = b.type == shader::scalar::f16 || b.type == shader::scalar::bf16 ? 2 : 4;
        if (at.buffer && at.offset % element_bytes != 0)
            throw std::invalid_argument(std::string("for_each on metal: '") + b.name + "' starts at byte " +
                                        std::to_string(at.offset) + " of its buffer, which is not a multiple of its " +
                                        std::to_string(element_bytes) + "-byte elements");
        if (!at.buffer)
            throw std::invalid_argument(std::string("for_each on metal: '") + b.name +
                                        "' is not a live buffer of the current metal device (allocate it with "
                                        "that device's alloc or borrow it, or select the device with "
                                        "metal_device_guard)");
        if (b.elements < count)
            throw std::invalid_argument("for_each on metal: count is " + std::to_string(count) + " but '" + b.name +
                                        "' has " + std::to_string(b.elements) + " elements");
        bindings.push_back({const_cast<void*>(b.buffer), b.bytes, std::string("'") + b.name + "'"});
    }
    // A vector of 4 is read from a 16-byte boundary: a view that starts
    // elsewhere in a borrowed buffer (a storage offset) takes one index per
    // thread.
    if (traced.lanes > 1 && !aligned_for_lanes) {
        traced.program = shader::emit_msl(traced.kernel, 1);
        traced.lanes = 1;
    }
    std::uint64_t const threads = static_cast<std::uint64_t>(count) / traced.lanes;
    traced.program.uniforms[0] = static_cast<std::uint32_t>(threads);
    void* const pipeline = device.cached_pipeline(traced.program.text);
    device.dispatch(pipeline, bindings, std::move(traced.program.uniforms), threads, "for_each");
}

}  // namespace switchyard::detail
