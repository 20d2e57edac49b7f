#!/usr/bin/env python3
"""softplus: switchyard's example op vs PyTorch's CPU kernel, side by side.

Both write into preallocated outputs (torch.ops.aten.softplus.out), with the
same thread count for both (SWITCHYARD_NUM_THREADS and torch.set_num_threads),
interleaved rounds, median of the rounds. Prints one JSON object:
{case: {"ours_ms": ..., "torch_ms": ...}}. Needs the example ops built
(examples/python, build_ext --inplace).
"""

import json
import os
import statistics
import sys
import time
from pathlib import Path

threads = int(os.environ.get("SWITCHYARD_NUM_THREADS", "2"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples" / "python"))

import torch  # noqa: E402

torch.set_num_threads(threads)
import switchyard_examples  # noqa: E402,F401

ops = torch.ops.switchyard_examples


def cases():
    g = torch.Generator().manual_seed(0)
    n = 1 << 24
    yield "f32", torch.randn(n, generator=g)
    yield "f32_transposed", torch.randn(4096, 4096, generator=g).t()
    yield "bf16", torch.randn(n, generator=g).to(torch.bfloat16)


def main():
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 7
    result = {}
    for name, x in cases():
        ours_out, torch_out = torch.empty_like(x), torch.empty_like(x)
        ours = lambda: ops.softplus.out(x, 1.0, 20.0, out=ours_out)  # noqa: E731
        theirs = lambda: torch.ops.aten.softplus.out(x, 1.0, 20.0, out=torch_out)  # noqa: E731
        ours(), theirs()
        torch.testing.assert_close(ours_out, torch_out)
        samples = {"ours_ms": [], "torch_ms": []}
        for _ in range(rounds):
            for key, fn in (("ours_ms", ours), ("torch_ms", theirs)):
                start = time.perf_counter()
                fn()
                samples[key].append((time.perf_counter() - start) * 1e3)
        result[name] = {k: statistics.median(v) for k, v in samples.items()}
    print(json.dumps(result))


if __name__ == "__main__":
    main()
