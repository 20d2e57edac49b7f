"""The example ops against PyTorch: values, layouts, out=, autograd (in-place
ops too), opcheck, torch.compile and error messages."""

import itertools
import os
import re
import sys
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F

import switchyard_examples as sx

ops = torch.ops.switchyard_examples

FLOAT_DTYPES = [torch.float16, torch.bfloat16, torch.float32, torch.float64]
DEVICES = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])


def extremal(dtype, device):
    """inf, -inf, nan, +-1e30 (inf in half types), subnormals and values near
    softplus's thresholds for the beta/threshold pairs below."""
    info = torch.finfo(dtype)
    values = [float("inf"), float("-inf"), float("nan"), 1e30, -1e30, 0.0, -0.0,
              info.tiny / 4, -info.tiny / 4, info.tiny, 1.0, -1.0, 88.0, -88.0, 700.0, -700.0]
    for beta, threshold in BETA_THRESHOLD:
        t = threshold / beta
        values += [t, -t, t * (1 + 1e-3), t * (1 - 1e-3), t + 0.5, t - 0.5]
    return torch.tensor(values, dtype=torch.float64).to(dtype=dtype, device=device)


BETA_THRESHOLD = [(1.0, 20.0), (2.0, 5.0), (0.5, 1.0), (3.0, 40.0)]


def test_global_generator_is_seeded_per_test():
    """conftest.py seeds torch's generator from the test's name, so unseeded
    draws below repeat whatever ran before."""
    import zlib
    first = torch.randn(4)
    torch.manual_seed(zlib.crc32(b"test_examples.py::test_global_generator_is_seeded_per_test"))
    assert torch.equal(first, torch.randn(4))


def layouts(rank, dtype, device, seed):
    """(name, tensor) pairs of one rank: contiguous, transposed, sliced,
    expanded (stride 0) and empty."""
    g = torch.Generator().manual_seed(seed)
    shape = [3, 4, 2, 5, 2][:rank]
    base = (torch.randn(shape, generator=g, dtype=torch.float64) * 8).to(dtype=dtype, device=device)
    yield "contiguous", base
    if rank >= 2:
        yield "transposed", base.transpose(0, -1)
    if rank >= 1:
        wide = (torch.randn(shape[:-1] + [shape[-1] * 2], generator=g, dtype=torch.float64) * 8).to(dtype=dtype, device=device)
        yield "sliced", wide[..., ::2]
        yield "expanded", base[..., :1].expand(*shape)
        yield "empty", base.narrow(rank - 1, 0, 0)


CASES = [(r, d, dev) for r in range(6) for d in FLOAT_DTYPES for dev in DEVICES]


@pytest.mark.parametrize("rank,dtype,device", CASES)
def test_softplus_matches_torch(rank, dtype, device):
    for name, x in layouts(rank, dtype, device, seed=rank):
        for beta, threshold in BETA_THRESHOLD:
            got = sx.softplus(x, beta, threshold)
            want = F.softplus(x, beta, threshold)
            assert got.shape == want.shape and got.dtype == want.dtype, name
            torch.testing.assert_close(got, want, equal_nan=True, msg=lambda m: f"{name} beta={beta}: {m}")


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("device", DEVICES)
def test_softplus_extremal_values(dtype, device):
    x = extremal(dtype, device)
    for beta, threshold in BETA_THRESHOLD:
        torch.testing.assert_close(sx.softplus(x, beta, threshold), F.softplus(x, beta, threshold), equal_nan=True)


@pytest.mark.parametrize("rank,dtype,device", CASES)
def test_relu_matches_torch(rank, dtype, device):
    for name, x in layouts(rank, dtype, device, seed=10 + rank):
        torch.testing.assert_close(sx.relu(x), torch.relu(x), equal_nan=True, msg=lambda m: f"{name}: {m}")
    x = extremal(dtype, device)
    torch.testing.assert_close(sx.relu(x), torch.relu(x), equal_nan=True)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("device", DEVICES)
def test_softplus_out(dtype, device):
    x = torch.randn(4, 6, dtype=torch.float64).to(dtype=dtype, device=device)
    out = torch.empty_like(x)
    result = sx.softplus(x, 2.0, 5.0, out=out)
    assert result.data_ptr() == out.data_ptr()
    torch.testing.assert_close(out, F.softplus(x, 2.0, 5.0))
    # a transposed out= gets the same values
    out_t = torch.empty(6, 4, dtype=dtype, device=device).t()
    ops.softplus.out(x, 2.0, 5.0, out=out_t)
    torch.testing.assert_close(out_t, F.softplus(x, 2.0, 5.0))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("in_dtype,out_dtype", list(itertools.product(FLOAT_DTYPES, FLOAT_DTYPES)))
