// softplus: the showcase. One scalar function, one tag-constrained impl, and
// every float dtype, both contiguities and any rank on the CPU, and on CUDA
// when nvcc compiles this file (cuda/softplus.cu). No device-, layout- or
// rank-specific code.
#include <switchyard/switchyard.h>
#include <switchyard/torch.h>

#include "softplus_math.h"

#include <ATen/ops/empty_like.h>
#include <torch/library.h>

namespace sy = switchyard;

namespace switchyard_examples {

struct softplus_op {
    template <typename Tag>
    requires sy::with_type<Tag, at::DeviceType> && sy::with_type<Tag, at::ScalarType> &&
        sy::with_type<Tag, sy::contiguity>
    static void op(Tag tag, sy::op_args const& args, double beta, double threshold) {
        constexpr auto dev = sy::tag_get<at::DeviceType>(Tag{});
        constexpr auto stype = sy::tag_get<at::ScalarType>(Tag{});
        constexpr auto contig = sy::tag_get<sy::contiguity>(Tag{});
        using scalar_t = sy::torch_scalar_cpp_type_t<stype>;
        using compute_t = sy::torch_compute_type_t<stype>;

        auto const order = args.order();
        sy::flat_in<dev, stype, contig> const in(args.ref(0), order);
        sy::flat_out<dev, stype, contig> const out(args.ref(1), order);
        auto const b = static_cast<compute_t>(beta), inv_b = static_cast<compute_t>(1.0 / beta),
                   t = static_cast<compute_t>(threshold);
        sy::for_each(tag, out.size(), [=] SWITCHYARD_HOST_DEVICE(Tag, sy::flat_index i) {
            out[i] = softplus_scalar<scalar_t, compute_t>(in[i], b, inv_b, t);
        });
    }

    using space = sy::axes<sy::torch_build_device_axis, sy::torch_full_float_stype_axis, sy::full_contiguity_axis>;
    using subspaces = sy::coverage<space>;
    using dispatcher = sy::dispatch_table<space, void(sy::op_args const&, double, double)>;
};

struct softplus_backward_op {
    template <typename Tag>
    requires sy::with_type<Tag, at::DeviceType> && sy::with_type<Tag, at::ScalarType> &&
        sy::with_type<Tag, sy::contiguity>
    static void op(Tag tag, sy::op_args const& args, double beta, double threshold) {
        constexpr auto dev = sy::tag_get<at::DeviceType>(Tag{});
        constexpr auto stype = sy::tag_get<at::ScalarType>(Tag{});
        constexpr auto contig = sy::tag_get<sy::contiguity>(Tag{});
        using scalar_t = sy::torch_scalar_cpp_type_t<stype>;
        using compute_t = sy::torch_compute_type_t<stype>;

        auto const order = args.order();
        sy::flat_in<dev, stype, contig> const grad(args.ref(0), order);
        sy::flat_in<dev, stype, contig> const x(args.ref(1), order);
        sy::flat_out<dev, stype, contig> const out(args.ref(2), order);
        auto const b = static_cast<compute_t>(beta), t = static_cast<compute_t>(threshold);
        sy::for_each(tag, out.size(), [=] SWITCHYARD_HOST_DEVICE(Tag, sy::flat_index i) {
            out[i] = softplus_grad_scalar<scalar_t, compute_t>(grad[i], x[i], b, t);
        });
    }

    using space = softplus_op::space;
    using subspaces = softplus_op::subspaces;
    using dispatcher = softplus_op::dispatcher;
};

// Mutating ops return nothing: torch.compile's functionalization does not
// support custom ops whose outputs alias their inputs.
void softplus_out(at::Tensor const& x, double beta, double threshold, at::Tensor& out) {
    static auto const table = sy::dispatch_table_from_op<softplus_op>("softplus");
    sy::op_args const args("softplus", {{"x", x}, {"out", out}});
    args.same_dtype().same_shape().no_overlap();
    table.select(args.dispatch_set())(args, beta, threshold);
}

at::Tensor softplus(at::Tensor const& x, double beta, double threshold) {
    at::Tensor out = at::empty_like(x);
    softplus_out(x, beta, threshold, out);
    return out;
}

at::Tensor softplus_backward(at::Tensor const& grad, at::Tensor const& x, double beta, double threshold) {
    static auto const table = sy::dispatch_table_from_op<softplus_backward_op>("softplus_backward");
    at::Tensor out = at::empty_like(x);
    sy::op_args const args("softplus_backward", {{"grad", grad}, {"x", x}, {"out", out}});
    args.same_dtype().same_shape();
    table.select(args.dispatch_set())(args, beta, threshold);
    return out;
}

TORCH_LIBRARY_FRAGMENT(switchyard_examples, m) {
    m.def("softplus(Tensor x, float beta=1, float threshold=20) -> Tensor");
    m.def("softplus.out(Tensor x, float beta=1, float threshold=20, *, Tensor(a!) out) -> ()");
    m.def("softplus_backward(Tensor grad, Tensor x, float beta, float threshold) -> Tensor");
}

// The same kernels serve every device this file was compiled for.
static void register_softplus_kernels(torch::Library& m) {
    m.impl("softplus", &softplus);
    m.impl("softplus.out", &softplus_out);
    m.impl("softplus_backward", &softplus_backward);
}

TORCH_LIBRARY_IMPL(switchyard_examples, CPU, m) { register_softplus_kernels(m); }
#if defined(__CUDACC__)
TORCH_LIBRARY_IMPL(switchyard_examples, CUDA, m) { register_softplus_kernels(m); }
#endif

}  // namespace switchyard_examples
