#!/usr/bin/env python3
"""softplus: switchyard's example op vs PyTorch's CPU kernel, side by side.

Both write into preallocated outputs (torch.ops.aten.softplus.out), with the
same thread count for both (SWITCHYARD_NUM_THREADS and torch.set_num_threads).
Each round runs each op in a short block: one untimed call, then `calls`
timed calls; the rounds alternate ours and PyTorch's, and the result is the
median per-call time over all rounds. The untimed call matters: right after
the other library's op its worker threads still spin for a while (libgomp's
spin-wait, our pool's polling) and compete for the same 2 cores, which
measures the two thread pools' interference rather than either kernel.
`back_to_back` reports that too: single calls strictly alternating.
Prints one JSON object: {case: {"ours_ms", "torch_ms", "ours_alternating_ms",
"torch_alternating_ms"}}. Needs the example ops built (examples/python,
build_ext --inplace).
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


def timed(fn, samples):
    start = time.perf_counter()
    fn()
    samples.append((time.perf_counter() - start) * 1e3)


def main():
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 7
    calls = 3
    result = {}
    for name, x in cases():
        ours_out, torch_out = torch.empty_like(x), torch.empty_like(x)
        ours = lambda: ops.softplus.out(x, 1.0, 20.0, out=ours_out)  # noqa: E731
        theirs = lambda: torch.ops.aten.softplus.out(x, 1.0, 20.0, out=torch_out)  # noqa: E731
        ours(), theirs()
        torch.testing.assert_close(ours_out, torch_out)
        blocks = {"ours_ms": [], "torch_ms": []}
        alternating = {"ours_alternating_ms": [], "torch_alternating_ms": []}
        for _ in range(rounds):
            for key, fn in (("ours_ms", ours), ("torch_ms", theirs)):
                fn()  # untimed: lets the other library's threads settle
                for _ in range(calls):
                    timed(fn, blocks[key])
        for _ in range(rounds * calls):
            for key, fn in (("ours_alternating_ms", ours), ("torch_alternating_ms", theirs)):
                timed(fn, alternating[key])
        result[name] = {k: statistics.median(v) for k, v in {**blocks, **alternating}.items()}
    print(json.dumps(result))


if __name__ == "__main__":
    main()
