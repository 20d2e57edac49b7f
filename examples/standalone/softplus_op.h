// softplus as a switchyard op over raw buffers: one scalar function, one
// tag-constrained impl, a sparse dispatch table. The impl computes with
// storage_t<Tag> / compute_t<Tag>, so the same code runs on the CPU and, when
// the build has WebGPU (switchyard::webgpu), is traced into a WGSL shader:
// the table then covers webgpu for f32 and f16 too.
#pragma once

#include <switchyard/switchyard.h>

namespace softplus_example {

namespace sy = switchyard;

template <typename C>
C softplus(C x, C beta, C threshold) {
    C const bx = beta * x;
    return sy::select(bx > threshold, x, sy::softplus(bx) / beta);
}

struct softplus_op {
    template <typename Tag>
    requires sy::with_type<Tag, sy::device_kind> && sy::with_type<Tag, sy::dtype> && sy::with_type<Tag, sy::contiguity>
    static void op(Tag tag, sy::strided_ref const& x, sy::strided_ref const& y, double beta, double threshold) {
        constexpr auto device = sy::tag_get<sy::device_kind>(Tag{});
        constexpr auto dt = sy::tag_get<sy::dtype>(Tag{});
        constexpr auto contig = sy::tag_get<sy::contiguity>(Tag{});
        using storage = sy::storage_t<Tag>;
        using compute = sy::compute_t<Tag>;
        auto const order = sy::iteration_order_of(y, x);
        sy::flat_in<device, dt, contig> const in(x, order);
        sy::flat_out<device, dt, contig> const out(y, order);
        auto const b = static_cast<compute>(beta), t = static_cast<compute>(threshold);
        sy::for_each(tag, out.size(), [=](Tag, std::int64_t i) {
            out[i] = static_cast<storage>(softplus(static_cast<compute>(in[i]), b, t));
        });
    }

    using space = sy::axes<sy::full_device_axis, sy::float_dtype_axis, sy::full_contiguity_axis>;
    using cpu_points = sy::axes<sy::axis<sy::device_kind::cpu>, sy::float_dtype_axis, sy::full_contiguity_axis>;
#if defined(SWITCHYARD_HAS_WEBGPU_FOR_EACH)
    using webgpu_points =
        sy::axes<sy::axis<sy::device_kind::webgpu>, sy::axis<sy::dtype::f16, sy::dtype::f32>, sy::full_contiguity_axis>;
    using subspaces = sy::coverage<cpu_points, webgpu_points>;
#else
    using subspaces = sy::coverage<cpu_points>;
#endif
    using dispatcher = sy::dispatch_table<space, void(sy::strided_ref const&, sy::strided_ref const&, double, double)>;
};

// y = softplus(x) on x's device; a device, dtype or layout the table does not
// cover is a dispatch_lookup_error naming each coordinate.
inline void softplus(sy::strided_ref const& x, sy::strided_ref const& y, double beta = 1, double threshold = 20) {
    static auto const table = sy::dispatch_table_from_op<softplus_op>("softplus");
    table.select(sy::dispatch_set{x.device, x.type, sy::combined_contiguity(y, x)})(x, y, beta, threshold);
}

}  // namespace softplus_example
