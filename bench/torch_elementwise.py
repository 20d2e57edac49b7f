#!/usr/bin/env python3
"""switchyard's example ops vs PyTorch on the CPU, side by side: softplus
(f32, f32 transposed, bf16, f16) and the broadcasting mul_sigmoid, x *
sigmoid(gate) with x [4096, 1024] and gate [1024] (per column) or [4096, 1]
(per row), against what a PyTorch user writes, x * torch.sigmoid(gate); the
softmax example along the last dimension of x against torch.softmax; and the
argmax example against torch.argmax (rows, columns and all of x for f32,
rows for bf16 and f16; informational, no target).

softplus writes into preallocated outputs on both sides
(torch.ops.aten.softplus.out); mul_sigmoid allocates its result on both
sides, as the two calls do. The same thread count for both
(SWITCHYARD_NUM_THREADS and torch.set_num_threads).
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


def softplus_case(x):
    ours_out, torch_out = torch.empty_like(x), torch.empty_like(x)
    ours = lambda: ops.softplus.out(x, 1.0, 20.0, out=ours_out)  # noqa: E731
    theirs = lambda: torch.ops.aten.softplus.out(x, 1.0, 20.0, out=torch_out)  # noqa: E731
    ours(), theirs()
    torch.testing.assert_close(ours_out, torch_out)
    return ours, theirs


def mul_sigmoid_case(x, gate):
    ours = lambda: ops.mul_sigmoid(x, gate)  # noqa: E731
    theirs = lambda: x * torch.sigmoid(gate)  # noqa: E731
    torch.testing.assert_close(ours(), theirs())
    return ours, theirs


def cases():
    g = torch.Generator().manual_seed(0)
    n = 1 << 24
    yield "softplus_f32", softplus_case(torch.randn(n, generator=g))
    yield "softplus_f32_transposed", softplus_case(torch.randn(4096, 4096, generator=g).t())
    yield "softplus_bf16", softplus_case(torch.randn(n, generator=g).to(torch.bfloat16))
    yield "softplus_f16", softplus_case(torch.randn(n, generator=g).to(torch.float16))
    x = torch.randn(4096, 1024, generator=g)
    for dtype, label in ((torch.float32, "f32"), (torch.bfloat16, "bf16"), (torch.float16, "f16")):
        gate = torch.randn(1024, generator=g).to(dtype)
        yield f"bcast_mul_sigmoid_{label}", mul_sigmoid_case(x.to(dtype), gate)
    yield "bcast_mul_sigmoid_per_row_f32", mul_sigmoid_case(x, torch.randn(4096, 1, generator=g))
    yield "softmax_f32", softmax_case(x)
    yield "argmax_rows_f32", argmax_case(x, -1)
    yield "argmax_columns_f32", argmax_case(x, 0)
    yield "argmax_all_f32", argmax_case(x, None)
    yield "argmax_rows_bf16", argmax_case(x.to(torch.bfloat16), -1)
    yield "argmax_rows_f16", argmax_case(x.to(torch.float16), -1)


def argmax_case(x, dim):
    ours = lambda: ops.argmax(x, dim)  # noqa: E731
    theirs = lambda: torch.argmax(x, dim)  # noqa: E731
    assert torch.equal(ours(), theirs())
    return ours, theirs


def softmax_case(x):
    ours = lambda: ops.softmax(x)  # noqa: E731
    theirs = lambda: torch.softmax(x, -1)  # noqa: E731
    torch.testing.assert_close(ours(), theirs())
    return ours, theirs


def timed(fn, samples):
    start = time.perf_counter()
    fn()
    samples.append((time.perf_counter() - start) * 1e3)


def main():
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 7
    calls = 3
    result = {}
    only = sys.argv[2:]
    for name, (ours, theirs) in cases():
        if only and name not in only:
            continue
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