def test_scale_cast_and_lerp_cast(in_dtype, out_dtype, device):
    x = torch.randn(5, 7, dtype=torch.float64).to(in_dtype).to(device)
    y = torch.randn(5, 7, dtype=torch.float64).to(in_dtype).to(device)
    want = (x.to(torch.float64) * 1.5)
    torch.testing.assert_close(sx.scale_cast(x.t(), 1.5, out_dtype), want.t().to(out_dtype), rtol=2e-2, atol=1e-3)
    want_lerp = torch.lerp(x.to(torch.float64), y.to(torch.float64), 0.25)
    torch.testing.assert_close(ops.lerp_cast(x, y, 0.25, out_dtype), want_lerp.to(out_dtype), rtol=2e-2, atol=1e-2)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_in_place_ops(dtype, device):
    x = torch.randn(5, 7, dtype=torch.float64).to(dtype).to(device)
    y = torch.randn(5, 7, dtype=torch.float64).to(dtype).to(device)
    want = (x.to(torch.float64) * -2.0).to(dtype)
    z = x.clone()
    assert sx.scale_(z, -2.0) is z
    torch.testing.assert_close(z, want)
    a = x.clone().t()
    ops.lerp_(a, y.t(), 0.5)
    torch.testing.assert_close(a, torch.lerp(x, y, 0.5).t(), rtol=2e-2, atol=1e-2)


@pytest.mark.parametrize("device", DEVICES)
def test_in_place_ops_record_their_derivative(device):
    # scale_ on a non-leaf: the gradient flows through it (w.grad 6, not 2).
    w = torch.ones(4, dtype=torch.float64, device=device, requires_grad=True)
    y = w * 2
    version = y._version
    ops.scale_(y, 3.0)
    assert y._version > version
    y.sum().backward()
    torch.testing.assert_close(w.grad, torch.full_like(w, 6.0))
    # lerp_: d/da = 1 - weight, d/db = weight.
    a0 = torch.randn(5, dtype=torch.float64, device=device, requires_grad=True)
    b = torch.randn(5, dtype=torch.float64, device=device, requires_grad=True)
    a = a0 * 1
    ops.lerp_(a, b, 0.25)
    torch.testing.assert_close(a, torch.lerp(a0, b, 0.25))
    a.sum().backward()
    torch.testing.assert_close(a0.grad, torch.full_like(a0, 0.75))
    torch.testing.assert_close(b.grad, torch.full_like(b, 0.25))
    # gradcheck and gradgradcheck through a clone (the ops write their input)
    x = torch.randn(3, 4, dtype=torch.float64, device=device, requires_grad=True)
    z = torch.randn(3, 4, dtype=torch.float64, device=device, requires_grad=True)

    def scaled(t):
        t = t.clone()
        ops.scale_(t, -1.5)
        return t

    def lerped(t, u):
        t = t.clone()
        ops.lerp_(t, u, 0.3)
        return t

    assert torch.autograd.gradcheck(scaled, (x,))
    assert torch.autograd.gradgradcheck(scaled, (x,))
    assert torch.autograd.gradcheck(lerped, (x, z))
    assert torch.autograd.gradgradcheck(lerped, (x, z))
    # Under no_grad they simply run, on leaves too.
    leaf = torch.ones(3, device=device, requires_grad=True)
    with torch.no_grad():
        ops.scale_(leaf, 2.0)
    torch.testing.assert_close(leaf.detach(), torch.full((3,), 2.0, device=device))


@pytest.mark.parametrize("device", DEVICES)
def test_in_place_ops_differentiate_under_torch_compile(device):
    @torch.compile(fullgraph=True, backend="aot_eager")
    def f(x, b):
        y = x * 2
        ops.scale_(y, 3.0)
        ops.lerp_(y, b, 0.25)
        return y

    x = torch.randn(8, device=device, requires_grad=True)
    b = torch.randn(8, device=device, requires_grad=True)
    out = f(x, b)
    torch.testing.assert_close(out, torch.lerp(x * 6, b, 0.25))
    out.sum().backward()
    torch.testing.assert_close(x.grad, torch.full_like(x, 4.5))
    torch.testing.assert_close(b.grad, torch.full_like(b, 0.25))


@pytest.mark.parametrize("device", DEVICES)
def test_written_tensors_version_moves(device):
    # A tensor autograd saved, overwritten by out= or in place: backward must
    # refuse, as with PyTorch's ops (the version counter did not move).
    w = torch.randn(4, device=device, requires_grad=True)
    h = torch.randn(4, device=device)
    y = (w * h).sum()
    ops.softplus.out(torch.randn(4, device=device), 1.0, 20.0, out=h)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.backward()
    for write in (lambda t: ops.scale_(t, 2.0), lambda t: ops.lerp_(t, torch.zeros_like(t), 0.5)):
        t = torch.randn(4, device=device)
        version = t._version
        write(t)
        assert t._version > version
        with torch.inference_mode():
            write(t)
        assert t._version > version + 1


