// switchyard without PyTorch: softplus over raw buffers (softplus_op.h: one
// scalar function, one tag-constrained impl on transform, a sparse dispatch
// table), strided_refs over plain memory, run on the CPU thread pool.
#include <switchyard/switchyard.h>

#include "softplus_op.h"

#include <cstdint>
#include <cstdio>
#include <vector>

namespace sy = switchyard;

using softplus_example::softplus;

int main() {
    // A 3 x 4 row-major matrix, read through its transpose.
    std::vector<float> x(12), y(12);
    for (int i = 0; i < 12; ++i) x[i] = static_cast<float>(i - 6);
    auto const xt = sy::strided_ref::make(x.data(), sy::dtype::f32, sy::device_kind::cpu, {4, 3}, {1, 4}, "x.T");
    auto const yr = sy::strided_ref::contiguous(y.data(), sy::dtype::f32, sy::device_kind::cpu, {4, 3}, "y");

    softplus(xt, yr);  // transposed input, row-major output: each read by its own strides
    std::printf("softplus(x.T), f32:\n");
    for (int r = 0; r < 4; ++r) std::printf("  %8.5f %8.5f %8.5f\n", y[r * 3], y[r * 3 + 1], y[r * 3 + 2]);

    std::vector<sy::bfloat16> xb(12), yb(12);
    for (int i = 0; i < 12; ++i) xb[i] = sy::bfloat16(x[i]);
    softplus(sy::strided_ref::contiguous(xb.data(), sy::dtype::bf16, sy::device_kind::cpu, {12}, "xb"),
             sy::strided_ref::contiguous(yb.data(), sy::dtype::bf16, sy::device_kind::cpu, {12}, "yb"), 2.0, 5.0);
    std::printf("softplus(x, beta=2, threshold=5), bf16: %g ... %g\n", static_cast<float>(yb[0]),
                static_cast<float>(yb[11]));

    // A dtype the table does not cover: a clear error, not a crash.
    std::vector<std::int32_t> xi(12), yi(12);
    try {
        softplus(sy::strided_ref::contiguous(xi.data(), sy::dtype::i32, sy::device_kind::cpu, {12}, "xi"),
                 sy::strided_ref::contiguous(yi.data(), sy::dtype::i32, sy::device_kind::cpu, {12}, "yi"));
        return 1;
    } catch (sy::dispatch_lookup_error const& e) {
        std::printf("\n%s\n", e.what());
    }
    return 0;
}
