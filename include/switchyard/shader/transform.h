// transform on a shader device, whatever the device: every operand becomes a
// flat view of the device's kind over its broadcast layout in the
// operation's joint iteration order (view/iteration_order.h), and the
// kernel out[i] = f(in[i]...) goes to the device's for_each, which traces
// and records it (one shader per layout shape, sizes and strides as
// uniforms, 4 indices per thread when every operand is contiguous).
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>

#include "switchyard/core/enums.h"
#include "switchyard/core/results.h"
#include "switchyard/kernel_types.h"
#include "switchyard/shader/view.h"
#include "switchyard/view/elementwise_layout.h"

namespace switchyard::shader {

// for_each(tag, count, kernel) is the device's runner.
template <device_kind Device, std::size_t NOut, std::size_t NIn, typename Tag, typename F, typename ForEach>
void run_transform(Tag tag, F const& f, strided_ref const (&outs)[NOut], strided_ref const* ins,
                   ForEach const& for_each) {
    constexpr std::size_t N = NOut + NIn;
    constexpr auto type = switchyard::detail::tag_dtype<Tag>::value;
    using C = compute_t<Tag>;
    using S = storage_t<Tag>;
    // Validates shapes and overlap exactly as on the other devices.
    (void)make_elementwise_layout("transform", outs, static_cast<int>(NOut), ins, static_cast<int>(NIn));
    strided_ref refs[N];
    strided_ref const* ordered[N];
    for (std::size_t k = 0; k < N; ++k) {
        refs[k] = k < NOut ? outs[k] : switchyard::detail::broadcast_to("transform", ins[k - NOut], outs[0]);
        ordered[k] = &refs[k];
    }
    iteration_order const order = joint_iteration_order(ordered, static_cast<int>(N));
    using out_view = flat_out<Device, type, contiguity::strided>;
    using in_view = flat_in<Device, type, contiguity::strided>;
    out_view out[NOut];
    in_view in[NIn > 0 ? NIn : 1];
    for (std::size_t k = 0; k < NOut; ++k) out[k] = out_view(refs[k], order);
    for (std::size_t k = 0; k < NIn; ++k) in[k] = in_view(refs[NOut + k], order);
    for_each(tag, outs[0].numel(), [=](Tag, std::int64_t i) {
        auto const r = [&]<std::size_t... K>(std::index_sequence<K...>) { return f(static_cast<C>(in[K][i])...); }
        (std::make_index_sequence<NIn>{});
        [&]<std::size_t... O>(std::index_sequence<O...>) { ((out[O][i] = static_cast<S>(result_value<O, C>(r))), ...); }
        (std::make_index_sequence<NOut>{});
    });
}

}  // namespace switchyard::shader
