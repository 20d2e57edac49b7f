// transform on Metal: the elementwise runner behind switchyard/transform.h,
// shader/transform.h's views over metal_for_each (device/metal/for_each.h).
#pragma once

#include <cstddef>
#include <cstdint>

#include "switchyard/device/metal/for_each.h"
#include "switchyard/shader/transform.h"

#define SWITCHYARD_HAS_METAL_TRANSFORM 1

namespace switchyard::detail {

template <std::size_t NOut, std::size_t NIn, typename Tag, typename F>
void metal_transform(Tag tag, F const& f, strided_ref const (&outs)[NOut], strided_ref const* ins) {
    shader::run_transform<device_kind::metal, NOut, NIn>(
        tag, f, outs, ins, [](auto t, std::int64_t count, auto const& kernel) { metal_for_each(t, count, kernel); });
}

}  // namespace switchyard::detail
