// transform_reduce on WebGPU: the runner behind switchyard/reduce.h,
// shader/reduce.h's passes in WGSL (shader/wgsl_reduce.h), each recorded
// into the current webgpu_device's open encoder: nothing is submitted until
// sync() or a readback. Dtypes f32, i32, and f16 where the adapter has
// shader-f16.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "switchyard/core/dtype.h"
#include "switchyard/device/webgpu.h"
#include "switchyard/device/webgpu/current_device.h"
#include "switchyard/shader/math.h"
#include "switchyard/shader/reduce.h"
#include "switchyard/shader/wgsl_reduce.h"
#include "switchyard/view/reduction_layout.h"

#define SWITCHYARD_HAS_WEBGPU_REDUCE 1

namespace switchyard::detail {

// shader/reduce.h's device adapter for a webgpu_device.
struct webgpu_reduction_device {
    webgpu_device& device;
    char const* name = "webgpu";
    char const* guard = "webgpu_device_guard";

    bool has_f16() const { return device.has_f16(); }
    bool has_bf16() const { return false; }  // WGSL has none
    bool owns(void const* p) const { return device.owns(p); }
    void* alloc(std::size_t bytes) { return device.alloc(bytes); }
    void free(void* p) { device.free(p); }
    void run(std::string const& text, std::vector<shader::reduction_binding> const& bindings,
             std::vector<std::uint32_t> const& words, std::uint64_t groups) {
        std::vector<webgpu_binding> storage;
        for (auto const& b : bindings) storage.push_back({b.buffer, b.bytes});
        device.bind_check(storage);
        WGPUComputePipeline const pipeline = device.cached_pipeline(text);
        device.dispatch(pipeline, storage, std::as_bytes(std::span(words)), groups);
    }
};

template <dtype D, int NIn, typename Combine, typename F>
void webgpu_transform_reduce(char const* op, Combine const& combine, F const& f, reduction_layout const& layout,
                             strided_ref const& out_ref, strided_ref const* ins) {
    webgpu_reduction_device device{current_webgpu_device()};
    shader::run_transform_reduce<D, NIn, shader::detail::wgsl_reduction_syntax>(device, op, combine, f, layout, out_ref,
                                                                                ins);
}

}  // namespace switchyard::detail
