#!/usr/bin/env python3
"""How PyTorch's CPU threads and switchyard's pool disturb each other: the
broadcasting example op mul_sigmoid (x [4096, 1024] f32, gate [1024]) timed
in a loop of its own, in PyTorch's wake (right after x * torch.sigmoid(gate)),
and PyTorch's op the same ways. Medians in ms, one line. Needs the example
ops built (examples/python, build_ext --inplace).

    SWITCHYARD_NUM_THREADS=2 python3 bench/torch_interference.py
    OMP_WAIT_POLICY=passive SWITCHYARD_NUM_THREADS=2 python3 bench/torch_interference.py
"""

import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples" / "python"))
import torch  # noqa: E402

torch.set_num_threads(int(os.environ.get("SWITCHYARD_NUM_THREADS", "2")))
import switchyard_examples  # noqa: E402,F401

ops = torch.ops.switchyard_examples
x, gate = torch.randn(4096, 1024), torch.randn(1024)


def ours():
    return ops.mul_sigmoid(x, gate)


def theirs():
    return x * torch.sigmoid(gate)


def ms(fn):
    start = time.perf_counter()
    fn()
    return (time.perf_counter() - start) * 1e3


for _ in range(20):
    ours(), theirs()
loop_ours = [ms(ours) for _ in range(100)]
loop_torch = [ms(theirs) for _ in range(100)]
after_torch, after_ours = [], []
for _ in range(100):
    theirs()
    after_torch.append(ms(ours))
    ours()
    after_ours.append(ms(theirs))
m = statistics.median
print(f"ours: loop {m(loop_ours):.3f}, after torch {m(after_torch):.3f} | "
      f"torch: loop {m(loop_torch):.3f}, after ours {m(after_ours):.3f}")
