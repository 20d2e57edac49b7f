// softplus on PyTorch's stable ABI (STABLE_TORCH_LIBRARY, torch/csrc/stable):
// one binary that every PyTorch from 2.11 on loads (built with
// TORCH_TARGET_VERSION 2.11), whatever version compiled it. It uses
// switchyard's core and transform, not the torch adapter, which is written
// against ATen's C++ API (not stable): the operands are made here from the
// stable tensors' pointers, sizes and strides. CPU only; see docs/torch.md
// for what the adapter would need.
#include <torch/csrc/stable/library.h>
#include <torch/csrc/stable/ops.h>
#include <torch/csrc/stable/tensor.h>
#include <torch/headeronly/core/ScalarType.h>
#include <torch/headeronly/util/Exception.h>

#include <switchyard/switchyard.h>

#include "../torch/softplus_math.h"

namespace sy = switchyard;
using torch::headeronly::ScalarType;

namespace {

sy::dtype operand_dtype(ScalarType t, char const* name) {
    switch (t) {
        case ScalarType::Half: return sy::dtype::f16;
        case ScalarType::BFloat16: return sy::dtype::bf16;
        case ScalarType::Float: return sy::dtype::f32;
        case ScalarType::Double: return sy::dtype::f64;
        default:
            STD_TORCH_CHECK(false, "softplus: argument '", name, "' has dtype ", torch::headeronly::toString(t),
                            "; softplus supports Half, BFloat16, Float and Double");
    }
}

sy::strided_ref operand(torch::stable::Tensor const& t, char const* name) {
    STD_TORCH_CHECK(t.is_cpu(), "softplus: argument '", name,
                    "' is not a CPU tensor; this stable-ABI example is CPU only");
    return sy::strided_ref::make(t.data_ptr(), operand_dtype(t.scalar_type(), name), sy::device_kind::cpu,
                                 t.sizes().data(), t.strides().data(), t.dim(), name);
}

struct softplus_op {
    template <typename Tag>
    static void op(Tag tag, sy::strided_ref const& out, sy::strided_ref const& x, double beta, double threshold) {
        using C = sy::compute_t<Tag>;
        C const b(beta), inv_b(1.0 / beta), t(threshold);
        sy::transform(
            tag, out, [=](C v) { return switchyard_examples::softplus_scalar<sy::storage_t<Tag>>(v, b, inv_b, t); }, x);
    }
    using space = sy::axes<sy::axis<sy::device_kind::cpu>, sy::float_dtype_axis>;
    using dispatcher = sy::dispatch_table<space, void(sy::strided_ref const&, sy::strided_ref const&, double, double)>;
};

torch::stable::Tensor softplus(torch::stable::Tensor x, double beta, double threshold) {
    static auto const table = sy::dispatch_table_from_op<softplus_op>("softplus");
    sy::strided_ref const in = operand(x, "x");
    torch::stable::Tensor out = torch::stable::empty_like(x);
    table.select(sy::dispatch_set{in.device, in.type})(operand(out, "out"), in, beta, threshold);
    return out;
}

}  // namespace

STABLE_TORCH_LIBRARY(switchyard_stable, m) { m.def("softplus(Tensor x, float beta=1, float threshold=20) -> Tensor"); }

STABLE_TORCH_LIBRARY_IMPL(switchyard_stable, CPU, m) { m.impl("softplus", TORCH_BOX(&softplus)); }
