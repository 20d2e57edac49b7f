"""PyTorch ops written with switchyard.

Importing the package loads the C++ extension, which registers the ops as
torch.ops.switchyard_examples.*; this module adds what torch.compile and
autograd need (fake implementations and the derivatives of softplus and
mul_sigmoid; the ops that write their arguments have theirs in C++,
examples/torch/mutating_ops.cpp) and short Python wrappers.
"""

import torch

from . import _C  # noqa: F401  (registers the C++ ops)

ops = torch.ops.switchyard_examples


def softplus(x, beta=1.0, threshold=20.0, *, out=None):
    """torch.nn.functional.softplus, computed by switchyard."""
    if out is not None:
        ops.softplus.out(x, beta, threshold, out=out)
        return out
    return ops.softplus(x, beta, threshold)


def relu(x):
    return ops.relu(x)


def mul_sigmoid(x, gate):
    """x * torch.sigmoid(gate), gate broadcast against x."""
    return ops.mul_sigmoid(x, gate)


def scale_cast(x, alpha, dtype=None):
    return ops.scale_cast(x, alpha, dtype)


def scale_(x, alpha):
    """x *= alpha, in place; returns x."""
    ops.scale_(x, alpha)
    return x


# Fake (meta) implementations: shapes and dtypes only, for torch.compile.
# They also run when one argument is a meta tensor and another is not (the
# Meta key wins the dispatch), so they check devices as the C++ ops do:
# otherwise a cpu out= would be left unwritten, or a cpu result returned
# uninitialized.
def _same_device(op, **tensors):
    (first, first_tensor), *rest = tensors.items()
    for name, t in rest:
        torch._check(
            t.device == first_tensor.device,
            lambda: f"{op}: argument '{name}' is on {t.device} but '{first}' is on {first_tensor.device}",
        )


@torch.library.register_fake("switchyard_examples::softplus")
def _softplus_fake(x, beta=1.0, threshold=20.0):
    return torch.empty_like(x)


@torch.library.register_fake("switchyard_examples::softplus.out")
def _softplus_out_fake(x, beta=1.0, threshold=20.0, *, out):
    _same_device("softplus", x=x, out=out)
    if out.shape != x.shape:  # resized as the C++ op resizes it
        out.resize_(x.shape)
    return None


@torch.library.register_fake("switchyard_examples::softplus_backward")
def _softplus_backward_fake(grad, x, beta, threshold):
    _same_device("softplus_backward", grad=grad, x=x)
    return torch.empty_like(x)


@torch.library.register_fake("switchyard_examples::relu")
def _relu_fake(x):
    return torch.empty_like(x)


@torch.library.register_fake("switchyard_examples::scale_cast")
def _scale_cast_fake(x, alpha, dtype=None):
    return torch.empty(x.shape, dtype=dtype or x.dtype, device=x.device)


@torch.library.register_fake("switchyard_examples::lerp_cast")
def _lerp_cast_fake(a, b, weight, dtype=None):
    _same_device("lerp_cast", a=a, b=b)
    return torch.empty(a.shape, dtype=dtype or a.dtype, device=a.device)


@torch.library.register_fake("switchyard_examples::scale_")
def _scale_fake(x, alpha):
    return None


@torch.library.register_fake("switchyard_examples::lerp_")
def _lerp_fake(a, b, weight):
    _same_device("lerp_", a=a, b=b)
    return None


@torch.library.register_fake("switchyard_examples::mul_sigmoid")
def _mul_sigmoid_fake(x, gate):
    _same_device("mul_sigmoid", x=x, gate=gate)
    torch._check(x.dtype == gate.dtype, lambda: f"mul_sigmoid: argument 'gate' has dtype {gate.dtype} but 'x' has {x.dtype}")
    shape = torch.broadcast_shapes(x.shape, gate.shape)
    if x.shape == shape:
        return torch.empty_like(x)
    return x.new_empty(shape)


# softplus's derivative: sigmoid(beta * x), and 1 where beta * x > threshold
# (where the forward returns x), as in PyTorch; softplus_backward's own
# derivatives make double backward right. Written as autograd.Functions on
# the Autograd key rather than with torch.library.register_autograd, which
# gives no forward-mode derivative (dual tensors got no tangent) and left
# softplus_backward without one (wrong second derivatives).
def _below_autograd(op, *args):
    with torch._C._AutoDispatchBelowAutograd():
        return op(*args)


# torch.func's grad and jvp transforms do not reach derivatives registered on
# an operator's Autograd key (PyTorch's own custom_op + register_autograd
# fails the same way, with an error about setup_context). Refuse them by
# name; vmap works (PyTorch's batching fallback runs the op per example).
def _refuse_func_transforms(op):
    top = torch._C._functorch.peek_interpreter_stack()
    if top is not None and top.key() in (torch._C._functorch.TransformType.Grad, torch._C._functorch.TransformType.Jvp):
        raise NotImplementedError(
            f"switchyard_examples::{op}: torch.func.grad, vjp, jvp, jacrev and jacfwd are not supported by this "
            "operator (its derivatives are registered with the dispatcher, which torch.func transforms do not "
            "reach); use torch.autograd.grad or torch.autograd.forward_ad, which support first and second "
            "derivatives, or torch.func.vmap")


