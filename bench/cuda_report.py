#!/usr/bin/env python3
"""CUDA benchmarks in one command, for a machine with a GPU and CUDA PyTorch:

    python3 bench/cuda_report.py            # builds what it needs, then measures

softplus (the example op, on transform) and relu (switchyard's for_each, bench/cuda/bench_ops.cu)
against PyTorch's own kernels (aten softplus.out, clamp_min(0, out=)) for
f32, bf16, f16, f64 at 2^20, 2^24, 2^28 elements, contiguous and transposed,
each as a percentage of the same run's copy bandwidth (out.copy_(x), same
dtype and size) and as PyTorch's time over ours; and the host overhead per
call of a 1024-element softplus.out from C++ (ours through the dispatcher,
PyTorch's at::softplus_out): host time per call while a spinning kernel
holds the GPU, so the calls only enqueue, plus the end-to-end time per call
for information. Times are CUDA-event medians over repeated
launches into preallocated outputs. Prints bench/report-style lines with
cuda_ metric names; the target lines end in PASS or FAIL. Also the
broadcasting example mul_sigmoid ([65536, 4096] x [4096] and x [65536, 1])
against x * torch.sigmoid(gate), as % of copy bandwidth; and sums
(sy::reduce: 2^28 elements, rows of [65536, 4096] and [256, 2^20]) against
torch.sum; the softmax example against torch.softmax; and the argmax example
against torch.argmax (informational: argmax_report; it and softmax_report
also run alone: see docs/benchmarks.md).
"""

import os
import statistics
import subprocess
import sys
from pathlib import Path

import torch

REPO = Path(__file__).resolve().parents[1]


def build():
    ext = REPO / "examples" / "python"
    env = dict(os.environ, SWITCHYARD_EXAMPLES_CUDA="1", MAX_JOBS=os.environ.get("MAX_JOBS", "16"))
    subprocess.run([sys.executable, "setup.py", "-q", "build_ext", "--inplace"], cwd=ext, env=env, check=True)
    sys.path.insert(0, str(ext))
    import switchyard_examples  # noqa: F401
    from torch.utils.cpp_extension import load

    return load(
        name="switchyard_cuda_bench",
        sources=[str(REPO / "bench" / "cuda" / "bench_ops.cu")],
        extra_include_paths=[str(REPO / "include")],
        extra_cflags=["-std=c++20", "-O3"],
        extra_cuda_cflags=["-std=c++20", "-O3", "--extended-lambda", "--expt-relaxed-constexpr"],
        verbose=False,
    )


def time_ms(fn, repeats):
    """Median of `repeats` samples; each sample times enough back-to-back
    launches to last about 1 ms or more."""
    fn()
    torch.cuda.synchronize()
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    fn()
    stop.record()
    stop.synchronize()
    once = max(start.elapsed_time(stop), 1e-3)
    inner = max(1, min(200, int(2.0 / once)))
    samples = []
    for _ in range(repeats):
        start.record()
        for _ in range(inner):
            fn()
        stop.record()
        stop.synchronize()
        samples.append(start.elapsed_time(stop) / inner)
    return statistics.median(samples)


def argmax_report(ops, repeats):
    """The argmax example against torch.argmax on [65536, 4096] (rows,
    columns) and all of it, f32 and bf16: bytes read per time as % of the
    same run's copy rate, and torch/ours. Informational."""
    for dname, dtype in (("f32", torch.float32), ("bf16", torch.bfloat16)):
        x = torch.randn(65536, 4096, device="cuda", dtype=torch.float32).to(dtype)
        copy_out = torch.empty_like(x)
        copy_ms = time_ms(lambda: copy_out.copy_(x), repeats)
        copy_rate = 2 * x.numel() * x.element_size() / copy_ms
        for name, dim in (("rows", -1), ("columns", 0), ("all", None)):
            assert torch.equal(ops.argmax(x, dim), torch.argmax(x, dim)), name
            ours_ms = time_ms(lambda: ops.argmax(x, dim), repeats)
            torch_ms = time_ms(lambda: torch.argmax(x, dim), repeats)
            read = x.numel() * x.element_size()
            print(f"# cuda argmax {dname} [65536, 4096] {name}: ours {ours_ms * 1e3:.1f} us "
                  f"({100 * read / ours_ms / copy_rate:.1f}% of copy), torch {torch_ms * 1e3:.1f} us "
                  f"({100 * read / torch_ms / copy_rate:.1f}%), torch/ours {torch_ms / ours_ms:.3f}", flush=True)
        del x, copy_out
        torch.cuda.empty_cache()


