"""PyTorch ops written with switchyard.

Importing the package loads the C++ extension, which registers the ops as
torch.ops.switchyard_examples.*; this module adds what torch.compile and
autograd need (fake implementations and softplus's derivative) and short
Python wrappers.
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
# (where the forward returns x), as in PyTorch.
def _softplus_setup(ctx, inputs, output):
    x, beta, threshold = inputs
    ctx.save_for_backward(x)
    ctx.beta, ctx.threshold = beta, threshold


def _softplus_backward(ctx, grad):
    (x,) = ctx.saved_tensors
    return ops.softplus_backward(grad, x, ctx.beta, ctx.threshold), None, None


torch.library.register_autograd(
    "switchyard_examples::softplus", _softplus_backward, setup_context=_softplus_setup
)


# mul_sigmoid's derivatives: d/dx = sigmoid(gate) (the op itself, applied to
# the gradient), d/dgate = x * s * (1 - s), summed over the dimensions the
# gate was broadcast along.
def _mul_sigmoid_setup(ctx, inputs, output):
    ctx.save_for_backward(*inputs)


def _mul_sigmoid_backward(ctx, grad):
    x, gate = ctx.saved_tensors
    grad_x = grad_gate = None
    if ctx.needs_input_grad[0]:
        grad_x = ops.mul_sigmoid(grad, gate).sum_to_size(x.shape)
    if ctx.needs_input_grad[1]:
        s = torch.sigmoid(gate)
        grad_gate = (grad * x * s * (1 - s)).sum_to_size(gate.shape)
    return grad_x, grad_gate


torch.library.register_autograd(
    "switchyard_examples::mul_sigmoid", _mul_sigmoid_backward, setup_context=_mul_sigmoid_setup
)
