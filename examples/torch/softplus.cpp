// softplus: one scalar function (softplus_math.h), one op for every float dtype, layout and
// rank, on CPU and, compiled by nvcc (cuda/softplus.cu), CUDA. Backward: softplus_backward.cpp.
#include <switchyard/switchyard.h>
#include <switchyard/torch.h>
#include "softplus_math.h"

namespace switchyard_examples {

struct softplus_op {
    template <typename Tag>
    static void op(Tag tag, sy::op_args const& args, double beta, double threshold) {
        using C = sy::compute_t<Tag>;
        C const b(beta), inv_b(1.0 / beta), t(threshold);
        auto const f = [=] SWITCHYARD_HOST_DEVICE(C x) { return softplus_scalar<sy::storage_t<Tag>>(x, b, inv_b, t); };
        sy::transform(tag, args["out"], f, args["x"]);
    }
    using space = sy::axes<sy::torch_build_device_axis, sy::torch_full_float_stype_axis>;
    using dispatcher = sy::dispatch_table<space, void(sy::op_args const&, double, double)>;
};

void softplus_out(at::Tensor const& x, double beta, double threshold, at::Tensor& out) {
    static auto const table = sy::dispatch_table_from_op<softplus_op>("softplus");
    sy::op_args args("softplus", {{"x", x}});
    args.output("out", out).select(table)(args, args.scalar("beta", beta), args.scalar("threshold", threshold));
}

at::Tensor softplus(at::Tensor const& x, double beta, double threshold) {
    at::Tensor out = at::empty_like(x);
    softplus_out(x, beta, threshold, out);
    return out;
}

TORCH_LIBRARY_FRAGMENT(switchyard_examples, m) {
    m.def("softplus(Tensor x, float beta=1, float threshold=20) -> Tensor");
    m.def("softplus.out(Tensor x, float beta=1, float threshold=20, *, Tensor(a!) out) -> ()");
    sy::register_kernel(m, "softplus", &softplus);
    sy::register_kernel(m, "softplus.out", &softplus_out);
}

}  // namespace switchyard_examples
