// sumsq(x) = the sum of x * x over the last dimension: the reduction
// example. transform_reduce maps each value, folds the results with sy::sum
// in float for f16 and bf16, and writes one value per row; rows, strides and
// the thread split are the library's. Compiled by nvcc (cuda/sumsq.cu) it
// runs on CUDA as well. Its derivative is in derivatives.cpp.
#include <ATen/ops/empty.h>
#include <switchyard/switchyard.h>
#include <switchyard/torch.h>

#include <vector>

namespace switchyard_examples {

namespace sy = switchyard;

struct sumsq_op {
    template <typename Tag>
    static void op(Tag tag, sy::op_args const& args) {
        using C = sy::compute_t<Tag>;
        auto const square = [] SWITCHYARD_HOST_DEVICE(C v) { return v * v; };
        sy::transform_reduce(tag, args["out"], sy::dims{-1}, sy::sum, square, args["x"]);
    }
    using space = sy::axes<sy::torch_build_device_axis, sy::torch_full_float_stype_axis>;
    using dispatcher = sy::dispatch_table<space, void(sy::op_args const&)>;
};

at::Tensor sumsq(at::Tensor const& x) {
    static auto const table = sy::dispatch_table_from_op<sumsq_op>("sumsq");
    std::vector<c10::SymInt> shape = x.sym_sizes().vec();
    if (!shape.empty()) shape.pop_back();
    at::Tensor out = at::empty_symint(shape, x.options());
    sy::op_args args("sumsq", {{"x", x}, {"out", out}});
    args.select(table)(args);
    return out;
}

TORCH_LIBRARY_FRAGMENT(switchyard_examples, m) {
    m.def("sumsq(Tensor x) -> Tensor");
    sy::register_kernel(m, "sumsq", &sumsq);
}

}  // namespace switchyard_examples
