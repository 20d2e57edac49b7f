// softmax(x) along the last dimension, and its backward: the row-statistics
// example. transform_rows takes each row's max, then its sum of
// e = exp(x - max), and maps the row to e / sum, reading x once (the
// statistics stay in registers or cache, in float for f16 and bf16).
// The backward is y * (grad - sum(grad * y)). Written once for every float
// dtype on CPU and CUDA (cuda/softmax.cu); the derivatives are in
// derivatives.cpp.
#include <switchyard/switchyard.h>
#include <switchyard/torch.h>

namespace switchyard_examples {

namespace sy = switchyard;

struct softmax_op {
    template <typename Tag>
    static void op(Tag tag, sy::op_args const& args) {
        using C = sy::compute_t<Tag>;
        // exp_to: exp as accurate as the stored result needs (cheaper for f16 and bf16 on CUDA).
        auto const shifted_exp = [] SWITCHYARD_HOST_DEVICE(C x, C max) {
            return sy::exp_to<sy::storage_t<Tag>>(x - max);
        };
        // e is shifted_exp's value here (with_values()); one division per row, not per value.
        auto const normalized = [] SWITCHYARD_HOST_DEVICE(C, C e, C, C sum) { return e * (C(1) / sum); };
        auto const stats = sy::row_stats(sy::amax, sy::row_stat(sy::sum, shifted_exp).with_values());
        sy::transform_rows(tag, args["out"], stats, normalized, args["x"]);
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
        sy::transform_rows(tag, args["out"], sy::row_stats(sy::row_stat(sy::sum, product)), gradient, args["grad"],
                           args["y"]);
    }
    using space = softmax_op::space;
    using dispatcher = sy::dispatch_table<space, void(sy::op_args const&)>;
};

at::Tensor softmax(at::Tensor const& x) {
    static auto const table = sy::dispatch_table_from_op<softmax_op>("softmax");
    sy::op_args args("softmax", {{"x", x}});
    at::Tensor out = args.new_output("out");
    args.select(table)(args);
    return out;
}

at::Tensor softmax_backward(at::Tensor const& grad, at::Tensor const& y) {
    static auto const table = sy::dispatch_table_from_op<softmax_backward_op>("softmax_backward");
    sy::op_args args("softmax_backward", {{"grad", grad}, {"y", y}});
    args.same_dtype().same_shape();
    at::Tensor out = args.new_output("out");
    args.select(table)(args);
    return out;
}

TORCH_LIBRARY_FRAGMENT(switchyard_examples, m) {
    m.def("softmax(Tensor x) -> Tensor");
    m.def("softmax_backward(Tensor grad, Tensor y) -> Tensor");
    sy::register_kernel(m, "softmax", &softmax);
    sy::register_kernel(m, "softmax_backward", &softmax_backward);
}

}  // namespace switchyard_examples
