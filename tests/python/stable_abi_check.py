"""Loads the stable-ABI softplus (examples/stable_abi) into this PyTorch and
checks it against torch.nn.functional.softplus: every float dtype, strided
and broadcast (stride 0) inputs, an empty one, and the dtype error.

    python tests/python/stable_abi_check.py LIBRARY

The same binary, built once, is loaded by each PyTorch version tested.
"""

import sys

import torch
import torch.nn.functional as F

torch.ops.load_library(sys.argv[1])
softplus = torch.ops.switchyard_stable.softplus

base = torch.randn(6, 10, dtype=torch.float64) * 8
for dtype in (torch.float16, torch.bfloat16, torch.float32, torch.float64):
    x = base.to(dtype)
    for name, t in (("contiguous", x), ("transposed", x.t()), ("sliced", x[:, ::3]),
                    ("expanded", x[:1].expand(6, 10)), ("empty", x[:0])):
        torch.testing.assert_close(softplus(t, 2.0, 5.0), F.softplus(t, 2.0, 5.0), msg=f"{dtype} {name}")
try:
    softplus(torch.ones(3, dtype=torch.int32))
except RuntimeError as e:
    assert "softplus: argument 'x' has dtype Int" in str(e), str(e)
else:
    raise AssertionError("an int32 input was not refused")
print(f"stable-ABI softplus loaded by torch {torch.__version__}: 4 dtypes x 5 layouts and the dtype error passed")