@pytest.mark.parametrize("device", DEVICES)
def test_in_place_ops_refuse_leaves_that_require_grad(device):
    # As PyTorch's in-place ops: refused before anything is written.
    leaf = torch.ones(3, device=device, requires_grad=True)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in an in-place"):
        ops.scale_(leaf, 2.0)
    with pytest.raises(RuntimeError, match="a view of a leaf Variable that requires grad is being used"):
        ops.lerp_(leaf[:2], torch.zeros(2, device=device), 0.5)
    torch.testing.assert_close(leaf.detach(), torch.ones(3, device=device))


@pytest.mark.parametrize("device", DEVICES)
def test_softplus_out_refuses_arguments_that_require_grad(device):
    # As torch.ops.aten.softplus.out: out= functions have no derivative.
    x = torch.randn(4, device=device)
    out = torch.zeros(4, device=device)
    message = "functions with out=... arguments don't support automatic differentiation"
    with pytest.raises(RuntimeError, match=message):
        ops.softplus.out(x.clone().requires_grad_(), 1.0, 20.0, out=out)
    with pytest.raises(RuntimeError, match=message):
        ops.softplus.out(x, 1.0, 20.0, out=out.clone().requires_grad_())
    torch.testing.assert_close(out, torch.zeros(4, device=device))
    with torch.no_grad():
        ops.softplus.out(x.clone().requires_grad_(), 1.0, 20.0, out=out)
    torch.testing.assert_close(out, F.softplus(x))


@pytest.mark.parametrize("device", DEVICES)
def test_softplus_out_through_negative_views(device):
    # PyTorch's fallback for negative views hit an internal assert on this
    # out= overload and the interpreter then aborted (issue 18).
    x = torch.randn(3, 4, device=device)
    out = torch._neg_view(torch.zeros(3, 4, device=device))
    ops.softplus.out(x, 2.0, 5.0, out=out)
    torch.testing.assert_close(out, F.softplus(x, 2.0, 5.0))
    torch.testing.assert_close(out._base, -F.softplus(x, 2.0, 5.0))
    # negative input and output, transposed; a complex conjugate's imag
    out = torch._neg_view(torch.zeros(4, 3, device=device)).t()
    ops.softplus.out(torch._neg_view(x.clone()), 1.0, 20.0, out=out)
    torch.testing.assert_close(out, F.softplus(-x))
    out = torch.zeros(3, 4, dtype=torch.complex64, device=device).conj().imag
    ops.softplus.out(x, 1.0, 20.0, out=out)
    torch.testing.assert_close(out, F.softplus(x))
    with torch.inference_mode():
        out = torch._neg_view(torch.zeros(3, 4, device=device))
        ops.softplus.out(x, 1.0, 20.0, out=out)
    torch.testing.assert_close(out, F.softplus(x))
    torch.library.opcheck(ops.softplus.out, (x, 1.0, 20.0), {"out": torch._neg_view(torch.zeros(3, 4, device=device))})
    with pytest.raises(RuntimeError, match="softplus: argument 'out' has dtype ComplexFloat"):
        ops.softplus.out(x, 1.0, 20.0, out=torch.zeros(3, 4, dtype=torch.complex64, device=device).conj())


@pytest.mark.parametrize("device", DEVICES)
def test_softplus_gradcheck(device):
    x = (torch.randn(6, 5, dtype=torch.float64, device=device) * 4).requires_grad_()
    assert torch.autograd.gradcheck(lambda t: sx.softplus(t, 1.0, 20.0), (x,))
    assert torch.autograd.gradcheck(lambda t: sx.softplus(t, 2.0, 3.0), (x,))
    # above the threshold the derivative is exactly 1, as in PyTorch
    x = torch.tensor([30.0, -1.0, 0.0, 10.0], dtype=torch.float64, device=device, requires_grad=True)
    (g,) = torch.autograd.grad(sx.softplus(x, 2.0, 5.0).sum(), x)
    xr = x.detach().clone().requires_grad_()
    (gr,) = torch.autograd.grad(F.softplus(xr, 2.0, 5.0).sum(), xr)
    torch.testing.assert_close(g, gr)


