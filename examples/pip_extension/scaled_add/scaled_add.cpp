// x + alpha * y with y broadcast against x, every float dtype, written once.
#include <switchyard/switchyard.h>
#include <switchyard/torch.h>

namespace sy = switchyard;

struct scaled_add_op {
    template <typename Tag>
    static void op(Tag tag, sy::op_args const& args, double alpha) {
        using C = sy::compute_t<Tag>;
        auto const a = static_cast<C>(alpha);
        sy::transform(
            tag, args["out"], [=](C x, C y) { return x + a * y; }, args["x"], args["y"]);
    }
    using space = sy::axes<sy::torch_build_device_axis, sy::torch_full_float_stype_axis>;
    using dispatcher = sy::dispatch_table<space, void(sy::op_args const&, double)>;
};

at::Tensor scaled_add(at::Tensor const& x, at::Tensor const& y, double alpha) {
    static auto const table = sy::dispatch_table_from_op<scaled_add_op>("scaled_add");
    sy::op_args args("scaled_add", {{"x", x}, {"y", y}});
    args.same_dtype();
    at::Tensor out = args.new_output("out");
    args.select(table)(args, args.scalar("alpha", alpha));
    return out;
}

TORCH_LIBRARY(scaled_add, m) {
    m.def("scaled_add(Tensor x, Tensor y, float alpha=1) -> Tensor");
    sy::register_kernel(m, "scaled_add", &scaled_add);
}
