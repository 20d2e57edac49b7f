#!/usr/bin/env python3
"""PyTorch's side of bench/cpu_reduce.cpp: torch.sum over the same shapes
and dimensions, float32 (and f16, bf16 row sums, short rows), into preallocated outputs, on 2 threads (or
SWITCHYARD_NUM_THREADS). Prints one line per case: the median of 15 blocks
of 20 calls, in milliseconds (a median, as Google Benchmark reports ours)."""

import os
import statistics
import time

import torch

torch.set_num_threads(int(os.environ.get("SWITCHYARD_NUM_THREADS", "2")))


def median_ms(fn, blocks=15, calls=20):
    for _ in range(3):
        fn()
    times = []
    for _ in range(blocks):
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        times.append((time.perf_counter() - start) / calls * 1e3)
    return statistics.median(times)


# The values bench/cpu_reduce.cpp sums: ((i * 2654435761) % 1000) / 1000.
x = (torch.arange(1 << 25, dtype=torch.int64) * 2654435761 % 1000).to(torch.float32) * 1e-3
cases = {
    "sum_all": (x[: 1 << 24], None),
    "sum_rows_4096x1024": (x[: 1 << 22].view(4096, 1024), -1),
    "sum_rows_256x131072": (x.view(256, 131072), -1),
    "sum_columns_4096x1024": (x[: 1 << 22].view(4096, 1024), 0),
    "sum_columns_4096x1024_bf16": (x[: 1 << 22].view(4096, 1024).bfloat16(), 0),
    "sum_columns_1048576x4": (x[: 1 << 22].view(1048576, 4), 0),
    "sum_middle_64x1024x64": (x[: 1 << 22].view(64, 1024, 64), 1),
    "sum_rows_4096x1024_f16": (x[: 1 << 22].view(4096, 1024).half(), -1),
    "sum_rows_4096x1024_bf16": (x[: 1 << 22].view(4096, 1024).bfloat16(), -1),
    "sum_rows_131072x32": (x[: 1 << 22].view(131072, 32), -1),
    "sum_rows_32768x128": (x[: 1 << 22].view(32768, 128), -1),
}
for name, (t, dim) in cases.items():
    if dim is None:
        out = torch.empty(())
        ms = median_ms(lambda: torch.sum(t, dim=tuple(range(t.dim())), out=out))
    else:
        out = torch.empty([s for d, s in enumerate(t.shape) if d != dim % t.dim()], dtype=t.dtype)
        ms = median_ms(lambda: torch.sum(t, dim=dim, out=out))
    print(f"torch {name}: {ms:.3f} ms")
