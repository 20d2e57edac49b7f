"""DTensor sharding rules for the elementwise example ops: each output element
depends only on the input elements at its (broadcast) position, so a DTensor
sharded along any dimension (or replicated) runs the op on each device's
shard, with no communication."""

import torch
from torch.distributed.tensor import Replicate, Shard
from torch.distributed.tensor.experimental import register_sharding


def _is_tensor(arg):
    # DTensor hands the rule its internal tensor spec in place of each tensor.
    return hasattr(arg, "placements") and hasattr(arg, "shape")


def elementwise_sharding(*args):
    """The acceptable (output, inputs) placements of an elementwise op: all
    replicated, or the output sharded along dimension d with every input
    sharded along its matching dimension (replicated where it broadcasts)."""
    shape = torch.broadcast_shapes(*(a.shape for a in args if _is_tensor(a)))
    rank = len(shape)
    strategies = [([Replicate()], [Replicate() if _is_tensor(a) else None for a in args])]
    for d in range(rank):
        inputs = []
        for a in args:
            if not _is_tensor(a):
                inputs.append(None)
                continue
            k = d - (rank - len(a.shape))
            inputs.append(Shard(k) if k >= 0 and a.shape[k] == shape[d] else Replicate())
        strategies.append(([Shard(d)], inputs))
    return strategies


def register(ops):
    for op in (ops.softplus.default, ops.softplus_backward.default, ops.mul_sigmoid.default, ops.relu.default,
               ops.scale_cast.default, ops.lerp_cast.default):
        register_sharding(op)(elementwise_sharding)
