// transform_reduce on Metal: the runner behind switchyard/reduce.h,
// shader/reduce.h's passes in MSL (shader/msl_reduce.h), each recorded into
// the current metal_device's open command buffer: nothing runs until sync()
// or a readback. Dtypes f32, i32, f16 and bf16 (accumulated in f32). Included by
// switchyard/reduce.h when SWITCHYARD_WITH_METAL is defined.
#pragma once

#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "switchyard/core/dtype.h"
#include "switchyard/device/metal.h"
#include "switchyard/device/metal/current_device.h"
#include "switchyard/shader/math.h"
#include "switchyard/shader/msl_reduce.h"
#include "switchyard/shader/reduce.h"
#include "switchyard/view/reduction_layout.h"

#define SWITCHYARD_HAS_METAL_REDUCE 1

namespace switchyard::detail {

// shader/reduce.h's device adapter for a metal_device. A pass is dispatched
// as groups x reduction_group_size threads: Metal's threadgroups are that
// size (device/metal/backend.h), the kernel's group and thread.
static_assert(metal_backend::threadgroup_size == shader::reduction_group_size,
              "a reduction's kernel takes Metal's threadgroups as its workgroups");

struct metal_reduction_device {
    metal_device& device;
    char const* op;
    char const* name = "metal";
    char const* guard = "metal_device_guard";

    bool has_f16() const { return device.has_f16(); }
    bool has_bf16() const { return device.has_bf16(); }
    bool owns(void const* p) const { return device.resolve(p).buffer != nullptr; }
    void* alloc(std::size_t bytes) { return device.alloc(bytes); }
    void free(void* p) { device.free(p); }
    void run(std::string const& text, std::vector<shader::reduction_binding> const& bindings,
             std::vector<std::uint32_t> words, std::uint64_t groups) {
        // Thread positions are 32-bit: 2^24 threadgroups of 256 at most.
        constexpr std::uint64_t max_groups = (std::uint64_t{1} << 32) / shader::reduction_group_size;
        if (groups >= max_groups)
            throw std::invalid_argument(std::string(op) + " on metal: the reduction needs " + std::to_string(groups) +
                                        " threadgroups; Metal's 32-bit thread positions reach fewer than " +
                                        std::to_string(max_groups) + " (fewer outputs, or fewer blocks each)");
        std::vector<metal_binding> buffers;
        for (auto const& b : bindings) buffers.push_back({b.buffer, b.bytes, b.name});
        void* const pipeline = device.cached_pipeline(text);
        device.dispatch(pipeline, buffers, std::move(words), groups * shader::reduction_group_size, op);
    }
};

template <dtype D, int NIn, typename Combine, typename F>
void metal_transform_reduce(char const* op, Combine const& combine, F const& f, reduction_layout const& layout,
                            strided_ref const& out_ref, strided_ref const* ins) {
    metal_reduction_device device{current_metal_device(), op};
    shader::run_transform_reduce<D, NIn, shader::detail::msl_reduction_syntax>(device, op, combine, f, layout, out_ref,
                                                                               ins);
}

}  // namespace switchyard::detail