# torch.func.jvp warns that torch.jit.script is deprecated (torch 2.13's own call).
@pytest.mark.filterwarnings("ignore:`torch.jit.script` is deprecated:DeprecationWarning")
@pytest.mark.parametrize("device", DEVICES)
def test_softplus_second_and_forward_mode_derivatives(device):
    x = (torch.randn(6, 5, dtype=torch.float64, device=device) * 4).requires_grad_()
    for beta, threshold in ((1.0, 20.0), (2.0, 3.0)):
        assert torch.autograd.gradgradcheck(lambda t: sx.softplus(t, beta, threshold), (x,), check_fwd_over_rev=True)
        grad = torch.randn(6, 5, dtype=torch.float64, device=device, requires_grad=True)
        assert torch.autograd.gradgradcheck(lambda g, t: ops.softplus_backward(g, t, beta, threshold), (grad, x),
                                            check_fwd_over_rev=True)
    # Forward mode (dual tensors) against PyTorch's softplus.
    import torch.autograd.forward_ad as fwAD

    xd, tangent = x.detach(), torch.randn_like(x.detach())
    with fwAD.dual_level():
        ours = fwAD.unpack_dual(sx.softplus(fwAD.make_dual(xd, tangent), 2.0, 3.0)).tangent
        theirs = fwAD.unpack_dual(F.softplus(fwAD.make_dual(xd, tangent), 2.0, 3.0)).tangent
    torch.testing.assert_close(ours, theirs)
    # torch.func's grad and jvp do not reach derivatives registered with the
    # dispatcher: they must fail naming the op (they returned zero tangents,
    # then PyTorch's internal "could not find kernel for custom_function_call").
    # vmap works.
    unsupported = r"switchyard_examples::{}: torch\.func\.grad, vjp, jvp, jacrev and jacfwd are not supported"
    with pytest.raises(NotImplementedError, match=unsupported.format("softplus")):
        torch.func.jvp(lambda t: sx.softplus(t, 1.0, 20.0), (xd,), (tangent,))
    with pytest.raises(NotImplementedError, match=unsupported.format("softplus")):
        torch.func.grad(lambda t: sx.softplus(t, 1.0, 20.0).sum())(xd)
    with pytest.raises(NotImplementedError, match=unsupported.format("softplus_backward")):
        torch.func.grad(lambda t: ops.softplus_backward(t, xd, 1.0, 20.0).sum())(xd)
    with pytest.raises(NotImplementedError, match=unsupported.format("mul_sigmoid")):
        torch.func.grad(lambda t: sx.mul_sigmoid(t, xd).sum())(xd)
    for transform in (torch.func.jacrev, torch.func.jacfwd, torch.func.hessian):
        with pytest.raises(NotImplementedError, match=unsupported.format("mul_sigmoid")):
            transform(lambda t: sx.mul_sigmoid(t, xd[0]).sum())(xd[0])
    torch.testing.assert_close(torch.func.vmap(lambda t: sx.softplus(t, 2.0, 3.0))(xd), F.softplus(xd, 2.0, 3.0))
    # vmap over an argument that requires grad, then backward through it.
    xg = xd.clone().requires_grad_()
    torch.func.vmap(lambda t: sx.softplus(t, 2.0, 3.0))(xg).sum().backward()
    torch.testing.assert_close(xg.grad, torch.sigmoid(2.0 * xd).where(2.0 * xd <= 3.0, torch.ones_like(xd)))


@pytest.mark.parametrize("device", DEVICES)
def test_opcheck(device):
    x = torch.randn(3, 4, dtype=torch.float32, device=device)
    y = torch.randn(3, 4, dtype=torch.float32, device=device)
    torch.library.opcheck(ops.softplus.default, (x.clone().requires_grad_(), 2.0, 5.0))
    torch.library.opcheck(ops.softplus.default, (x.t(), 1.0, 20.0))
    torch.library.opcheck(ops.softplus.out, (x, 1.0, 20.0), {"out": torch.empty_like(x)})
    torch.library.opcheck(ops.softplus_backward.default, (y, x, 1.0, 20.0))
    torch.library.opcheck(ops.relu.default, (x,))
    torch.library.opcheck(ops.scale_cast.default, (x, 2.0, torch.float16))
    torch.library.opcheck(ops.scale_.default, (x.clone(), 2.0))
    torch.library.opcheck(ops.lerp_cast.default, (x, y, 0.5, None))
    torch.library.opcheck(ops.lerp_.default, (x.clone(), y, 0.5))


@pytest.mark.parametrize("device", DEVICES)
def test_torch_compile_fullgraph(device):
    @torch.compile(fullgraph=True, backend="aot_eager")
    def f(x):
        return sx.softplus(x * 2, 1.0, 20.0) + 1

    x = torch.randn(64, 32, device=device, requires_grad=True)
    out = f(x)
    torch.testing.assert_close(out, F.softplus(x * 2, 1.0, 20.0) + 1)
    out.sum().backward()
    assert x.grad is not None


