#!/usr/bin/env python3
"""Compare two builds of one Google Benchmark program, alternated.

    bench/alternate.py BASE NEW FILTER THREADS ROUNDS

Runs BASE and NEW (e.g. bench/cpu_reduce built against two header trees)
ROUNDS times each, alternating which goes first, with
SWITCHYARD_NUM_THREADS=THREADS, 3 repetitions per run; prints per benchmark
the median of the runs' medians and BASE / NEW (> 1: NEW faster). On a
machine whose memory bandwidth drifts, alternating keeps the drift out of the
ratio.
"""

import json
import os
import statistics
import subprocess
import sys


def main():
    if len(sys.argv) != 6:
        sys.exit(__doc__)
    base, new, pattern, threads, rounds = sys.argv[1:4] + [sys.argv[4], int(sys.argv[5])]
    env = dict(os.environ, SWITCHYARD_NUM_THREADS=threads)
    times = {base: {}, new: {}}
    for r in range(rounds):
        for exe in (base, new) if r % 2 == 0 else (new, base):
            out = subprocess.run([exe, f"--benchmark_filter={pattern}", "--benchmark_repetitions=3",
                                  "--benchmark_format=json", "--benchmark_min_time=0.1"],
                                 env=env, capture_output=True, text=True, check=True).stdout
            for bm in json.loads(out)["benchmarks"]:
                if bm.get("aggregate_name") == "median":
                    times[exe].setdefault(bm["run_name"], []).append(bm["real_time"])
    for name, base_times in times[base].items():
        b, n = statistics.median(base_times), statistics.median(times[new][name])
        print(f"{name:40s} base {b:.4g}  new {n:.4g}  base/new {b / n:.3f}")


if __name__ == "__main__":
    main()
