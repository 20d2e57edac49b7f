// softplus as a switchyard op over raw buffers: one scalar function, one
// tag-constrained impl on `transform`, a sparse dispatch table. The impl
// computes with compute_t<Tag>, so the same code runs on the CPU, on CUDA
// where nvcc compiles it, and, when the build has WebGPU (switchyard::webgpu),
// traced into a WGSL shader. transform reads each operand by its own layout
// (contiguous, broadcast or strided), so the table needs no contiguity axis.
#pragma once

#include <switchyard/switchyard.h>

namespace softplus_example {

namespace sy = switchyard;

template <typename C>
SWITCHYARD_HOST_DEVICE C softplus(C x, C beta, C threshold) {
    C const bx = beta * x;
    return sy::select(bx > threshold, x, sy::softplus(bx) / beta);
}

struct softplus_op {
    template <typename Tag>
    static void op(Tag tag, sy::strided_ref const& x, sy::strided_ref const& y, double beta, double threshold) {
        using C = sy::compute_t<Tag>;  // float for f16 and bf16
        C const b(beta), t(threshold);
        sy::transform(
            tag, y, [=] SWITCHYARD_HOST_DEVICE(C v) { return softplus(v, b, t); }, x);
    }

    // Every device this build runs transform on (CPU; CUDA under nvcc;
    // WebGPU or Metal with switchyard::webgpu or switchyard::metal), each
    // with the float dtypes it stores.
    using space = sy::axes<sy::full_device_axis, sy::float_dtype_axis>;
    using subspaces = sy::transform_coverage<sy::float_dtype_axis>;
    using dispatcher = sy::dispatch_table<space, void(sy::strided_ref const&, sy::strided_ref const&, double, double)>;
};

// y = softplus(x) on x's device; a device or dtype the table does not cover
// is a dispatch_lookup_error naming each coordinate.
inline void softplus(sy::strided_ref const& x, sy::strided_ref const& y, double beta = 1, double threshold = 20) {
    static auto const table = sy::dispatch_table_from_op<softplus_op>("softplus");
    table.select(sy::dispatch_set{x.device, x.type})(x, y, beta, threshold);
}

}  // namespace softplus_example