@pytest.mark.parametrize("device", DEVICES)
def test_bad_inputs_raise_runtime_errors_naming_op_and_argument(device):
    x = torch.randn(3, 4, device=device)
    with pytest.raises(RuntimeError, match=r"softplus.*dtype=Int is outside the table's space"):
        sx.softplus(torch.ones(3, 4, dtype=torch.int32, device=device))
    with pytest.raises(RuntimeError, match=r"softplus: argument 'out' has dtype Double but 'x' has Float"):
        sx.softplus(x, out=torch.empty(3, 4, dtype=torch.float64, device=device))
    # An out= of another shape is resized, as PyTorch's out= ops do (their
    # deprecation warning, from C++, goes to stderr through torch.ops).
    wrong = torch.empty(4, 2, device=device)
    sx.softplus(x, out=wrong)
    assert wrong.shape == (3, 4)
    torch.testing.assert_close(wrong, F.softplus(x))
    # Resizing reallocates the storage x shares with out: x is read from the
    # new storage, not the freed one (review finding).
    base = torch.randn(4, device=device)
    x_part, want = base[:2], F.softplus(base[:2])
    out_part = base[3:]
    sx.softplus(x_part, out=out_part)
    torch.testing.assert_close(out_part, want)
    with pytest.raises(RuntimeError, match=r"relu: argument 'x' has dtype Int"):
        sx.relu(torch.ones(3, dtype=torch.int32, device=device))
    with pytest.raises(RuntimeError, match=r"lerp_cast: argument 'b' has shape \[4\] but 'a' has \[3\]"):
        ops.lerp_cast(torch.ones(3, device=device), torch.ones(4, device=device), 0.5, None)
    # Outputs that cannot be written element by element.
    with pytest.raises(RuntimeError, match=r"softplus: argument 'out' has internal overlap"):
        ops.softplus.out(x, 1.0, 20.0, out=torch.empty(3, 1, device=device).expand(3, 4))
    buf = torch.randn(13, device=device)
    with pytest.raises(RuntimeError, match=r"softplus: argument 'out' partially overlaps 'x'"):
        ops.softplus.out(buf[:12].view(3, 4), 1.0, 20.0, out=buf[1:].view(3, 4))
    # Memory the strides cannot prove disjoint counts as shared for ops on
    # transform: refused rather than raced.
    with pytest.raises(RuntimeError, match=r"softplus: argument 'out' partially overlaps 'x'"):
        ops.softplus.out(buf[0:12:2], 1.0, 20.0, out=buf[1:13:2])
    with pytest.raises(RuntimeError, match=r"scale_: argument 'x' has internal overlap"):
        ops.scale_(torch.ones(3, 1, device=device).expand(3, 4), 2.0)
    with pytest.raises(RuntimeError, match=r"lerp_: argument 'a' partially overlaps 'b'"):
        ops.lerp_(buf[1:], buf[:12], 0.5)


@pytest.mark.parametrize("device", DEVICES)
def test_misaligned_and_in_place_outputs(device):
    """Storage offsets of one element (misaligned for 16-byte vectors) and an
    out= that is exactly the input both work; an empty out= is resized."""
    x = torch.randn(3, 5, device=device)
    out = torch.empty(0, device=device)
    ops.softplus.out(x, 1.0, 20.0, out=out)
    assert out.shape == x.shape
    torch.testing.assert_close(out, F.softplus(x))
    for dtype in FLOAT_DTYPES:
        buf = torch.randn(4099, dtype=torch.float64).to(dtype=dtype, device=device)
        x = buf[1:4098]
        out = torch.empty(4100, dtype=dtype, device=device)[3:4100]
        ops.softplus.out(x, 1.0, 20.0, out=out)
        torch.testing.assert_close(out, F.softplus(x), msg=lambda m: f"{dtype}: {m}")
        want = F.softplus(x)
        ops.softplus.out(x, 1.0, 20.0, out=x)
        torch.testing.assert_close(x, want, msg=lambda m: f"{dtype} in place: {m}")


def test_tensors_between_element_boundaries_are_refused():
    """Issue 18: a tensor whose data pointer is not a multiple of its element
    size (torch.frombuffer with a byte offset) was read through misaligned
    typed pointers; switchyard refuses it, naming the op and the argument."""
    raw = bytearray(4 * 9)
    x = torch.frombuffer(raw, dtype=torch.float32, offset=1, count=8)
    assert x.data_ptr() % 4 != 0
    with pytest.raises(RuntimeError, match=r"softplus: argument 'x'.*not aligned to its 4-byte f32 elements"):
        sx.softplus(x)
    # The relu baseline (no switchyard) copies such a tensor instead.
    torch.testing.assert_close(sx.relu(x), torch.relu(x))
    aligned = torch.frombuffer(raw, dtype=torch.float32, offset=4, count=8)
    torch.testing.assert_close(sx.relu(aligned), torch.relu(aligned))


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device besides the CPU")
def test_tensors_on_different_devices():
    x = torch.randn(3, 4)
    with pytest.raises(RuntimeError, match=r"argument 'out' is on cuda:0 but 'x' is on cpu"):
        ops.softplus.out(x, 1.0, 20.0, out=torch.empty(3, 4, device="cuda"))
    with pytest.raises(RuntimeError, match=r"argument 'out' is on cpu but 'x' is on cuda:0"):
        ops.softplus.out(x.cuda(), 1.0, 20.0, out=torch.empty(3, 4))
    with pytest.raises(RuntimeError, match=r"lerp_cast: argument 'b' is on cpu but 'a' is on cuda:0"):
        ops.lerp_cast(x.cuda(), x, 0.5, None)


