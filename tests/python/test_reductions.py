"""The reduction example, sumsq(x) = (x * x).sum(-1), against PyTorch on the
CPU (and CUDA where present): every float dtype, ranks 0 to 5, non-contiguous, expanded and empty
inputs, NaN and inf, the same bits on every call, opcheck, gradcheck,
forward mode and torch.compile."""

import pytest
import torch

import switchyard_examples  # noqa: F401

ops = torch.ops.switchyard_examples

FLOAT_DTYPES = [torch.float16, torch.bfloat16, torch.float32, torch.float64]
TOLERANCE = {torch.float16: 2e-3, torch.bfloat16: 1e-2, torch.float32: 1e-5, torch.float64: 1e-12}


def reference(x):
    """What PyTorch gives for the same sum, computed in float64 and rounded."""
    return (x.double() * x.double()).sum(-1).to(x.dtype)


def inputs(rank, dtype, values=lambda t: t):
    """Views of every layout, of values(standard normal draws)."""
    g = torch.Generator().manual_seed(rank)
    shape = [3, 5, 2, 7, 4][:rank]
    base = values(torch.randn(shape, generator=g, dtype=torch.float64)).to(dtype)
    yield "contiguous", base
    if rank >= 2:
        yield "transposed", base.transpose(0, -1)
    if rank >= 1:
        wide = values(torch.randn(shape[:-1] + [shape[-1] * 2], generator=g, dtype=torch.float64)).to(dtype)
        yield "sliced", wide[..., ::2]
        yield "expanded", base[..., :1].expand(*shape)
        yield "empty row", base.narrow(rank - 1, 0, 0)
    if rank >= 2:
        yield "no rows", base.narrow(0, 0, 0)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("rank", range(6))
def test_sumsq_matches_torch(rank, dtype):
    for name, x in inputs(rank, dtype):
        got = ops.sumsq(x)
        assert got.shape == reference(x).shape, name
        assert got.dtype == dtype, name
        tol = TOLERANCE[dtype]
        torch.testing.assert_close(got, reference(x), rtol=tol, atol=tol, msg=name)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_sumsq_long_rows_are_accurate(dtype):
    x = torch.rand(3, 200_000, dtype=torch.float64).to(dtype)
    tol = TOLERANCE[dtype]
    torch.testing.assert_close(ops.sumsq(x), reference(x), rtol=tol, atol=0)


def test_sumsq_propagates_nan_and_inf():
    x = torch.ones(4, 9000)
    x[0, 8500] = float("nan")
    x[1, 3] = float("inf")
    x[2, 3] = float("-inf")
    got = ops.sumsq(x)
    torch.testing.assert_close(got, (x * x).sum(-1), equal_nan=True)
    assert got[0].isnan() and got[1] == float("inf") and got[2] == float("inf") and got[3] == 9000


def test_sumsq_gives_the_same_bits_on_every_call():
    x = torch.randn(64, 50_000)
    first = ops.sumsq(x)
    for _ in range(5):
        assert torch.equal(ops.sumsq(x), first)


