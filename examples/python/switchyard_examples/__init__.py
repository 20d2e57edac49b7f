"""PyTorch ops written with switchyard.

Importing the package loads the C++ extension, which registers the ops as
torch.ops.switchyard_examples.* with everything torch.compile and autograd
need (shape functions for fake tensors, derivatives: examples/torch/); this
module adds only short Python wrappers. torch.ops.load_library on the
extension's file gives the same ops without this package.
"""

import sys

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


def register_dtensor_sharding():
    """Registers the elementwise ops' sharding rules with DTensor (_sharding.py),
    so they run on sharded or replicated DTensors shard by shard, with no
    communication. Done at import when torch.distributed.tensor is already
    imported; call it after importing DTensor otherwise (importing DTensor
    here would cost every user of the package seconds). Idempotent."""
    global _sharding_registered
    if not _sharding_registered:
        from . import _sharding

        _sharding.register(ops)
        _sharding_registered = True


_sharding_registered = False
if "torch.distributed.tensor" in sys.modules:
    register_dtensor_sharding()
