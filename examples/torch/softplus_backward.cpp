// softplus_backward: the gradient of softplus.cpp, grad * sigmoid(beta * x)
// (and grad where the forward returned x), written the same way.
#include <switchyard/switchyard.h>
#include <switchyard/torch.h>

#include "softplus_math.h"

namespace switchyard_examples {

struct softplus_backward_op {
    template <typename Tag>
    static void op(Tag tag, sy::op_args const& args, double beta, double threshold) {
        using C = sy::compute_t<Tag>;
        C const b(beta), t(threshold);
        auto const f = [=] SWITCHYARD_HOST_DEVICE(C grad, C x) { return softplus_grad_scalar(grad, x, b, t); };
        sy::transform(tag, args["grad_x"], f, args["grad"], args["x"]);
    }
    using space = sy::axes<sy::torch_build_device_axis, sy::torch_full_float_stype_axis>;
    using dispatcher = sy::dispatch_table<space, void(sy::op_args const&, double, double)>;
};

at::Tensor softplus_backward(at::Tensor const& grad, at::Tensor const& x, double beta, double threshold) {
    static auto const table = sy::dispatch_table_from_op<softplus_backward_op>("softplus_backward");
    sy::op_args args("softplus_backward", {{"grad", grad}, {"x", x}});
    args.same_dtype().same_shape();
    at::Tensor grad_x = args.new_output("grad_x");
    args.select(table)(args, args.scalar("beta", beta), args.scalar("threshold", threshold));
    return grad_x;
}

TORCH_LIBRARY_FRAGMENT(switchyard_examples, m) {
    m.def("softplus_backward(Tensor grad, Tensor x, float beta, float threshold) -> Tensor");
    sy::register_kernel(m, "softplus_backward", &softplus_backward);
}

}  // namespace switchyard_examples
