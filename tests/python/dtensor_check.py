"""The elementwise example ops on DTensors across two processes: sharded
along each dimension (with a broadcast gate replicated or sharded) and
replicated, with no communication and results equal to PyTorch's.

    python tests/python/dtensor_check.py cpu    # gloo, two CPU processes
    python tests/python/dtensor_check.py cuda   # nccl, two GPUs

Prints one line per rank and exits non-zero on failure.
"""

import os
import sys
import tempfile
from pathlib import Path

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn.functional as F

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples" / "python"))


def run(rank, world, device_type, init_file):
    # The package first: its sharding rules are then registered explicitly.
    import switchyard_examples as sx
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.tensor import DTensor, Replicate, Shard, distribute_tensor
    from torch.distributed.tensor.debug import CommDebugMode

    sx.register_dtensor_sharding()
    ops = torch.ops.switchyard_examples
    backend = "nccl" if device_type == "cuda" else "gloo"
    if device_type == "cuda":
        torch.cuda.set_device(rank)
    dist.init_process_group(backend, init_method=f"file://{init_file}", rank=rank, world_size=world)
    mesh = init_device_mesh(device_type, (world,))
    torch.manual_seed(0)  # every rank builds the same full tensors
    # 7 rows: shards of uneven size along dimension 0.
    x = torch.randn(7, 6, device=device_type) * 4
    y = torch.randn(7, 6, device=device_type)
    column_gate = torch.randn(6, device=device_type)
    row_gate = torch.randn(7, 1, device=device_type)
    checks = 0

    def check(result, expected, placements):
        nonlocal checks
        assert isinstance(result, DTensor), type(result)
        assert tuple(result.placements) == tuple(placements), (result.placements, placements)
        torch.testing.assert_close(result.full_tensor(), expected)
        checks += 1

    for placement in (Shard(0), Shard(1), Replicate()):
        dx = distribute_tensor(x, mesh, [placement])
        dy = distribute_tensor(y, mesh, [placement])
        with CommDebugMode() as comm:
            out = ops.softplus(dx, 2.0, 5.0)
            grad_in = ops.softplus_backward(dy, dx, 2.0, 5.0)
            relu = ops.relu(dx)
            cast = ops.scale_cast(dx, 3.0, torch.float64)
            lerp = ops.lerp_cast(dx, dy, 0.25, None)
        assert comm.get_total_counts() == 0, f"{placement}: the ops communicated: {comm.get_comm_counts()}"
        check(out, F.softplus(x, 2.0, 5.0), [placement])
        check(grad_in, y * torch.sigmoid(2.0 * x).where(2.0 * x <= 5.0, torch.ones_like(x)), [placement])
        check(relu, torch.relu(x), [placement])
        check(cast, (x * 3.0).double(), [placement])
        check(lerp, torch.lerp(x, y, 0.25), [placement])

        # Broadcast gates, per column and per row: each replicated, or sharded
        # where it has x's sharded dimension (not where it broadcasts, size 1).
        for gate, gate_placement in (
            (column_gate, Shard(0) if placement == Shard(1) else Replicate()),
            (row_gate, Shard(0) if placement == Shard(0) else Replicate()),
        ):
            dgate = distribute_tensor(gate, mesh, [gate_placement])
            with CommDebugMode() as comm:
                gated = ops.mul_sigmoid(dx, dgate)
            assert comm.get_total_counts() == 0, f"mul_sigmoid {placement}: {comm.get_comm_counts()}"
            check(gated, x * torch.sigmoid(gate), [placement])

    # Each rank computed its own shard only.
    local = ops.softplus(distribute_tensor(x, mesh, [Shard(0)]), 2.0, 5.0).to_local()
    torch.testing.assert_close(local, F.softplus(x.chunk(world, 0)[rank], 2.0, 5.0))
    print(f"rank {rank}/{world} ({backend}, {device_type}): {checks} DTensor checks passed, no communication")
    dist.destroy_process_group()
    # Leave without finalizing the interpreter: a Gloo worker thread may still
    # release a finished scatter's tensors then, and taking the GIL during
    # finalization aborts the process ("terminate called without an active
    # exception", about 1 run in 25; a core dump showed
    # ProcessGroupGloo::runLoop -> ~AsyncScatterWork -> decref -> pthread_exit).
    sys.stdout.flush()
    os._exit(0)


if __name__ == "__main__":
    device_type = sys.argv[1] if len(sys.argv) > 1 else "cpu"
    world = 2
    if device_type == "cuda" and torch.cuda.device_count() < world:
        sys.exit(f"dtensor_check: needs {world} GPUs, found {torch.cuda.device_count()}")
    with tempfile.TemporaryDirectory() as tmp:
        mp.spawn(run, args=(world, device_type, os.path.join(tmp, "init")), nprocs=world, join=True)
