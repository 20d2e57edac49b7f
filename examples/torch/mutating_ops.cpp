// What the example ops that write their arguments (the in-place scale_ and
// lerp_, and softplus.out) need from PyTorch beyond their CPU and CUDA
// kernels, registered in C++ for every device:
//  - Autograd (torch.library.register_autograd refuses such ops). Without it
//    PyTorch's fallback let `y = w * 2; scale_(y, 3); y.sum().backward()`
//    give w.grad 2 instead of 6, let the ops overwrite a leaf that requires
//    grad, and let softplus.out write outside the graph.
//  - ADInplaceOrView: the written tensor's version counter moves.
//  - softplus.out into a negative view (torch._neg_view, x.conj().imag):
//    PyTorch's fallback for negative views cannot handle an out= overload
//    that returns nothing and aborted the process.
//
// Each in-place op is a torch::autograd::Function: forward redispatches
// below autograd (so the CPU, CUDA, Meta or functionalization kernel runs)
// and marks the tensor it wrote dirty, which bumps its version and rebases
// its history onto this node; backward is the derivative, itself
// differentiable. A leaf that requires grad (or a view of one) is refused
// before anything is written, with PyTorch's own message.
#include <ATen/TensorOperators.h>
#include <ATen/ops/empty.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/autograd.h>
#include <torch/library.h>

namespace switchyard_examples {

namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// The ops, called again through the dispatcher below the key being handled.
auto const& scale_op() {
    static auto const op = c10::Dispatcher::singleton()
                               .findSchemaOrThrow("switchyard_examples::scale_", "")
                               .typed<void(at::Tensor&, double)>();
    return op;
}
auto const& lerp_op() {
    static auto const op = c10::Dispatcher::singleton()
                               .findSchemaOrThrow("switchyard_examples::lerp_", "")
                               .typed<void(at::Tensor&, at::Tensor const&, double)>();
    return op;
}
auto const& softplus_out_op() {
    static auto const op = c10::Dispatcher::singleton()
                               .findSchemaOrThrow("switchyard_examples::softplus", "out")
                               .typed<void(at::Tensor const&, double, double, at::Tensor&)>();
    return op;
}

// x *= alpha: d/dx = alpha.
struct scale_inplace : torch::autograd::Function<scale_inplace> {
    static at::Tensor forward(AutogradContext* ctx, at::Tensor x, double alpha) {
        {
            at::AutoDispatchBelowADInplaceOrView below;
            scale_op().call(x, alpha);
        }
        ctx->saved_data["alpha"] = alpha;
        ctx->mark_dirty({x});
        return x;
    }
    static variable_list backward(AutogradContext* ctx, variable_list grads) {
        return {grads[0] * ctx->saved_data["alpha"].toDouble(), at::Tensor()};
    }
};

// a += weight * (b - a): d/da = 1 - weight, d/db = weight.
struct lerp_inplace : torch::autograd::Function<lerp_inplace> {
    static at::Tensor forward(AutogradContext* ctx, at::Tensor a, at::Tensor const& b, double weight) {
        {
            at::AutoDispatchBelowADInplaceOrView below;
            lerp_op().call(a, b, weight);
        }
        ctx->saved_data["weight"] = weight;
        ctx->mark_dirty({a});
        return a;
    }
    static variable_list backward(AutogradContext* ctx, variable_list grads) {
        double const weight = ctx->saved_data["weight"].toDouble();
        return {grads[0] * (1.0 - weight), grads[0] * weight, at::Tensor()};
    }
};

// What PyTorch's in-place ops check first (torch::autograd::check_inplace).
void check_writable(at::Tensor const& t) {
    if (!at::GradMode::is_enabled() || !t.requires_grad()) return;
    TORCH_CHECK(!t.is_leaf(), "a leaf Variable that requires grad is being used in an in-place operation.");
    TORCH_CHECK(!(t.is_view() && t._base().is_leaf()),
                "a view of a leaf Variable that requires grad is being used in an in-place operation.");
}

// softplus.out has no derivative, as PyTorch's out= functions have none: it
// refuses arguments that require grad instead of writing `out` outside the
// graph.
void softplus_out_autograd(at::Tensor const& x, double beta, double threshold, at::Tensor& out) {
    TORCH_CHECK(!at::GradMode::is_enabled() || !(x.requires_grad() || out.requires_grad()),
                "softplus.out: functions with out=... arguments don't support automatic differentiation, but one of "
                "the arguments requires grad.");
    at::AutoDispatchBelowAutograd below;  // not below ADInplaceOrView: out's version must move
    softplus_out_op().call(x, beta, threshold, out);
}

// softplus.out with negative views: the input is resolved (a negated copy),
// and a negative `out` gets the result through a plain temporary and copy_,
// which writes through the negative bit.
void softplus_out_resolving_negative(at::Tensor const& x, double beta, double threshold, at::Tensor& out) {
    at::Tensor const input = x.resolve_neg();
    if (!out.is_neg()) {
        softplus_out_op().call(input, beta, threshold, out);
        return;
    }
    at::Tensor result = at::empty(out.sizes(), out.options());
    softplus_out_op().call(input, beta, threshold, result);
    out.copy_(result);
}

// ADInplaceOrView: the written tensor's version moves, as PyTorch's in-place
// and out= ops do (a custom op's default there does nothing), so autograd
// notices a tensor it saved being overwritten, in inference mode too.
void scale_bumping_version(at::Tensor& x, double alpha) {
    {
        at::AutoDispatchBelowADInplaceOrView below;
        scale_op().call(x, alpha);
    }
    torch::autograd::impl::bump_version(x);
}
void lerp_bumping_version(at::Tensor& a, at::Tensor const& b, double weight) {
    {
        at::AutoDispatchBelowADInplaceOrView below;
        lerp_op().call(a, b, weight);
    }
    torch::autograd::impl::bump_version(a);
}
void softplus_out_bumping_version(at::Tensor const& x, double beta, double threshold, at::Tensor& out) {
    {
        at::AutoDispatchBelowADInplaceOrView below;
        softplus_out_op().call(x, beta, threshold, out);
    }
    torch::autograd::impl::bump_version(out);
}

void scale_autograd(at::Tensor& x, double alpha) {
    check_writable(x);
    scale_inplace::apply(x, alpha);
}
void lerp_autograd(at::Tensor& a, at::Tensor const& b, double weight) {
    check_writable(a);
    lerp_inplace::apply(a, b, weight);
}

}  // namespace

TORCH_LIBRARY_IMPL(switchyard_examples, Autograd, m) {
    m.impl("scale_", &scale_autograd);
    m.impl("lerp_", &lerp_autograd);
    m.impl("softplus.out", &softplus_out_autograd);
}

TORCH_LIBRARY_IMPL(switchyard_examples, ADInplaceOrView, m) {
    m.impl("scale_", &scale_bumping_version);
    m.impl("lerp_", &lerp_bumping_version);
    m.impl("softplus.out", &softplus_out_bumping_version);
}

TORCH_LIBRARY_IMPL(switchyard_examples, Negative, m) { m.impl("softplus.out", &softplus_out_resolving_negative); }

}  // namespace switchyard_examples
