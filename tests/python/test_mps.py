"""The example ops on PyTorch MPS tensors, through switchyard's Metal device
(include/switchyard/torch/mps.h). They run only on macOS with an MPS build of
PyTorch (.github/workflows/macos.yml); everywhere else they are skipped."""

import os

import pytest
import torch
import torch.nn.functional as F

import switchyard_examples as sx

ops = torch.ops.switchyard_examples

# The macOS workflow sets SWITCHYARD_REQUIRE_MPS=1: there a missing MPS device
# fails these tests instead of skipping them.
_has_mps = hasattr(torch.backends, "mps") and torch.backends.mps.is_available()
if os.environ.get("SWITCHYARD_REQUIRE_MPS") == "1" and not _has_mps:
    raise RuntimeError("SWITCHYARD_REQUIRE_MPS=1 but torch.backends.mps.is_available() is False")
pytestmark = pytest.mark.skipif(not _has_mps, reason="needs an MPS device (macOS with an MPS build of PyTorch)")

DTYPES = [torch.float32, torch.float16, torch.bfloat16]


def tolerance(dtype):
    return {torch.float32: (1e-5, 1e-5), torch.float16: (2e-3, 2e-3), torch.bfloat16: (2e-2, 2e-2)}[dtype]


@pytest.mark.parametrize("dtype", DTYPES)
def test_elementwise_ops_match_torch_on_mps(dtype):
    atol, rtol = tolerance(dtype)
    x = torch.randn(37, 301, device="mps").to(dtype) * 6
    y = torch.randn(301, device="mps").to(dtype)
    torch.testing.assert_close(sx.softplus(x, 2.0, 5.0), F.softplus(x, 2.0, 5.0), atol=atol, rtol=rtol)
    torch.testing.assert_close(sx.mul_sigmoid(x, y), x * torch.sigmoid(y), atol=atol, rtol=rtol)
    # Views with a storage offset: transposed, contiguous at an offset that
    # is not 16-byte aligned (one index per thread) and one that is (vec4).
    base = torch.randn(64, 65, device="mps").to(dtype)
    for view in (base[3:, 1:].t(), base.flatten()[1:], base.flatten()[8:]):
        torch.testing.assert_close(sx.softplus(view, 1.0, 20.0), F.softplus(view, 1.0, 20.0), atol=atol, rtol=rtol)
    # out=, resized from empty, and an empty input.
    out = torch.empty(0, device="mps", dtype=dtype)
    sx.softplus(x, 2.0, 5.0, out=out)
    torch.testing.assert_close(out, F.softplus(x, 2.0, 5.0), atol=atol, rtol=rtol)
    empty = torch.empty(0, 5, device="mps", dtype=dtype)
    assert sx.softplus(empty).shape == (0, 5)


@pytest.mark.parametrize("dtype", DTYPES)
def test_softmax_matches_torch_on_mps(dtype):
    atol, rtol = tolerance(dtype)
    x = torch.randn(33, 1000, device="mps").to(dtype)
    torch.testing.assert_close(ops.softmax(x), torch.softmax(x, -1), atol=atol, rtol=rtol)


@pytest.mark.parametrize("dtype", DTYPES)
def test_sumsq_matches_torch_on_mps(dtype):
    atol, rtol = tolerance(dtype)
    x = torch.randn(17, 3000, device="mps").to(dtype)
    want = (x.float() ** 2).sum(-1).to(dtype)
    torch.testing.assert_close(ops.sumsq(x), want, atol=atol * 10, rtol=rtol * 10)


@pytest.mark.parametrize("dtype", DTYPES)
def test_argmax_matches_torch_on_mps(dtype):
    # Ties (few distinct values), a NaN in some rows, rows of two passes
    # (9000 values), columns and all elements.
    x = torch.randint(0, 9, (13, 9000), device="mps").to(dtype)
    x[3, 4321] = float("nan")
    x[7, 10] = float("nan")
    for dim in (-1, 0, None):
        assert torch.equal(ops.argmax(x, dim, False), torch.argmax(x, dim)), dim
    assert torch.equal(ops.argmax(x.t(), 1, True), torch.argmax(x.t(), 1, keepdim=True))


def test_an_op_without_mps_kernels_is_refused_on_mps():
    with pytest.raises(RuntimeError, match="mps"):
        ops.scale_cast(torch.randn(8, device="mps"), 2.0, None)


def test_mps_with_a_cpu_tensor_is_refused_naming_it():
    x = torch.randn(8, device="mps")
    with pytest.raises(RuntimeError, match="'gate' is on cpu"):
        sx.mul_sigmoid(x, torch.randn(8))