def test_sumsq_opcheck_and_derivatives():
    x = torch.randn(6, 5, dtype=torch.float64)
    torch.library.opcheck(ops.sumsq.default, (x,))
    torch.library.opcheck(ops.sumsq.default, (x.t().requires_grad_(),))
    assert torch.autograd.gradcheck(ops.sumsq, (x.clone().requires_grad_(),))
    assert torch.autograd.gradgradcheck(ops.sumsq, (x.clone().requires_grad_(),), check_fwd_over_rev=True)
    scalar = torch.tensor(1.5, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(ops.sumsq, (scalar,))
    assert torch.autograd.gradcheck(ops.sumsq, (x.clone().requires_grad_(),), check_forward_ad=True,
                                    check_backward_ad=False, check_undefined_grad=False, check_batched_grad=False)


def test_sumsq_under_torch_compile():
    x = torch.randn(8, 33, requires_grad=True)
    f = torch.compile(lambda t: ops.sumsq(t * 2), fullgraph=True, dynamic=True)
    out = f(x)
    torch.testing.assert_close(out, ((x * 2) ** 2).sum(-1))
    (g,) = torch.autograd.grad(out.sum(), x)
    torch.testing.assert_close(g, 8 * x)


def test_sumsq_meta_shapes():
    assert ops.sumsq(torch.empty(4, 5, 6, device="meta")).shape == (4, 5)
    assert ops.sumsq(torch.empty((), device="meta")).shape == ()


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_sumsq_on_cuda(dtype):
    for rank in range(6):
        for name, x in inputs(rank, dtype):
            got = ops.sumsq(x.cuda())
            tol = TOLERANCE[dtype]
            torch.testing.assert_close(got.cpu(), reference(x), rtol=tol, atol=tol, msg=name)
    x = torch.randn(256, 1 << 16, device="cuda", dtype=dtype)
    first = ops.sumsq(x)
    assert torch.equal(ops.sumsq(x), first)
    # Rounded to the dtype: f16 rows of 65536 squares pass 65504 and are inf, as PyTorch's are.
    torch.testing.assert_close(first, reference(x), rtol=TOLERANCE[dtype], atol=0)
    xg = torch.randn(6, 5, dtype=torch.float64, device="cuda", requires_grad=True)
    assert torch.autograd.gradcheck(ops.sumsq, (xg,))
    torch.library.opcheck(ops.sumsq.default, (xg,))


SOFTMAX_TOLERANCE = {torch.float16: (1e-3, 1e-3), torch.bfloat16: (8e-3, 1.6e-2), torch.float32: (1e-6, 1e-5),
                     torch.float64: (1e-12, 1e-12)}


def softmax_cases(dtype, device):
    for rank in range(5):
        for name, x in inputs(rank, dtype):
            yield f"rank {rank} {name}", (x * 4).to(device)
    g = torch.Generator().manual_seed(5)
    rows = torch.randn(3, 5, generator=g, dtype=torch.float64) * 30
    rows[0, 2] = float("inf")
    rows[1] = float("-inf")
    rows[2, 1] = float("nan")
    yield "inf, all -inf and nan rows", rows.to(dtype).to(device)
    # Rows past the CPU's cache buffer and CUDA's registers (read again per pass).
    yield "long rows", (torch.randn(2, 70000, generator=g, dtype=torch.float64) * 4).to(dtype).to(device)


@pytest.mark.parametrize("device", ["cpu"] + (["cuda"] if torch.cuda.is_available() else []))
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_softmax_matches_torch(dtype, device):
    # PyTorch's softmax computed in float64 and rounded: its float32 softmax
    # is itself up to 1.6e-5 off on the long rows (ours 2.3e-6), past rtol.
    atol, rtol = SOFTMAX_TOLERANCE[dtype]
    g = torch.Generator().manual_seed(6)
    for name, x in softmax_cases(dtype, device):
        expected = torch.softmax(x.double(), -1).to(dtype)
        torch.testing.assert_close(ops.softmax(x), expected, atol=atol, rtol=rtol, equal_nan=True, msg=name)
        grad = torch.randn(x.shape, generator=g, dtype=torch.float64).to(dtype).to(device)
        y = torch.softmax(x, -1)
        expected = torch._softmax_backward_data(grad.double(), y.double(), -1, torch.float64).to(dtype)
        torch.testing.assert_close(ops.softmax_backward(grad, y), expected, atol=atol, rtol=rtol, equal_nan=True,
                                   msg=name)


@pytest.mark.parametrize("device", ["cpu"] + (["cuda"] if torch.cuda.is_available() else []))
def test_softmax_opcheck_and_derivatives(device):
    x = torch.randn(6, 7, dtype=torch.float64, device=device)
    torch.library.opcheck(ops.softmax.default, (x,))
    torch.library.opcheck(ops.softmax.default, (x.t().requires_grad_(),))
    torch.library.opcheck(ops.softmax_backward.default, (torch.randn_like(x), torch.softmax(x, -1)))
    xg = x.clone().requires_grad_()
    assert torch.autograd.gradcheck(ops.softmax, (xg,))
    assert torch.autograd.gradgradcheck(ops.softmax, (xg,), check_fwd_over_rev=True)
    assert torch.autograd.gradcheck(ops.softmax, (xg,), check_forward_ad=True, check_backward_ad=False,
                                    check_undefined_grad=False, check_batched_grad=False)
    f = torch.compile(lambda t: ops.softmax(t * 2), fullgraph=True, dynamic=True)
    xc = torch.randn(5, 9, device=device, requires_grad=True)
    out = f(xc)
    torch.testing.assert_close(out, torch.softmax(xc * 2, -1))
    (g,) = torch.autograd.grad((out * torch.arange(9.0, device=device)).sum(), xc)
    xr = xc.detach().clone().requires_grad_()
    (gr,) = torch.autograd.grad((torch.softmax(xr * 2, -1) * torch.arange(9.0, device=device)).sum(), xr)
    torch.testing.assert_close(g, gr)


def test_softmax_errors_and_shapes():
    assert ops.softmax(torch.empty(4, 0)).shape == (4, 0)
    assert ops.softmax(torch.empty(3, 5, device="meta")).shape == (3, 5)
    with pytest.raises(RuntimeError, match="softmax_backward: argument 'y' has shape \\[3, 5\\] but 'grad' has \\[3, 4\\]"):
        ops.softmax_backward(torch.zeros(3, 4), torch.zeros(3, 5))
    with pytest.raises(RuntimeError, match="softmax_backward: argument 'y' has dtype Double but 'grad' has Float"):
        ops.softmax_backward(torch.zeros(3, 4), torch.zeros(3, 4, dtype=torch.float64))


DEVICES = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])