@pytest.mark.skipif(torch.cuda.device_count() < 2, reason="needs two CUDA devices")
def test_tensors_on_two_gpus():
    x = torch.randn(3, 4, device="cuda:0")
    with pytest.raises(RuntimeError, match=r"argument 'out' is on cuda:1 but 'x' is on cuda:0"):
        ops.softplus.out(x, 1.0, 20.0, out=torch.empty(3, 4, device="cuda:1"))


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_cuda_runs_on_the_current_stream():
    """The op is queued on PyTorch's current stream: it sees the add queued
    before it there, although that stream is busy when the op is called (on
    any other stream the op would run first and miss the add)."""
    x = torch.randn(1 << 20, device="cuda")
    out = torch.empty_like(x)
    side = torch.cuda.Stream()  # non-blocking: does not sync with the default stream
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        torch.cuda._sleep(50_000_000)
        x.add_(1.0)
        ops.softplus.out(x, 1.0, 20.0, out=out)
    torch.cuda.synchronize()
    torch.testing.assert_close(out, F.softplus(x))


MUL_SIGMOID_SHAPES = [
    ("same shape", (6, 5), (6, 5)),
    ("per column", (6, 5), (5,)),
    ("per row", (6, 5), (6, 1)),
    ("scalar gate", (6, 5), ()),
    ("gate broadcasts x", (1, 5), (6, 1)),
    ("rank 4", (2, 3, 4, 5), (3, 1, 5)),
    ("0-d", (), ()),
    ("empty", (0, 5), (5,)),
    ("long rows", (3, 5000), (5000,)),
]


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("device", DEVICES)
def test_mul_sigmoid_broadcasts_like_torch(dtype, device):
    g = torch.Generator().manual_seed(7)
    for name, xs, gs in MUL_SIGMOID_SHAPES:
        x = (torch.randn(xs, generator=g, dtype=torch.float64) * 4).to(dtype=dtype, device=device)
        gate = (torch.randn(gs, generator=g, dtype=torch.float64) * 4).to(dtype=dtype, device=device)
        variants = [("", x, gate)]
        if x.dim() >= 2:
            variants.append((" x transposed", x.transpose(0, -1).contiguous().transpose(0, -1), gate))
            variants.append((" x sliced", torch.cat([x, x], dim=-1)[..., ::2], gate))
        for suffix, xv, gv in variants:
            got = sx.mul_sigmoid(xv, gv)
            want = xv * torch.sigmoid(gv)
            assert got.shape == want.shape and got.dtype == want.dtype, name + suffix
            torch.testing.assert_close(got, want, msg=lambda m: f"{name}{suffix}: {m}")
        if name == "same shape":
            # The result takes x's memory layout, as PyTorch's ops do.
            assert sx.mul_sigmoid(x.t(), gate.t()).stride() == x.t().stride()


@pytest.mark.parametrize("device", DEVICES)
def test_mul_sigmoid_errors_gradients_and_compile(device):
    x = torch.randn(4, 5, dtype=torch.float64, device=device)
    with pytest.raises(RuntimeError, match=r"mul_sigmoid: argument 'gate' has shape \[3\], which does not broadcast "
                       r"with 'x' \[4, 5\] \(size 3 against 5 in dimension 1 of the result\)"):
        sx.mul_sigmoid(x, torch.randn(3, dtype=torch.float64, device=device))
    with pytest.raises(RuntimeError, match=r"mul_sigmoid: argument 'gate' has dtype Float but 'x' has Double"):
        sx.mul_sigmoid(x, torch.randn(5, device=device))
    for gate_shape in [(4, 5), (5,), (4, 1), ()]:
        xg = x.clone().requires_grad_()
        gate = torch.randn(gate_shape, dtype=torch.float64, device=device, requires_grad=True)
        assert torch.autograd.gradcheck(sx.mul_sigmoid, (xg, gate), check_forward_ad=True)
        torch.library.opcheck(ops.mul_sigmoid.default, (xg, gate))

    @torch.compile(fullgraph=True, backend="aot_eager")
    def f(a, b):
        return sx.mul_sigmoid(a * 2, b) + 1

    a = torch.randn(64, 32, device=device, requires_grad=True)
    b = torch.randn(32, device=device, requires_grad=True)
    out = f(a, b)
    torch.testing.assert_close(out, (a * 2) * torch.sigmoid(b) + 1)
    out.sum().backward()
    assert a.grad is not None and b.grad is not None


