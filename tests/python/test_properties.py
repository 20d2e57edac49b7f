"""Property-based tests of the example ops against PyTorch (Hypothesis):
random shapes (empty ones included), layouts (permuted, sliced, expanded,
offset), broadcasting, every float dtype, special values (NaN, infinities,
signed zeros, subnormals), and out= / in-place aliasing. Each property
holds for every example Hypothesis draws: a correct result, or a
RuntimeError where PyTorch's own op would refuse too.

HYPOTHESIS_PROFILE=long runs many more examples (CI runs the default)."""

import os

import pytest
import torch
import torch.nn.functional as F

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings, strategies as st  # noqa: E402

import switchyard_examples as sx  # noqa: E402

ops = torch.ops.switchyard_examples

settings.register_profile(
    "default", max_examples=60, deadline=None, print_blob=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
settings.register_profile(
    "long", max_examples=2000, deadline=None, print_blob=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))

FLOAT_DTYPES = [torch.float16, torch.bfloat16, torch.float32, torch.float64]
DEVICES = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])

dtypes = st.sampled_from(FLOAT_DTYPES)
devices = st.sampled_from(DEVICES)
shapes = st.lists(st.integers(0, 6), min_size=0, max_size=4).map(tuple)
# NaN, infinities, signed zeros, subnormals of every dtype (f32 values
# rounded to the dtype), and ordinary magnitudes.
values = st.one_of(
    st.floats(width=32, allow_nan=True, allow_infinity=True),
    st.sampled_from([0.0, -0.0, 1e-40, -1e-40, 6e-8, -6e-8, 1e-38, 65504.0, 70000.0, 3e38]),
    st.floats(-30, 30, width=32))


@st.composite
def tensors(draw, shape, dtype, device, layout=True):
    """A tensor of `shape` whose memory layout is drawn: contiguous, with its
    dimensions permuted in memory, a strided slice of a larger tensor, or at
    an offset in its storage. Values are drawn one by one."""
    n = 1
    for s in shape:
        n *= s
    flat = draw(st.lists(values, min_size=n, max_size=n))
    base = torch.tensor(flat, dtype=torch.float32).reshape(shape).to(dtype)
    kind = draw(st.sampled_from(["contiguous", "permuted", "sliced", "offset"])) if layout else "contiguous"
    if kind == "permuted" and len(shape) >= 2:
        perm = draw(st.permutations(range(len(shape))))
        inverse = [perm.index(d) for d in range(len(shape))]
        base = base.permute(*perm).contiguous().permute(*inverse)
    elif kind == "sliced" and len(shape) >= 1:
        d = draw(st.integers(0, len(shape) - 1))
        step = draw(st.integers(2, 3))
        wide = list(shape)
        wide[d] = shape[d] * step
        holder = torch.zeros(wide, dtype=dtype)
        index = [slice(None)] * len(shape)
        index[d] = slice(None, None, step)
        holder[tuple(index)] = base
        base = holder[tuple(index)]
    elif kind == "offset":
        storage = torch.zeros(n + 3, dtype=dtype)
        storage[3:] = base.reshape(-1)
        base = storage[3:].view(shape)
    return base.to(device)


@st.composite
def broadcast_shape(draw, shape):
    """A shape that broadcasts to `shape`: leading dimensions dropped, some
    others set to 1."""
    drop = draw(st.integers(0, len(shape)))
    kept = shape[drop:]
    return tuple(1 if draw(st.booleans()) else s for s in kept)


def close(got, want):
    assert got.shape == want.shape and got.dtype == want.dtype
    torch.testing.assert_close(got, want, equal_nan=True)


@given(st.data(), shapes, dtypes, devices,
       st.floats(0.1, 8.0), st.floats(0.5, 40.0))
def test_softplus_any_layout_and_values(data, shape, dtype, device, beta, threshold):
    x = data.draw(tensors(shape, dtype, device))
    close(sx.softplus(x, beta, threshold), F.softplus(x, beta, threshold))


@given(st.data(), shapes, dtypes, devices)
def test_relu_any_layout_and_values(data, shape, dtype, device):
    x = data.draw(tensors(shape, dtype, device))
    close(sx.relu(x), torch.relu(x))


@given(st.data(), shapes, dtypes, devices)
def test_mul_sigmoid_broadcasts_as_torch(data, shape, dtype, device):
    x = data.draw(tensors(shape, dtype, device))
    gate_shape = data.draw(broadcast_shape(shape))
    gate = data.draw(tensors(gate_shape, dtype, device))
    if data.draw(st.booleans()) and gate.dim() > 0:
        # An expanded gate: stride 0 where it repeats.
        gate = gate.expand(shape[len(shape) - gate.dim():]) if gate.dim() <= len(shape) else gate
    want = x * torch.sigmoid(gate)
    close(sx.mul_sigmoid(x, gate), want)


