"""switchyard demo: softplus written once with switchyard, checked against
PyTorch and timed side by side on every device present (CPU always; CUDA when
the example ops were built for it)."""

import statistics
import time

import torch
import torch.nn.functional as F

import switchyard_examples as sx

ops = torch.ops.switchyard_examples


def timed(fn, reps):
    fn()  # warm up
    samples = []
    for _ in range(5):
        start = time.perf_counter()
        for _ in range(reps):
            fn()
        if torch.cuda.is_available():
            torch.cuda.synchronize()
        samples.append((time.perf_counter() - start) / reps)
    return statistics.median(samples)


def cases(device):
    n = 1 << 22
    yield "contiguous", torch.float32, torch.randn(n, device=device)
    yield "contiguous", torch.bfloat16, torch.randn(n, device=device, dtype=torch.bfloat16)
    yield "contiguous", torch.float16, torch.randn(n, device=device, dtype=torch.float16)
    yield "contiguous", torch.float64, torch.randn(n // 2, device=device, dtype=torch.float64)
    yield "transposed", torch.float32, torch.randn(2048, 2048, device=device).t()
    yield "sliced", torch.float32, torch.randn(2048, 4096, device=device)[:, ::2]
    yield "4-d", torch.float32, torch.randn(16, 32, 64, 128, device=device)


def main():
    devices = ["cpu"]
    if torch.cuda.is_available():
        devices.append("cuda")
    print(f"switchyard softplus vs PyTorch {torch.__version__} ({torch.get_num_threads()} CPU threads)\n")
    header = f"{'device':<7}{'layout':<12}{'dtype':<10}{'elements':>10}{'ours GB/s':>11}{'torch GB/s':>12}{'speedup':>9}  check"
    print(header)
    print("-" * len(header))
    failures = 0
    for device in devices:
        for layout, dtype, x in cases(device):
            try:
                want = F.softplus(x, 1.0, 20.0)
                got = sx.softplus(x, 1.0, 20.0)
            except RuntimeError as e:
                print(f"{device:<7}{layout:<12}{str(dtype)[6:]:<10} not available: {str(e).splitlines()[0][:80]}")
                continue
            ok = torch.allclose(got.float(), want.float(), rtol=1e-2 if dtype in (torch.float16, torch.bfloat16) else 1e-5, atol=1e-5)
            failures += not ok
            out_ours, out_torch = torch.empty_like(x), torch.empty_like(x)
            reps = 10 if x.numel() >= 1 << 20 else 100
            t_ours = timed(lambda: ops.softplus.out(x, 1.0, 20.0, out=out_ours), reps)
            t_torch = timed(lambda: torch.ops.aten.softplus.out(x, 1.0, 20.0, out=out_torch), reps)
            gbytes = 2 * x.numel() * x.element_size() / 1e9
            print(f"{device:<7}{layout:<12}{str(dtype)[6:]:<10}{x.numel():>10}{gbytes / t_ours:>11.2f}"
                  f"{gbytes / t_torch:>12.2f}{t_torch / t_ours:>8.2f}x  {'ok' if ok else 'MISMATCH'}")
    print("\nspeedup = PyTorch time / switchyard time (same run, preallocated outputs)")
    if failures:
        print(f"{failures} case(s) did not match PyTorch")
        raise SystemExit(1)


if __name__ == "__main__":
    main()