@pytest.mark.parametrize("device", DEVICES)
def test_lerp_is_exact_at_both_ends(device):
    """torch.lerp returns `end` exactly at weight 1 and `start` at 0 (issue 18)."""
    g = torch.Generator().manual_seed(3)
    for dtype in FLOAT_DTYPES:
        a = (torch.randn(1000, generator=g, dtype=torch.float64) * 1e3).to(dtype=dtype, device=device)
        b = (torch.randn(1000, generator=g, dtype=torch.float64) * 1e-3).to(dtype=dtype, device=device)
        assert torch.equal(ops.lerp_cast(a, b, 1.0, None), b)
        assert torch.equal(ops.lerp_cast(a, b, 0.0, None), a)
        for weight in (0.25, 0.5, 0.75):
            torch.testing.assert_close(ops.lerp_cast(a, b, weight, None), torch.lerp(a, b, weight))
        c = a.clone()
        ops.lerp_(c, b, 1.0)
        assert torch.equal(c, b)
        # The same end as torch.lerp for every weight (from a where |w| < 0.5).
        # Not bitwise: PyTorch's vectorized CPU lerp contracts into FMAs on
        # some machines (an H100 host's CPU differed in the last bit).
        for weight in (-0.75, -0.5, 0.4999999, 0.75):
            torch.testing.assert_close(ops.lerp_cast(a, b, weight, None), torch.lerp(a, b, weight))


@pytest.mark.parametrize("device", DEVICES)
def test_scalars_that_float_cannot_hold_are_refused(device):
    """PyTorch refuses a beta or threshold that overflows float rather than
    computing with infinity; double tensors take it (issue 18)."""
    x = torch.randn(8, device=device)
    for kwargs, name in (({"beta": 1e300}, "beta"), ({"threshold": -1e300}, "threshold")):
        value = re.escape(f"{next(iter(kwargs.values())):g}")  # 1e+300, not 301 digits
        with pytest.raises(RuntimeError, match=rf"softplus: argument '{name}' is {value}: value cannot be converted"):
            sx.softplus(x, **kwargs)
        with pytest.raises(RuntimeError, match=rf"softplus_backward: argument '{name}' is .*without overflow"):
            ops.softplus_backward(x, x, kwargs.get("beta", 1.0), kwargs.get("threshold", 20.0))
    with pytest.raises(RuntimeError, match=r"without overflow"):
        sx.softplus(x.half(), beta=1e39)
    torch.testing.assert_close(sx.softplus(x.double(), beta=1e300), F.softplus(x.double(), beta=1e300))


def test_meta_arguments_beside_real_tensors_are_refused():
    """With one meta argument the Meta kernels run (the ops' own host
    functions); they check devices as on CPU, instead of returning
    uninitialized memory or leaving out= unwritten (issue 18)."""
    cpu, meta = torch.ones(4), torch.ones(4, device="meta")
    with pytest.raises(RuntimeError, match=r"lerp_cast: argument 'b' is on meta but 'a' is on cpu"):
        ops.lerp_cast(cpu, meta, 0.5, None)
    with pytest.raises(RuntimeError, match=r"softplus: argument 'out' is on cpu but 'x' is on meta"):
        ops.softplus.out(meta, 1.0, 20.0, out=torch.empty(4))
    with pytest.raises(RuntimeError, match=r"lerp_: argument 'b' is on meta but 'a' is on cpu"):
        ops.lerp_(cpu.clone(), meta, 0.5)
    with pytest.raises(RuntimeError, match=r"mul_sigmoid: argument 'gate' is on meta but 'x' is on cpu"):
        ops.mul_sigmoid(cpu, meta)
    with pytest.raises(RuntimeError, match=r"softplus_backward: argument 'x' is on meta but 'grad' is on cpu"):
        ops.softplus_backward(cpu, meta, 1.0, 20.0)
    # Meta calls word a broadcast error as real calls do ("size 3 against 5", not "[3]").
    message = (r"mul_sigmoid: argument 'gate' has shape \[3\], which does not broadcast with 'x' \[4, 5\] "
               r"\(size 3 against 5 in dimension 1 of the result\)")
    for device in ("cpu", "meta"):
        with pytest.raises(RuntimeError, match=message):
            ops.mul_sigmoid(torch.ones(4, 5, device=device), torch.ones(3, device=device))
    # All-meta calls still work (torch.compile's fake tensors).
    assert ops.lerp_cast(meta, meta, 0.5, None).device.type == "meta"


