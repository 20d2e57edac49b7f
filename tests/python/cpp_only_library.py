"""Checks that the example ops need no Python: loads their library with
torch.ops.load_library only (no switchyard_examples package, no Python
registrations) and runs opcheck (schema, autograd registration, fake tensors,
AOT dispatch with static and dynamic shapes), torch.compile(fullgraph=True)
with backward, and gradcheck with second and forward-mode derivatives.

    python tests/python/cpp_only_library.py LIBRARY [DEVICE...]

DEVICE defaults to cpu, plus cuda where the library has CUDA kernels and a
GPU is present. Prints one line per device and exits non-zero on failure.
"""

import sys

import torch
import torch.nn.functional as F

library = sys.argv[1]
torch.ops.load_library(library)
ops = torch.ops.switchyard_examples

names = ["softplus", "softplus_backward", "mul_sigmoid", "relu", "scale_cast", "scale_", "lerp_cast", "lerp_", "sumsq",
         "argmax", "softmax", "softmax_backward"]
for name in names:
    qualified = f"switchyard_examples::{name}"
    assert torch._C._dispatch_has_kernel_for_dispatch_key(qualified, "Meta"), f"{qualified} has no Meta kernel"
for name in ("softplus", "softplus_backward", "mul_sigmoid", "sumsq", "softmax"):
    assert torch._C._dispatch_has_kernel_for_dispatch_key(f"switchyard_examples::{name}", "Autograd"), name

devices = sys.argv[2:] or ["cpu"] + (
    ["cuda"]
    if torch.cuda.is_available() and torch._C._dispatch_has_kernel_for_dispatch_key("switchyard_examples::softplus", "CUDA")
    else []
)
all_checks = ("test_schema", "test_autograd_registration", "test_faketensor", "test_aot_dispatch_static",
              "test_aot_dispatch_dynamic")


def opcheck(op, args, kwargs=None):
    torch.library.opcheck(op, args, kwargs, test_utils=all_checks)


for device in devices:
    x = torch.randn(5, 6, device=device) * 4
    y = torch.randn(5, 6, device=device)
    gate = torch.randn(6, device=device)

    # opcheck on every op, with arguments that require grad where the op is differentiable.
    opcheck(ops.softplus.default, (x.clone().requires_grad_(), 2.0, 5.0))
    opcheck(ops.softplus.default, (x.t(), 1.0, 20.0))
    opcheck(ops.softplus.out, (x, 1.0, 20.0), {"out": torch.empty_like(x)})
    opcheck(ops.softplus.out, (x, 1.0, 20.0), {"out": torch.empty(0, device=device)})
    opcheck(ops.softplus_backward.default, (y.clone().requires_grad_(), x.clone().requires_grad_(), 2.0, 5.0))
    opcheck(ops.mul_sigmoid.default, (x.clone().requires_grad_(), gate.clone().requires_grad_()))
    opcheck(ops.mul_sigmoid.default, (gate, x))
    opcheck(ops.relu.default, (x,))
    opcheck(ops.relu.default, (x.t(),))
    opcheck(ops.scale_cast.default, (x, 2.0, torch.float64))
    opcheck(ops.scale_.default, (x.clone(), 2.0))
    opcheck(ops.lerp_cast.default, (x, y, 0.25, torch.bfloat16))
    opcheck(ops.lerp_.default, (x.clone(), y, 0.25))
    opcheck(ops.sumsq.default, (x.clone().requires_grad_(),))
    opcheck(ops.softmax.default, (x.clone().requires_grad_(),))
    opcheck(ops.softmax_backward.default, (y, torch.softmax(x, -1)))

    # torch.compile over a chain of the ops, forward and backward, static and dynamic shapes.
    def chain(a, g):
        return ops.mul_sigmoid(ops.softplus(a, 2.0, 5.0), g).sum()

    for dynamic in (False, True):
        torch._dynamo.reset()
        compiled = torch.compile(chain, fullgraph=True, dynamic=dynamic)
        for rows in (5, 9):
            a = torch.randn(rows, 6, device=device, requires_grad=True)
            g = torch.randn(6, device=device, requires_grad=True)
            out = compiled(a, g)
            out.backward()
            a_ref, g_ref = a.detach().requires_grad_(), g.detach().requires_grad_()
            ref = (F.softplus(a_ref, 2.0, 5.0) * torch.sigmoid(g_ref)).sum()
            ref.backward()
            torch.testing.assert_close(out, ref)
            torch.testing.assert_close(a.grad, a_ref.grad)
            torch.testing.assert_close(g.grad, g_ref.grad)

    # Derivatives from C++: first, second and forward mode.
    xd = (torch.randn(4, 3, device=device, dtype=torch.float64) * 3).requires_grad_()
    yd = torch.randn(4, 3, device=device, dtype=torch.float64, requires_grad=True)
    gd = torch.randn(3, device=device, dtype=torch.float64, requires_grad=True)
    check = dict(check_forward_ad=True, check_backward_ad=True)
    assert torch.autograd.gradcheck(lambda t: ops.softplus(t, 2.0, 4.0), (xd,), **check)
    assert torch.autograd.gradgradcheck(lambda t: ops.softplus(t, 2.0, 4.0), (xd,), check_fwd_over_rev=True)
    assert torch.autograd.gradcheck(lambda g, t: ops.softplus_backward(g, t, 2.0, 4.0), (yd, xd), **check)
    assert torch.autograd.gradcheck(ops.mul_sigmoid, (xd, gd), **check)
    assert torch.autograd.gradgradcheck(ops.mul_sigmoid, (xd, gd), check_fwd_over_rev=True)
    assert torch.autograd.gradgradcheck(lambda g, t: ops.softplus_backward(g, t, 2.0, 4.0), (yd, xd),
                                        check_fwd_over_rev=True)
    assert torch.autograd.gradcheck(ops.sumsq, (xd,), **check)
    assert torch.autograd.gradgradcheck(ops.sumsq, (xd,), check_fwd_over_rev=True)
    assert torch.autograd.gradcheck(ops.softmax, (xd,), **check)
    assert torch.autograd.gradgradcheck(ops.softmax, (xd,), check_fwd_over_rev=True)

    # Meta tensors get the real call's checks: dtypes no kernel serves, shapes that do not broadcast.
    meta = torch.empty(3, 4, device="meta")
    for call, message in (
        (lambda: ops.softplus(meta.int(), 1.0, 20.0), "has no kernel for"),
        (lambda: ops.scale_cast(meta, 2.0, torch.int32), "has no kernel for"),
        (lambda: ops.mul_sigmoid(meta, torch.empty(5, device="meta")), "does not broadcast"),
        (lambda: ops.relu(meta.int()), "relu supports"),
    ):
        try:
            call()
        except RuntimeError as e:
            assert message in str(e), str(e)
        else:
            raise AssertionError(f"a meta call that the real op refuses passed (expected '{message}')")
    print(f"{library}: {device}: opcheck, torch.compile (static and dynamic shapes) and gradcheck passed "
          "with C++ registrations only")
