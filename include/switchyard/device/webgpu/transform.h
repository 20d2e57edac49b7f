// transform on WebGPU: the elementwise runner behind switchyard/transform.h,
// shader/transform.h's views over webgpu_for_each (device/webgpu/
// for_each.h). Operands beyond what the device binds in one stage are
// refused there with the device's limit named.
#pragma once

#include <cstddef>
#include <cstdint>

#include "switchyard/device/webgpu/for_each.h"
#include "switchyard/shader/transform.h"

#define SWITCHYARD_HAS_WEBGPU_TRANSFORM 1

namespace switchyard::detail {

template <std::size_t NOut, std::size_t NIn, typename Tag, typename F>
void webgpu_transform(Tag tag, F const& f, strided_ref const (&outs)[NOut], strided_ref const* ins) {
    shader::run_transform<device_kind::webgpu, NOut, NIn>(
        tag, f, outs, ins, [](auto t, std::int64_t count, auto const& kernel) { webgpu_for_each(t, count, kernel); });
}

}  // namespace switchyard::detail