def softmax_report(ops, repeats):
    """The softmax example (transform_rows: x read once, its rows kept in
    registers) along the last dimension of [65536, 4096] against
    torch.softmax, as % of the same run's copy time, f32, bf16 and f16; and
    its backward (informational). Returns the % per dtype. Also runs alone:
    see docs/benchmarks.md."""
    softmax_pct = {}
    for dname, dtype in (("f32", torch.float32), ("bf16", torch.bfloat16), ("f16", torch.float16)):
        x = torch.randn(65536, 4096, device="cuda", dtype=torch.float32).to(dtype=dtype)
        copy_out = torch.empty_like(x)
        copy_ms = time_ms(lambda: copy_out.copy_(x), repeats)
        torch.testing.assert_close(ops.softmax(x[:64]), torch.softmax(x[:64], -1))
        ours_ms = time_ms(lambda: ops.softmax(x), repeats)
        torch_ms = time_ms(lambda: torch.softmax(x, -1), repeats)
        softmax_pct[dname] = 100 * copy_ms / ours_ms
        print(f"# cuda softmax {dname} [65536, 4096]: ours {ours_ms * 1e3:.1f} us ({100 * copy_ms / ours_ms:.1f}% of "
              f"copy), torch {torch_ms * 1e3:.1f} us ({100 * copy_ms / torch_ms:.1f}%), torch/ours "
              f"{torch_ms / ours_ms:.3f}", flush=True)
        # The backward (informational): y * (grad - sum(grad * y)).
        grad, y = torch.randn_like(x), torch.softmax(x, -1)
        ours_ms = time_ms(lambda: ops.softmax_backward(grad, y), repeats)
        torch_ms = time_ms(lambda: torch._softmax_backward_data(grad, y, -1, x.dtype), repeats)
        print(f"# cuda softmax_backward {dname} [65536, 4096]: ours {ours_ms * 1e3:.1f} us, torch "
              f"{torch_ms * 1e3:.1f} us, torch/ours {torch_ms / ours_ms:.3f}", flush=True)
        del x, copy_out, grad, y
        torch.cuda.empty_cache()
    return softmax_pct