def _softplus_backward_dx(grad, x, beta, threshold):
    # d/dx of grad * sigmoid(beta * x): grad * beta * s * (1 - s); 0 above the threshold.
    bx = x * beta
    s = torch.sigmoid(bx)
    return torch.where(bx > threshold, torch.zeros_like(s), grad * beta * s * (1 - s))


class _Softplus(torch.autograd.Function):
    @staticmethod
    def forward(x, beta, threshold):
        return _below_autograd(ops.softplus.default, x, beta, threshold)

    @staticmethod
    def setup_context(ctx, inputs, output):
        x, ctx.beta, ctx.threshold = inputs
        ctx.save_for_backward(x)
        ctx.save_for_forward(x)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return ops.softplus_backward(grad, x, ctx.beta, ctx.threshold), None, None

    @staticmethod
    def jvp(ctx, x_t, beta_t, threshold_t):
        (x,) = ctx.saved_tensors
        return ops.softplus_backward(x_t, x, ctx.beta, ctx.threshold)


class _SoftplusBackward(torch.autograd.Function):
    @staticmethod
    def forward(grad, x, beta, threshold):
        return _below_autograd(ops.softplus_backward.default, grad, x, beta, threshold)

    @staticmethod
    def setup_context(ctx, inputs, output):
        grad, x, ctx.beta, ctx.threshold = inputs
        ctx.save_for_backward(grad, x)
        ctx.save_for_forward(grad, x)

    @staticmethod
    def backward(ctx, gg):
        grad, x = ctx.saved_tensors
        grad_grad = ops.softplus_backward(gg, x, ctx.beta, ctx.threshold)
        return grad_grad, gg * _softplus_backward_dx(grad, x, ctx.beta, ctx.threshold), None, None

    @staticmethod
    def jvp(ctx, grad_t, x_t, beta_t, threshold_t):
        grad, x = ctx.saved_tensors
        out = torch.zeros_like(x)
        if grad_t is not None:
            out = out + ops.softplus_backward(grad_t, x, ctx.beta, ctx.threshold)
        if x_t is not None:
            out = out + x_t * _softplus_backward_dx(grad, x, ctx.beta, ctx.threshold)
        return out


def _softplus_autograd(x, beta=1.0, threshold=20.0):
    _refuse_func_transforms("softplus")
    return _Softplus.apply(x, beta, threshold)


def _softplus_backward_autograd(grad, x, beta, threshold):
    _refuse_func_transforms("softplus_backward")
    return _SoftplusBackward.apply(grad, x, beta, threshold)


_autograd = torch.library.Library("switchyard_examples", "IMPL")
_autograd.impl("softplus", _softplus_autograd, "Autograd")
_autograd.impl("softplus_backward", _softplus_backward_autograd, "Autograd")


# mul_sigmoid's derivatives: d/dx = sigmoid(gate) (the op itself, applied to
# the gradient), d/dgate = x * s * (1 - s), summed over the dimensions the
# gate was broadcast along. Registered on the Autograd key as softplus is,
# so torch.func transforms get the error above.
class _MulSigmoid(torch.autograd.Function):
    @staticmethod
    def forward(x, gate):
        return _below_autograd(ops.mul_sigmoid.default, x, gate)

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(*inputs)
        ctx.save_for_forward(*inputs)

    @staticmethod
    def backward(ctx, grad):
        x, gate = ctx.saved_tensors
        grad_x = grad_gate = None
        if ctx.needs_input_grad[0]:
            grad_x = ops.mul_sigmoid(grad, gate).sum_to_size(x.shape)
        if ctx.needs_input_grad[1]:
            s = torch.sigmoid(gate)
            grad_gate = (grad * x * s * (1 - s)).sum_to_size(gate.shape)
        return grad_x, grad_gate

    @staticmethod
    def jvp(ctx, x_t, gate_t):
        x, gate = ctx.saved_tensors
        s = torch.sigmoid(gate)
        out = torch.zeros(torch.broadcast_shapes(x.shape, gate.shape), dtype=x.dtype, device=x.device)
        if x_t is not None:
            out = out + x_t * s
        if gate_t is not None:
            out = out + x * s * (1 - s) * gate_t
        return out


def _mul_sigmoid_autograd(x, gate):
    _refuse_func_transforms("mul_sigmoid")
    return _MulSigmoid.apply(x, gate)


_autograd.impl("mul_sigmoid", _mul_sigmoid_autograd, "Autograd")
