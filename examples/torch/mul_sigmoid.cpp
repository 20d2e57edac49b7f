// mul_sigmoid(x, gate) = x * sigmoid(gate), gate broadcast against x by
// PyTorch's rules: per column ([4096, 1024] and [1024]), per row ([4096, 1]),
// a scalar, or the same shape. The broadcasting example: each operand is
// read by its own layout, and nothing in the op says how. sy::mapped marks
// sigmoid as work on the gate alone, so a broadcast gate's sigmoid runs once
// per gate element, not once per element of x (docs/transform.md).
#include <switchyard/switchyard.h>
#include <switchyard/torch.h>

namespace switchyard_examples {

namespace sy = switchyard;

struct mul_sigmoid_op {
    template <typename Tag>
    static void op(Tag tag, sy::op_args const& args) {
        using C = sy::compute_t<Tag>;
        auto const sigmoid = [] SWITCHYARD_HOST_DEVICE(C gate) { return sy::sigmoid_to<sy::storage_t<Tag>>(gate); };
        auto const mul = [] SWITCHYARD_HOST_DEVICE(C x, C s) { return x * s; };
        sy::transform(tag, args["out"], mul, args["x"], sy::mapped(args["gate"], sigmoid));
    }
    using space = sy::axes<sy::torch_build_device_axis, sy::torch_full_float_stype_axis>;
    using dispatcher = sy::dispatch_table<space, void(sy::op_args const&)>;
};

at::Tensor mul_sigmoid(at::Tensor const& x, at::Tensor const& gate) {
    static auto const table = sy::dispatch_table_from_op<mul_sigmoid_op>("mul_sigmoid");
    sy::op_args args("mul_sigmoid", {{"x", x}, {"gate", gate}});
    args.same_dtype();
    at::Tensor out = args.new_output("out");
    args.select(table)(args);
    return out;
}

TORCH_LIBRARY_FRAGMENT(switchyard_examples, m) {
    m.def("mul_sigmoid(Tensor x, Tensor gate) -> Tensor");
    sy::register_kernel(m, "mul_sigmoid", &mul_sigmoid);
}

}  // namespace switchyard_examples