def main():
    bench = build()
    ops = torch.ops.switchyard_examples
    dtypes = {"f32": torch.float32, "bf16": torch.bfloat16, "f16": torch.float16, "f64": torch.float64}
    repeats = 15
    torch.manual_seed(0)
    print(f"# device: {torch.cuda.get_device_name()}, torch {torch.__version__}, CUDA {torch.version.cuda}")
    results = {}
    for log2n in (20, 24, 28):
        n = 1 << log2n
        side = 1 << (log2n // 2)
        for dname, dtype in dtypes.items():
            x = torch.randn(n, device="cuda", dtype=torch.float32).to(dtype)
            out = torch.empty_like(x)
            copy_ms = time_ms(lambda: out.copy_(x), repeats)
            bytes_moved = 2 * n * x.element_size()
            copy_gbs = bytes_moved / copy_ms / 1e6
            for layout in ("contiguous", "transposed"):
                xin = x if layout == "contiguous" else x.view(side, side).t()
                o = out if layout == "contiguous" else out.view(side, side).t()
                cases = {
                    "softplus": (lambda: ops.softplus.out(xin, 1.0, 20.0, out=o),
                                 lambda: torch.ops.aten.softplus.out(xin, 1.0, 20.0, out=o)),
                    "relu": (lambda: bench.relu_out(xin, o), lambda: torch.clamp_min(xin, 0, out=o)),
                }
                for op, (ours, theirs) in cases.items():
                    ours_ms = time_ms(ours, repeats)
                    torch_ms = time_ms(theirs, repeats)
                    key = (op, dname, log2n, layout)
                    results[key] = (ours_ms, torch_ms, copy_gbs, bytes_moved)
                    pct = 100 * bytes_moved / ours_ms / 1e6 / copy_gbs
                    pct_torch = 100 * bytes_moved / torch_ms / 1e6 / copy_gbs
                    print(f"# cuda {op} {dname} 2^{log2n} {layout}: ours {ours_ms * 1e3:.1f} us ({pct:.1f}% of copy), "
                          f"torch {torch_ms * 1e3:.1f} us ({pct_torch:.1f}%), torch/ours {torch_ms / ours_ms:.3f}, "
                          f"copy {copy_gbs:.0f} GB/s", flush=True)
            del x, out
            torch.cuda.empty_cache()

    # The broadcasting example at 2^28 elements: x [65536, 4096] times
    # sigmoid(gate), the gate per column ([4096]) or per row ([65536, 1]);
    # bytes moved are x's and the result's (the gate is a rounding error).
    # PyTorch's side is what a user writes, x * torch.sigmoid(gate).
    bcast = {}
    for dname in ("f32", "bf16", "f16"):
        dtype = dtypes[dname]
        x = torch.randn(65536, 4096, device="cuda", dtype=torch.float32).to(dtype)
        out = torch.empty_like(x)
        copy_ms = time_ms(lambda: out.copy_(x), repeats)
        for gname, gate in (("per_column", torch.randn(4096, device="cuda").to(dtype)),
                            ("per_row", torch.randn(65536, 1, device="cuda").to(dtype))):
            # Against the float product rounded once, as ours computes it (PyTorch's
            # x * sigmoid(gate) rounds twice in 2-byte types: 2 ulps apart at times).
            head, head_gate = x[:64], gate[:64] if gname == "per_row" else gate
            torch.testing.assert_close(ops.mul_sigmoid(head, head_gate),
                                       (head.float() * torch.sigmoid(head_gate.float())).to(dtype))
            ours_ms = time_ms(lambda: ops.mul_sigmoid(x, gate), repeats)
            torch_ms = time_ms(lambda: x * torch.sigmoid(gate), repeats)
            bcast[(dname, gname)] = 100 * copy_ms / ours_ms
            print(f"# cuda mul_sigmoid {dname} [65536, 4096] gate {gname}: ours {ours_ms * 1e3:.1f} us "
                  f"({100 * copy_ms / ours_ms:.1f}% of copy), torch {torch_ms * 1e3:.1f} us "
                  f"({100 * copy_ms / torch_ms:.1f}%), torch/ours {torch_ms / ours_ms:.3f}", flush=True)
        del x, out
        torch.cuda.empty_cache()

    # Reductions (issue 16): sum of 2^28 elements, row sums of [65536, 4096]
    # and [256, 2^20] (bench_ops.cu's sum_out, sy::reduce) against torch.sum
    # into the same preallocated output, and each as % of the same run's copy
    # rate (bytes read / time against copy's bytes moved / time).
    reduce_results = {}
    for dname in ("f32", "bf16"):
        dtype = dtypes[dname]
        for shape, last in (((1 << 28,), False), ((65536, 4096), True), ((256, 1 << 20), True)):
            x = torch.randn(*shape, device="cuda", dtype=torch.float32).to(dtype)
            out = torch.empty(shape[:-1] if last else (), device="cuda", dtype=dtype)
            bench.sum_out(x, out, last)
            expected = x.double().sum(-1) if last else x.double().sum()
            torch.testing.assert_close(out.double(), expected, rtol=1e-2 if dname == "bf16" else 1e-4, atol=1e-2)
            first = out.clone()
            bench.sum_out(x, out, last)
            assert torch.equal(out, first), "the same bits on every call"
            dims = (-1,) if last else tuple(range(x.dim()))
            ours_ms = time_ms(lambda: bench.sum_out(x, out, last), repeats)
            torch_ms = time_ms(lambda: torch.sum(x, dim=dims, out=out), repeats)
            copy_out = torch.empty_like(x)
            copy_ms = time_ms(lambda: copy_out.copy_(x), repeats)
            read_rate = x.numel() * x.element_size() / ours_ms
            copy_rate = 2 * x.numel() * x.element_size() / copy_ms
            torch_rate = x.numel() * x.element_size() / torch_ms
            name = "x".join(str(s) for s in shape)
            reduce_results[(dname, name)] = (torch_ms / ours_ms, 100 * read_rate / copy_rate)
            print(f"# cuda sum {dname} [{name}]: ours {ours_ms * 1e3:.1f} us ({100 * read_rate / copy_rate:.1f}% of "
                  f"copy), torch {torch_ms * 1e3:.1f} us ({100 * torch_rate / copy_rate:.1f}%), torch/ours "
                  f"{torch_ms / ours_ms:.3f}", flush=True)
            del x, out, copy_out
            torch.cuda.empty_cache()

    softmax_pct = softmax_report(ops, repeats)
    argmax_report(ops, repeats)

    # Launch variants at 2^28 (device/cuda/for_each.h): how tiles are warmed
    # (SWITCHYARD_CUDA_WARM: 0 none, 1 prefetch.global.L2, 2 16-byte loads,
    # 3 prefetch.global.L1; at the dtype's default elements per thread) and
    # elements per thread per tile (at the default warming mode).
    warm_variants = [(f"warm={w}", w, 0) for w in range(4)]  # 0: the dtype's default per-thread count
    per_thread_variants = [(f"{p}/thread", bench.default_warm, p) for p in (4, 8, 16, 32)]
    for dname, dtype in dtypes.items():
        x = torch.randn(1 << 28, device="cuda", dtype=torch.float32).to(dtype)
        out = torch.empty_like(x)
        copy_ms = time_ms(lambda: out.copy_(x), repeats)

        def variant_line(op, variants):
            line = []
            for label, warm, per in variants:
                ms = time_ms(lambda: bench.launch_variant(x, out, warm, per, op), repeats)
                line.append(f"{label} {100 * copy_ms / ms:.1f}%")
            return ", ".join(line)

        print(f"# cuda softplus {dname} 2^28 by warming mode, % of copy: {variant_line(1, warm_variants)}", flush=True)
        for op, opname in ((0, "relu"), (1, "softplus")):
            print(f"# cuda {opname} {dname} 2^28 by elements per thread, % of copy: "
                  f"{variant_line(op, per_thread_variants)}", flush=True)
        del x, out
        torch.cuda.empty_cache()

    small = torch.randn(1024, device="cuda")
    small_out = torch.empty_like(small)
    # Host cost per call, enqueued behind a kernel that holds the GPU (so
    # nothing waits for it); ours and PyTorch's alternate, best of 7 each.
    # (0: at::softplus_out, 1: our softplus.out, 2: our relu_out without the
    # dispatcher, which separates op_args' cost from transform's.)
    ours_runs, torch_runs, relu_runs = [], [], []
    for _ in range(7):
        ours_runs.append(bench.host_overhead(small, small_out, 500, 1))
        torch_runs.append(bench.host_overhead(small, small_out, 500, 0))
        relu_runs.append(bench.host_overhead(small, small_out, 500, 2))
    ours_us, torch_us, relu_us = 1e6 * min(ours_runs), 1e6 * min(torch_runs), 1e6 * min(relu_runs)
    print(f"# cuda host overhead, softplus.out of 1024 f32 from C++ (host time per call, GPU held busy): "
          f"ours {ours_us:.2f} us, at::softplus_out {torch_us:.2f} us, relu_out (op_args + for_each, "
          f"no dispatcher) {relu_us:.2f} us", flush=True)
    ours_e2e = 1e6 * min(bench.end_to_end_time(small, small_out, 20000, 1) for _ in range(3))
    torch_e2e = 1e6 * min(bench.end_to_end_time(small, small_out, 20000, 0) for _ in range(3))
    print(f"# cuda end to end, 20000 calls then synchronize, per call: ours {ours_e2e:.2f} us, "
          f"at::softplus_out {torch_e2e:.2f} us (mostly the GPU's launch-to-launch time)", flush=True)

    def pct(op, d, log2n=28, layout="contiguous"):
        ours_ms, _, copy_gbs, moved = results[(op, d, log2n, layout)]
        return 100 * moved / ours_ms / 1e6 / copy_gbs

    def ratio(op, d, log2n, layout):
        ours_ms, torch_ms, _, _ = results[(op, d, log2n, layout)]
        return torch_ms / ours_ms

    targets = [
        ("cuda_softplus_f32_pct_copy", pct("softplus", "f32"), 95.0, True),
        ("cuda_softplus_bf16_pct_copy", pct("softplus", "bf16"), 95.0, True),
        ("cuda_softplus_f16_pct_copy", pct("softplus", "f16"), 95.0, True),
        ("cuda_softplus_f64_pct_copy", pct("softplus", "f64"), 90.0, True),
        ("cuda_softplus_f32_transposed_vs_torch", ratio("softplus", "f32", 24, "transposed"), 0.95, True),
        ("cuda_host_overhead_ours_over_torch", ours_us / torch_us, 1.0, False),
    ] + [(f"cuda_bcast_mul_sigmoid_{d}_pct_copy", bcast[(d, "per_column")], 95.0, True) for d in ("f32", "bf16", "f16")]
    targets += [(f"cuda_sum_{d}_{name}_vs_torch", reduce_results[(d, name)][0], 1.0, True)
                for d in ("f32", "bf16") for name in ("268435456", "65536x4096", "256x1048576")
                if d == "f32" or name == "268435456"]
    targets += [(f"cuda_softmax_{d}_pct_copy", softmax_pct[d], 85.0, True) for d in ("f32", "bf16")]
    for d in ("f32", "bf16", "f16"):
        print(f"cuda_bcast_mul_sigmoid_per_row_{d}_pct_copy {bcast[(d, 'per_row')]:.1f} (informational)")
    for d in dtypes:
        print(f"cuda_softplus_{d}_vs_torch_2^28 {ratio('softplus', d, 28, 'contiguous'):.3f} (informational)")
        print(f"cuda_relu_{d}_pct_copy_2^28 {pct('relu', d):.1f} (informational)")
    failed = 0
    for name, value, goal, higher in targets:
        ok = value >= goal if higher else value <= goal
        failed += not ok
        print(f"{name} {value:.3f} {'>=' if higher else '<='}{goal:g} {'PASS' if ok else 'FAIL'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
