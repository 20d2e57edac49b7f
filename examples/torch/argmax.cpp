// argmax(x, dim=None, keepdim=False): the int64 index of the largest value,
// along one dimension or over all of them (the row-major index), as
// torch.argmax: the first of equal values, the first NaN if there is one
// (for the float dtypes, which are the ones it registers).
// sy::argmax folds (value, index) pairs into an int64 output whatever x's
// dtype; the order of the fold never changes which index wins. Compiled by
// nvcc (cuda/argmax.cu) it runs on CUDA as well, and in a Metal build on MPS.
#include <ATen/ops/empty.h>
#include <c10/core/WrapDimMinimal.h>
#include <switchyard/switchyard.h>
#include <switchyard/torch.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace switchyard_examples {

namespace sy = switchyard;

struct argmax_op {
    template <typename Tag>
    static void op(Tag tag, sy::op_args const& args, sy::dims const& over) {
        sy::reduce(tag, args["out"], over, sy::argmax, args["x"]);
    }
    using space = sy::axes<sy::torch_build_device_axis, sy::torch_full_float_stype_axis>;
    using dispatcher = sy::dispatch_table<space, void(sy::op_args const&, sy::dims const&)>;
};

at::Tensor argmax(at::Tensor const& x, std::optional<std::int64_t> dim, bool keepdim) {
    static auto const table = sy::dispatch_table_from_op<argmax_op>("argmax");
    std::vector<c10::SymInt> shape = x.sym_sizes().vec();
    if (dim) {
        std::int64_t const d = c10::maybe_wrap_dim(*dim, x.dim());
        TORCH_CHECK_INDEX(x.dim() == 0 || shape[d] != 0, "argmax: dimension " + std::to_string(d) + " of x has size 0");
        if (x.dim() > 0 && keepdim) shape[d] = 1;
        if (x.dim() > 0 && !keepdim) shape.erase(shape.begin() + d);
    } else {
        TORCH_CHECK_INDEX(x.sym_numel() != 0, "argmax: x has no elements; pass a dim of non-zero size");
        shape.assign(keepdim ? shape.size() : 0, 1);
    }
    at::Tensor out = at::empty_symint(shape, x.options().dtype(at::kLong));
    sy::op_args args("argmax", {{"x", x}, {"out", out}});
    args.select(table)(args, dim ? sy::dims{*dim} : sy::all_dims);
    return out;
}

TORCH_LIBRARY_FRAGMENT(switchyard_examples, m) {
    m.def("argmax(Tensor x, int? dim=None, bool keepdim=False) -> Tensor");
    sy::register_kernel(m, "argmax", &argmax);
}

}  // namespace switchyard_examples