def argmax_cases(dtype, device):
    """Inputs of every layout with many equal values (small integers), so ties are common."""
    for rank in range(6):
        for name, x in inputs(rank, dtype, lambda t: (t * 2).round()):
            yield f"rank {rank} {name}", x.to(device)
    rows = torch.randint(-3, 3, (4, 9000)).to(dtype)
    rows[1, 7000] = float("nan")
    rows[1, 8000] = float("nan")
    rows[2, 5] = float("inf")
    rows[3] = float("-inf")
    yield "long rows with nan, inf and -inf", rows.to(device)
    yield "long rows transposed", rows.t().contiguous().t().to(device)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_argmax_matches_torch(dtype, device):
    for name, x in argmax_cases(dtype, device):
        for dim in [None] + list(range(-x.dim(), x.dim())) + ([0] if x.dim() == 0 else []):
            for keepdim in (False, True):
                try:
                    want = torch.argmax(x, dim, keepdim)
                except IndexError:  # an empty reduction: ours refuses it the same way
                    with pytest.raises(IndexError, match="argmax: "):
                        ops.argmax(x, dim, keepdim)
                    continue
                got = ops.argmax(x, dim, keepdim)
                assert got.dtype == torch.int64 and got.device == x.device
                assert torch.equal(got, want), f"{name}, dim {dim}, keepdim {keepdim}: {got} != {want}"


@pytest.mark.parametrize("device", DEVICES)
def test_argmax_errors_opcheck_and_meta(device):
    with pytest.raises(IndexError, match="argmax: dimension 1 of x has size 0"):
        ops.argmax(torch.empty(3, 0, device=device), 1)
    with pytest.raises(IndexError, match="argmax: x has no elements"):
        ops.argmax(torch.empty(0, device=device))
    with pytest.raises(IndexError, match="Dimension out of range"):
        ops.argmax(torch.zeros(3, 4, device=device), 2)
    assert torch.equal(ops.argmax(torch.empty(0, 3, device=device), 1), torch.empty(0, dtype=torch.int64, device=device))
    assert ops.argmax(torch.empty(4, 5, 6, device="meta"), -2, True).shape == (4, 1, 6)
    x = torch.randn(6, 7, device=device)
    torch.library.opcheck(ops.argmax.default, (x, 1, False))
    torch.library.opcheck(ops.argmax.default, (x.t(), None, True))
    f = torch.compile(lambda t: ops.argmax(t * 2, -1), fullgraph=True, dynamic=True)
    assert torch.equal(f(x), torch.argmax(x, -1))