@given(st.data(), st.lists(st.integers(2, 5), min_size=1, max_size=3).map(tuple), dtypes)
def test_mul_sigmoid_refuses_shapes_that_do_not_broadcast(data, shape, dtype):
    x = data.draw(tensors(shape, dtype, "cpu", layout=False))
    d = data.draw(st.integers(0, len(shape) - 1))
    bad = list(shape)
    bad[d] = shape[d] + 1
    gate = torch.zeros(bad, dtype=dtype)
    with pytest.raises(RuntimeError):
        torch.broadcast_shapes(x.shape, gate.shape)
    with pytest.raises(RuntimeError, match="mul_sigmoid"):
        sx.mul_sigmoid(x, gate)


@given(st.data(), shapes, dtypes, devices, st.sampled_from(["fresh", "in place", "overlapping", "expanded"]))
def test_softplus_out_aliasing(data, shape, dtype, device, kind):
    x = data.draw(tensors(shape, dtype, device))
    want = F.softplus(x, 2.0, 5.0)
    n = x.numel()
    if kind == "fresh":
        out = data.draw(tensors(shape, dtype, device))
        sx.softplus(x, 2.0, 5.0, out=out)
        close(out, want)
    elif kind == "in place":
        sx.softplus(x, 2.0, 5.0, out=x)
        close(x, want)
    elif kind == "overlapping" and n >= 2:
        # out shares memory with x, shifted by one element: PyTorch refuses
        # partial overlap, and so must we (before writing anything).
        storage = torch.zeros(n + 1, dtype=dtype, device=device)
        storage[:n] = x.reshape(-1)
        xs = storage[:n].view(shape)
        before = storage.clone()
        with pytest.raises(RuntimeError):
            sx.softplus(xs, 2.0, 5.0, out=storage[1:].view(shape))
        assert torch.equal(storage.isnan(), before.isnan())
        torch.testing.assert_close(storage, before, equal_nan=True, rtol=0, atol=0)
    elif kind == "expanded" and len(shape) >= 1 and shape[-1] >= 2 and n > 0:
        out = torch.zeros(shape[:-1] + (1,), dtype=dtype, device=device).expand(shape)
        with pytest.raises(RuntimeError):
            sx.softplus(x, 2.0, 5.0, out=out)


@given(st.data(), shapes, dtypes, devices, st.floats(-4, 4, width=32))
def test_scale_in_place_any_layout(data, shape, dtype, device, alpha):
    x = data.draw(tensors(shape, dtype, device))
    want = (x.to(torch.float64) * alpha).to(dtype) if dtype != torch.float64 else x * alpha
    # PyTorch computes x * alpha in float for half types: round once.
    want = (x.float() * alpha).to(dtype) if dtype in (torch.float16, torch.bfloat16) else want
    sx.scale_(x, alpha)
    torch.testing.assert_close(x, want, equal_nan=True)


@given(st.data(), shapes, dtypes, devices, st.sampled_from([0.0, 0.25, 0.5, 0.75, 1.0, -0.5, 1.5]))
def test_lerp_in_place_any_layout(data, shape, dtype, device, weight):
    a = data.draw(tensors(shape, dtype, device))
    b = data.draw(tensors(shape, dtype, device))
    want = torch.lerp(a, b, weight)
    # Where (b - a) times the weight or its complement passes float's range,
    # the result is finite only if the compiler fused the multiply and the
    # subtraction (FMA): both torch.lerp and ours then depend on the build.
    # Those elements are left out.
    wide = (b.double() - a.double()).abs() * max(abs(weight), abs(1 - weight))
    fits = ~(wide > torch.finfo(torch.float32).max) if dtype != torch.float64 else torch.ones_like(wide, dtype=torch.bool)
    original = a.clone()
    ops.lerp_(a, b, weight)
    a, want = torch.where(fits, a, original), torch.where(fits, want, original)
    # Where torch's lerp is exact (weights 0 and 1), so is ours.
    if weight in (0.0, 1.0):
        assert torch.equal(a.isnan(), want.isnan())
        torch.testing.assert_close(a, want, equal_nan=True, rtol=0, atol=0)
    else:
        torch.testing.assert_close(a, want, equal_nan=True, rtol=2e-2 if dtype in (torch.float16, torch.bfloat16) else 1e-5,
                                   atol=1e-2 if dtype in (torch.float16, torch.bfloat16) else 1e-5)


@given(st.data(), shapes, dtypes, dtypes, devices)
def test_scale_cast_between_dtypes(data, shape, in_dtype, out_dtype, device):
    x = data.draw(tensors(shape, in_dtype, device))
    got = sx.scale_cast(x, 1.0, out_dtype)
    # Scaling by one: exactly a cast, rounded once to the output dtype.
    close(got, x.to(out_dtype))
