// The derivatives of softplus, softplus_backward, mul_sigmoid, sumsq and softmax, registered
// in C++ on the Autograd key for every device: a library loaded with
// torch.ops.load_library alone (no Python package) trains, double-backwards,
// runs under torch.autograd.forward_ad and passes torch.compile.
//  - Reverse mode: a torch::autograd::Function whose forward redispatches
//    below autograd (to the CPU, CUDA or Meta kernel) and whose backward
//    calls differentiable ops, so second derivatives are right.
//  - Forward mode: C++ Functions have no jvp, so each op gives the Function
//    the primals and sets the result's tangent itself, as PyTorch's generated
//    autograd kernels do.
#include <ATen/TensorOperators.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/ops/sigmoid.h>
#include <ATen/ops/sum.h>
#include <ATen/ops/where.h>
#include <ATen/ops/zeros_like.h>
#include <torch/autograd.h>
#include <torch/library.h>

#include <algorithm>
#include <initializer_list>
#include <vector>

namespace switchyard_examples {

namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

template <typename Signature>
c10::TypedOperatorHandle<Signature> find_op(char const* name) {
    return c10::Dispatcher::singleton().findSchemaOrThrow(name, "").typed<Signature>();
}
at::Tensor softplus(at::Tensor const& x, double beta, double threshold) {
    static auto const op = find_op<at::Tensor(at::Tensor const&, double, double)>("switchyard_examples::softplus");
    return op.call(x, beta, threshold);
}
at::Tensor softplus_backward(at::Tensor const& grad, at::Tensor const& x, double beta, double threshold) {
    static auto const op = find_op<at::Tensor(at::Tensor const&, at::Tensor const&, double, double)>(
        "switchyard_examples::softplus_backward");
    return op.call(grad, x, beta, threshold);
}
at::Tensor mul_sigmoid(at::Tensor const& x, at::Tensor const& gate) {
    static auto const op =
        find_op<at::Tensor(at::Tensor const&, at::Tensor const&)>("switchyard_examples::mul_sigmoid");
    return op.call(x, gate);
}
at::Tensor sumsq(at::Tensor const& x) {
    static auto const op = find_op<at::Tensor(at::Tensor const&)>("switchyard_examples::sumsq");
    return op.call(x);
}

at::Tensor softmax(at::Tensor const& x) {
    static auto const op = find_op<at::Tensor(at::Tensor const&)>("switchyard_examples::softmax");
    return op.call(x);
}
at::Tensor softmax_backward(at::Tensor const& grad, at::Tensor const& y) {
    static auto const op =
        find_op<at::Tensor(at::Tensor const&, at::Tensor const&)>("switchyard_examples::softmax_backward");
    return op.call(grad, y);
}

// Forward-mode AD has one level (torch.autograd.forward_ad.dual_level).
constexpr std::uint64_t forward_level = 0;
at::Tensor tangent(at::Tensor const& t) { return t._fw_grad(forward_level); }
at::Tensor primal(at::Tensor const& t) { return tangent(t).defined() ? t._fw_primal(forward_level) : t; }

// The op's tensor arguments as given, tangents included. Each Function takes
// their primals as its inputs (it has no jvp) but saves these, so that its
// backward's result gets a tangent too (forward-over-reverse, as in
// hessian-vector products). Not a tensor, so not an input of the Function.
struct as_given {
    std::vector<at::Tensor> tensors;
};

// a + b where either may be undefined (no tangent).
at::Tensor sum_defined(at::Tensor const& a, at::Tensor const& b) {
    if (!a.defined()) return b;
    if (!b.defined()) return a;
    return a + b;
}

// PyTorch refuses C++ Functions under torch.func's grad and jvp transforms
// (which wrap tensors at levels of their own) without naming the op: refuse
// them by name instead.
void refuse_func_transforms(char const* op, std::initializer_list<at::Tensor const*> args) {
    for (at::Tensor const* t : args)
        TORCH_CHECK_NOT_IMPLEMENTED(
            !t->key_set().has(c10::DispatchKey::FuncTorchGradWrapper), "switchyard_examples::", op,
            ": torch.func.grad, vjp, jvp, jacrev and jacfwd are not supported by this operator (its derivatives are "
            "C++ autograd Functions, which torch.func transforms do not support); use torch.autograd.grad or "
            "torch.autograd.forward_ad, which support first and second derivatives, or torch.func.vmap");
}

// Where no argument needs a derivative, the op runs below autograd without a
// Function (which torch.func.vmap could not pass through).
bool needs_derivatives(std::initializer_list<at::Tensor const*> args) {
    return std::any_of(args.begin(), args.end(), [](at::Tensor const* t) {
        return (at::GradMode::is_enabled() && t->requires_grad()) || tangent(*t).defined();
    });
}

// d/dx of softplus_backward(grad, x) = grad * sigmoid(beta x): grad * beta *
// s * (1 - s), and 0 above the threshold (where the forward returned x).
at::Tensor softplus_second_derivative(at::Tensor const& grad, at::Tensor const& x, double beta, double threshold) {
    at::Tensor const bx = x * beta;
    at::Tensor const s = at::sigmoid(bx);
    return at::where(bx > threshold, at::zeros_like(s), grad * beta * s * (1 - s));
}

struct softplus_function : torch::autograd::Function<softplus_function> {
    static at::Tensor forward(AutogradContext* ctx, at::Tensor const& x, double beta, double threshold,
                              as_given const& given) {
        ctx->save_for_backward(given.tensors);
        ctx->saved_data["beta"] = beta;
        ctx->saved_data["threshold"] = threshold;
        at::AutoDispatchBelowADInplaceOrView below;
        return softplus(x, beta, threshold);
    }
    static variable_list backward(AutogradContext* ctx, variable_list grads) {
        at::Tensor const x = ctx->get_saved_variables()[0];
        return {
            softplus_backward(grads[0], x, ctx->saved_data["beta"].toDouble(), ctx->saved_data["threshold"].toDouble()),
            at::Tensor(), at::Tensor(), at::Tensor()};
    }
};

struct softplus_backward_function : torch::autograd::Function<softplus_backward_function> {
    static at::Tensor forward(AutogradContext* ctx, at::Tensor const& grad, at::Tensor const& x, double beta,
                              double threshold, as_given const& given) {
        ctx->save_for_backward(given.tensors);
        ctx->saved_data["beta"] = beta;
        ctx->saved_data["threshold"] = threshold;
        at::AutoDispatchBelowADInplaceOrView below;
        return softplus_backward(grad, x, beta, threshold);
    }
    static variable_list backward(AutogradContext* ctx, variable_list grads) {
        variable_list const saved = ctx->get_saved_variables();
        double const beta = ctx->saved_data["beta"].toDouble(), threshold = ctx->saved_data["threshold"].toDouble();
        at::Tensor grad_grad, grad_x;
        if (ctx->needs_input_grad(0)) grad_grad = softplus_backward(grads[0], saved[1], beta, threshold);
        if (ctx->needs_input_grad(1))
            grad_x = grads[0] * softplus_second_derivative(saved[0], saved[1], beta, threshold);
        return {grad_grad, grad_x, at::Tensor(), at::Tensor(), at::Tensor()};
    }
};

// d/dx = sigmoid(gate) (the op itself, applied to the gradient), d/dgate =
// x * s * (1 - s); each summed over the dimensions it was broadcast along.
struct mul_sigmoid_function : torch::autograd::Function<mul_sigmoid_function> {
    static at::Tensor forward(AutogradContext* ctx, at::Tensor const& x, at::Tensor const& gate,
                              as_given const& given) {
        ctx->save_for_backward(given.tensors);
        at::AutoDispatchBelowADInplaceOrView below;
        return mul_sigmoid(x, gate);
    }
    static variable_list backward(AutogradContext* ctx, variable_list grads) {
        variable_list const saved = ctx->get_saved_variables();
        at::Tensor const &x = saved[0], &gate = saved[1];
        at::Tensor grad_x, grad_gate;
        if (ctx->needs_input_grad(0)) grad_x = mul_sigmoid(grads[0], gate).sum_to_size_symint(x.sym_sizes());
        if (ctx->needs_input_grad(1)) {
            at::Tensor const s = at::sigmoid(gate);
            grad_gate = (grads[0] * x * s * (1 - s)).sum_to_size_symint(gate.sym_sizes());
        }
        return {grad_x, grad_gate, at::Tensor()};
    }
};

// d/dx sum(x * x, -1) = 2 x, times the row's gradient.
at::Tensor sumsq_derivative(at::Tensor const& grad, at::Tensor const& x) {
    return 2 * x * (x.dim() > 0 ? grad.unsqueeze(-1) : grad);
}

struct sumsq_function : torch::autograd::Function<sumsq_function> {
    static at::Tensor forward(AutogradContext* ctx, at::Tensor const& x, as_given const& given) {
        ctx->save_for_backward(given.tensors);
        at::AutoDispatchBelowADInplaceOrView below;
        return sumsq(x);
    }
    static variable_list backward(AutogradContext* ctx, variable_list grads) {
        return {sumsq_derivative(grads[0], ctx->get_saved_variables()[0]), at::Tensor()};
    }
};

// d softmax = y * (d - sum(d * y, -1)): softmax_backward's formula. Where a
// derivative of the derivative is wanted (create_graph), ATen ops compute it
// differentiably; else switchyard's softmax_backward kernel does.
at::Tensor softmax_derivative(at::Tensor const& grad, at::Tensor const& y) {
    if (at::GradMode::is_enabled() && (grad.requires_grad() || y.requires_grad()))
        return y * (grad - at::sum(grad * y, -1, true));
    at::AutoDispatchBelowADInplaceOrView below;
    return softmax_backward(grad, y);
}

// Saves x as given (with its tangent) and the output y. A plain backward
// uses y; one that builds a graph (double backward, forward-over-reverse)
// recomputes y from x through the op, so y has history and a tangent (a
// saved output has no tangent: it is saved before the op sets it).
struct softmax_function : torch::autograd::Function<softmax_function> {
    static at::Tensor forward(AutogradContext* ctx, at::Tensor const& x, as_given const& given) {
        at::Tensor y;
        {
            at::AutoDispatchBelowADInplaceOrView below;
            y = softmax(x);
        }
        ctx->save_for_backward({given.tensors[0], y});
        return y;
    }
    static variable_list backward(AutogradContext* ctx, variable_list grads) {
        variable_list const saved = ctx->get_saved_variables();
        at::Tensor const y = at::GradMode::is_enabled() ? softmax(saved[0]) : saved[1];
        return {softmax_derivative(grads[0], y), at::Tensor()};
    }
};

at::Tensor softplus_autograd(at::Tensor const& x, double beta, double threshold) {
    refuse_func_transforms("softplus", {&x});
    if (!needs_derivatives({&x})) {
        at::AutoDispatchBelowADInplaceOrView below;
        return softplus(x, beta, threshold);
    }
    at::Tensor const x0 = primal(x);
    at::Tensor out = softplus_function::apply(x0, beta, threshold, as_given{{x}});
    if (at::Tensor const dx = tangent(x); dx.defined())
        out._set_fw_grad(softplus_backward(dx, x0, beta, threshold), forward_level, false);
    return out;
}

at::Tensor softplus_backward_autograd(at::Tensor const& grad, at::Tensor const& x, double beta, double threshold) {
    refuse_func_transforms("softplus_backward", {&grad, &x});
    if (!needs_derivatives({&grad, &x})) {
        at::AutoDispatchBelowADInplaceOrView below;
        return softplus_backward(grad, x, beta, threshold);
    }
    at::Tensor const grad0 = primal(grad), x0 = primal(x);
    at::Tensor out = softplus_backward_function::apply(grad0, x0, beta, threshold, as_given{{grad, x}});
    at::Tensor const d_grad = tangent(grad), dx = tangent(x);
    at::Tensor const d_out =
        sum_defined(d_grad.defined() ? softplus_backward(d_grad, x0, beta, threshold) : at::Tensor(),
                    dx.defined() ? dx * softplus_second_derivative(grad0, x0, beta, threshold) : at::Tensor());
    if (d_out.defined()) out._set_fw_grad(d_out, forward_level, false);
    return out;
}

at::Tensor mul_sigmoid_autograd(at::Tensor const& x, at::Tensor const& gate) {
    refuse_func_transforms("mul_sigmoid", {&x, &gate});
    if (!needs_derivatives({&x, &gate})) {
        at::AutoDispatchBelowADInplaceOrView below;
        return mul_sigmoid(x, gate);
    }
    at::Tensor const x0 = primal(x), gate0 = primal(gate);
    at::Tensor out = mul_sigmoid_function::apply(x0, gate0, as_given{{x, gate}});
    at::Tensor const dx = tangent(x), d_gate = tangent(gate);
    if (dx.defined() || d_gate.defined()) {
        at::Tensor const s = at::sigmoid(gate0);
        // Either term has the result's (broadcast) shape.
        out._set_fw_grad(sum_defined(dx.defined() ? dx * s : at::Tensor(),
                                     d_gate.defined() ? x0 * s * (1 - s) * d_gate : at::Tensor()),
                         forward_level, false);
    }
    return out;
}

at::Tensor sumsq_autograd(at::Tensor const& x) {
    refuse_func_transforms("sumsq", {&x});
    if (!needs_derivatives({&x})) {
        at::AutoDispatchBelowADInplaceOrView below;
        return sumsq(x);
    }
    at::Tensor const x0 = primal(x);
    at::Tensor out = sumsq_function::apply(x0, as_given{{x}});
    if (at::Tensor const dx = tangent(x); dx.defined())
        out._set_fw_grad(2 * at::sum(x0 * dx, -1), forward_level, false);
    return out;
}

at::Tensor softmax_autograd(at::Tensor const& x) {
    refuse_func_transforms("softmax", {&x});
    if (!needs_derivatives({&x})) {
        at::AutoDispatchBelowADInplaceOrView below;
        return softmax(x);
    }
    at::Tensor out = softmax_function::apply(primal(x), as_given{{x}});
    if (at::Tensor const dx = tangent(x); dx.defined())
        out._set_fw_grad(softmax_derivative(dx, out), forward_level, false);
    return out;
}

}  // namespace

TORCH_LIBRARY_IMPL(switchyard_examples, Autograd, m) {
    m.impl("softplus", &softplus_autograd);
    m.impl("softplus_backward", &softplus_backward_autograd);
    m.impl("mul_sigmoid", &mul_sigmoid_autograd);
    m.impl("sumsq", &sumsq_autograd);
    m.impl("softmax", &softmax_autograd);
}

}  // namespace switchyard_examples
