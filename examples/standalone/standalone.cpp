// switchyard without PyTorch: softplus over raw buffers. One scalar function,
// one tag-constrained impl, a sparse dispatch table, views over plain memory
// and for_each on the CPU thread pool.
#include <switchyard/switchyard.h>

#include <cstdint>
#include <cstdio>
#include <vector>

namespace sy = switchyard;

template <typename C>
C softplus(C x, C beta, C threshold) {
    C const bx = beta * x;
    return sy::select(bx > threshold, x, sy::softplus(bx) / beta);
}

struct softplus_op {
    template <typename Tag>
        requires sy::with_value<Tag, sy::device_kind::cpu> && sy::with_type<Tag, sy::dtype> &&
                 sy::with_type<Tag, sy::contiguity>
    static void op(Tag tag, sy::strided_ref const& x, sy::strided_ref const& y, double beta, double threshold) {
        constexpr auto dt = sy::tag_get<sy::dtype>(Tag{});
        constexpr auto contig = sy::tag_get<sy::contiguity>(Tag{});
        using storage = sy::dtype_storage_t<dt>;
        using compute = sy::dtype_compute_t<dt>;
        auto const order = sy::iteration_order_of(y, x);
        sy::flat_in<sy::device_kind::cpu, dt, contig> const in(x, order);
        sy::flat_out<sy::device_kind::cpu, dt, contig> const out(y, order);
        auto const b = static_cast<compute>(beta), t = static_cast<compute>(threshold);
        sy::for_each(tag, out.size(), [=](Tag, std::int64_t i) {
            out[i] = static_cast<storage>(softplus(static_cast<compute>(in[i]), b, t));
        });
    }

    using space = sy::axes<sy::full_device_axis, sy::float_dtype_axis, sy::full_contiguity_axis>;
    using subspaces = sy::coverage<sy::axes<sy::axis<sy::device_kind::cpu>, sy::float_dtype_axis, sy::full_contiguity_axis>>;
    using dispatcher = sy::dispatch_table<space, void(sy::strided_ref const&, sy::strided_ref const&, double, double)>;
};

void softplus(sy::strided_ref const& x, sy::strided_ref const& y, double beta = 1, double threshold = 20) {
    static auto const table = sy::dispatch_table_from_op<softplus_op>("softplus");
    table.select(sy::dispatch_set{x.device, x.type, sy::combined_contiguity(y, x)})(x, y, beta, threshold);
}

int main() {
    // A 3 x 4 row-major matrix, read through its transpose.
    std::vector<float> x(12), y(12);
    for (int i = 0; i < 12; ++i) x[i] = static_cast<float>(i - 6);
    auto const xt = sy::strided_ref::make(x.data(), sy::dtype::f32, sy::device_kind::cpu, {4, 3}, {1, 4}, "x.T");
    auto const yr = sy::strided_ref::contiguous(y.data(), sy::dtype::f32, sy::device_kind::cpu, {4, 3}, "y");

    softplus(xt, yr);  // transposed input, row-major output: the strided path
    std::printf("softplus(x.T), f32:\n");
    for (int r = 0; r < 4; ++r)
        std::printf("  %8.5f %8.5f %8.5f\n", y[r * 3], y[r * 3 + 1], y[r * 3 + 2]);

    std::vector<sy::bfloat16> xb(12), yb(12);
    for (int i = 0; i < 12; ++i) xb[i] = sy::bfloat16(x[i]);
    softplus(sy::strided_ref::contiguous(xb.data(), sy::dtype::bf16, sy::device_kind::cpu, {12}, "xb"),
             sy::strided_ref::contiguous(yb.data(), sy::dtype::bf16, sy::device_kind::cpu, {12}, "yb"), 2.0, 5.0);
    std::printf("softplus(x, beta=2, threshold=5), bf16: %g ... %g\n", static_cast<float>(yb[0]), static_cast<float>(yb[11]));

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
