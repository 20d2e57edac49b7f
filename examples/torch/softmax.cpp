// softmax(x) along the last dimension, and its backward: the row-statistics
// example. The forward is three library calls: each row's max, the sum of
// exp(x - max), then exp(x - max) / sum. The max and the sum are [..., 1]
// (keepdim), so they broadcast back over their row. The backward is
// y * (grad - sum(grad * y)). Written once for every float dtype on CPU and
// CUDA (cuda/softmax.cu); the derivatives are in derivatives.cpp. The row
// statistics have x's dtype, so for f16 and bf16 the sum is rounded once to
// it (a row of f16 longer than 65504 values could overflow it).
#include <ATen/ops/empty.h>
#include <ATen/ops/empty_like.h>
#include <switchyard/switchyard.h>
#include <switchyard/torch.h>

#include <vector>

namespace switchyard_examples {

namespace sy = switchyard;

struct softmax_op {
    template <typename Tag>
    static void op(Tag tag, sy::op_args const& args) {
        using C = sy::compute_t<Tag>;
        auto const shifted_exp = [] SWITCHYARD_HOST_DEVICE(C x, C max) { return sy::exp(x - max); };
        auto const normalized = [] SWITCHYARD_HOST_DEVICE(C x, C max, C sum) { return sy::exp(x - max) / sum; };
        sy::reduce(tag, args["max"], sy::dims{-1}, sy::amax, args["x"]);
        sy::transform_reduce(tag, args["sum"], sy::dims{-1}, sy::sum, shifted_exp, args["x"], args["max"]);
        sy::transform(tag, args["out"], normalized, args["x"], args["max"], args["sum"]);
    }
    using space = sy::axes<sy::torch_build_device_axis, sy::torch_full_float_stype_axis>;
    using dispatcher = sy::dispatch_table<space, void(sy::op_args const&)>;
};

struct softmax_backward_op {
    template <typename Tag>
    static void op(Tag tag, sy::op_args const& args) {
        using C = sy::compute_t<Tag>;
        auto const product = [] SWITCHYARD_HOST_DEVICE(C g, C y) { return g * y; };
        auto const gradient = [] SWITCHYARD_HOST_DEVICE(C g, C y, C dot) { return y * (g - dot); };
        sy::transform_reduce(tag, args["dot"], sy::dims{-1}, sy::sum, product, args["grad"], args["y"]);
        sy::transform(tag, args["out"], gradient, args["grad"], args["y"], args["dot"]);
    }
    using space = softmax_op::space;
    using dispatcher = sy::dispatch_table<space, void(sy::op_args const&)>;
};

namespace {

// A row statistic of x: its shape with the last size 1 (rank 0 stays so).
at::Tensor row_statistic(at::Tensor const& x) {
    std::vector<c10::SymInt> shape = x.sym_sizes().vec();
    if (!shape.empty()) shape.back() = 1;
    return at::empty_symint(shape, x.options());
}

bool empty_rows(at::Tensor const& x) { return x.dim() > 0 && x.sym_size(-1) == 0; }

}  // namespace

at::Tensor softmax(at::Tensor const& x) {
    static auto const table = sy::dispatch_table_from_op<softmax_op>("softmax");
    if (empty_rows(x)) return at::empty_like(x);
    at::Tensor const max = row_statistic(x), sum = row_statistic(x);
    sy::op_args args("softmax", {{"x", x}, {"max", max}, {"sum", sum}});
    at::Tensor out = args.new_output("out");
    args.select(table)(args);
    return out;
}

at::Tensor softmax_backward(at::Tensor const& grad, at::Tensor const& y) {
    static auto const table = sy::dispatch_table_from_op<softmax_backward_op>("softmax_backward");
    sy::op_args args("softmax_backward", {{"grad", grad}, {"y", y}});
    args.same_dtype().same_shape();
    if (empty_rows(y)) return at::empty_like(y);
    at::Tensor const dot = row_statistic(y);
    sy::op_args full("softmax_backward", {{"grad", grad}, {"y", y}, {"dot", dot}});
    at::Tensor out = full.new_output("out");
    full.select(table)(full);
    return out;
}

TORCH_LIBRARY_FRAGMENT(switchyard_examples, m) {
    m.def("softmax(Tensor x) -> Tensor");
    m.def("softmax_backward(Tensor grad, Tensor y) -> Tensor");
    sy::register_kernel(m, "softmax", &softmax);
    sy::register_kernel(m, "softmax_backward", &softmax_backward);
}

}  // namespace switchyard_examples