def test_registrations_need_no_python():
    """The extension's file loaded with torch.ops.load_library alone, in a
    fresh interpreter that never imports this package: opcheck (fake tensors,
    AOT dispatch), torch.compile(fullgraph=True) and gradcheck pass from the
    C++ registrations (tests/python/cpp_only_library.py), on every device."""
    import subprocess
    import sys
    from pathlib import Path

    library = Path(sx._C.__file__)
    script = Path(__file__).resolve().parent / "cpp_only_library.py"
    result = subprocess.run([sys.executable, str(script), str(library)], capture_output=True, text=True, timeout=1200)
    assert result.returncode == 0, result.stdout + result.stderr
    for device in DEVICES:
        assert f": {device}: opcheck, torch.compile" in result.stdout, result.stdout


DTENSOR_DEVICES = ["cpu"] + (["cuda"] if torch.cuda.device_count() >= 2 else [])


@pytest.mark.parametrize("device", DTENSOR_DEVICES)
def test_dtensor_sharding(device):
    """The elementwise ops on DTensors over two processes (gloo on the CPU,
    nccl on two GPUs where present): shard by shard, no communication
    (tests/python/dtensor_check.py)."""
    import subprocess
    import sys
    from pathlib import Path

    script = Path(__file__).resolve().parent / "dtensor_check.py"
    result = subprocess.run([sys.executable, str(script), device], capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.count("DTensor checks passed, no communication") == 2, result.stdout


def test_dtensor_sharding_registered_at_import_after_dtensor():
    """Imported after torch.distributed.tensor, the package registers its
    sharding rules itself (before it, register_dtensor_sharding() does:
    dtensor_check.py)."""
    import subprocess
    import sys
    from pathlib import Path

    package = Path(sx.__file__).resolve().parents[1]
    code = ("import sys; import torch.distributed.tensor; sys.path.insert(0, sys.argv[1]); "
            "import switchyard_examples as sx; assert sx._sharding_registered; print('registered')")
    result = subprocess.run([sys.executable, "-c", code, str(package)], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0 and "registered" in result.stdout, result.stdout + result.stderr


def test_stable_abi_softplus(tmp_path):
    """examples/stable_abi: softplus on PyTorch's stable ABI, built for 2.11
    and loaded by this PyTorch (the GPU machine loads the same binary into
    2.11: docs/torch.md)."""
    import subprocess
    import sys
    from pathlib import Path

    repo = Path(__file__).resolve().parents[2]
    library = tmp_path / "libsoftplus_stable.so"
    build = subprocess.run(["bash", str(repo / "examples" / "stable_abi" / "build.sh"), str(library)],
                           capture_output=True, text=True, timeout=900)
    assert build.returncode == 0, build.stdout + build.stderr
    # The C++ runtime comes from PyTorch's process, not a static copy inside
    # the library (a compiler without libstdc++.so once gave one that crashed).
    needed = subprocess.run(["readelf", "-d", str(library)], capture_output=True, text=True).stdout
    assert "[libstdc++.so" in needed, needed
    # -X faulthandler: a crash prints where (it segfaulted once, under pytest only, on torch 2.11+cu130).
    check = subprocess.run([sys.executable, "-X", "faulthandler", str(repo / "tests" / "python" / "stable_abi_check.py"),
                            str(library)],
                           capture_output=True, text=True, timeout=300)
    assert check.returncode == 0, check.stdout + check.stderr
    assert "4 dtypes x 5 layouts and the dtype error passed" in check.stdout, check.stdout


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="counts threads in /proc/self/task")
def test_cpu_kernels_run_on_pytorchs_threads():
    """op_args runs CPU kernels on PyTorch's intra-op threads (the extension
    is built with -fopenmp): a fresh interpreter's thread count does not grow
    when the ops run, as it would if switchyard's own pool (3 threads asked
    for here) started its workers. The results match PyTorch's."""
    import subprocess
    import textwrap

    script = textwrap.dedent(
        f"""
        import os, sys
        sys.path.insert(0, {str(Path(sx.__file__).resolve().parents[1])!r})
        import torch
        import switchyard_examples
        torch.set_num_threads(2)
        ops = torch.ops.switchyard_examples
        x, gate = torch.randn(512, 1024), torch.randn(1024)
        expected = x * torch.sigmoid(gate)  # starts PyTorch's threads
        before = len(os.listdir("/proc/self/task"))
        torch.testing.assert_close(ops.mul_sigmoid(x, gate), expected)
        torch.testing.assert_close(ops.sumsq(x), (x * x).sum(-1))
        torch.testing.assert_close(ops.softmax(x), torch.softmax(x, -1))
        print("threads", before, len(os.listdir("/proc/self/task")))
        """
    )
    env = dict(os.environ, SWITCHYARD_NUM_THREADS="3")
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300, env=env)
    assert result.returncode == 0, result.stdout + result.stderr
    before, after = map(int, result.stdout.split()[-2:])
    assert after == before, result.stdout
