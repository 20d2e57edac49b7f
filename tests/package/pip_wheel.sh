#!/usr/bin/env bash
# The pip package end to end: builds the switchyard wheel, installs it into a
# fresh virtual environment (which sees the system's torch), builds
# examples/pip_extension against it and checks its op against PyTorch, and
# builds tests/package/consumer with find_package through
# `python -m switchyard --cmakedir`. Run from the repository root.
set -euo pipefail
work=build/pip
rm -rf "$work"
mkdir -p "$work"
python3 -m pip wheel -q --no-build-isolation --no-deps -w "$work/dist" .
python3 -m venv --system-site-packages "$work/venv"
py="$PWD/$work/venv/bin/python"
"$py" -m pip install -q --no-deps --no-index "$work"/dist/switchyard-*.whl
"$py" -m switchyard --version
test -f "$("$py" -m switchyard --include-dir)/switchyard/switchyard.h"

# The extension, built in a copy (pip builds a local folder in place).
cp -r examples/pip_extension "$work/ext"
"$py" -m pip install -q --no-build-isolation --no-deps "$work/ext"
(cd "$work" && "$py" - <<'PY'
import torch
import scaled_add

x = torch.randn(37, 1000)
for dtype in (torch.float32, torch.float64, torch.bfloat16, torch.float16):
    a, b = x.to(dtype), torch.randn(1000).to(dtype)
    torch.testing.assert_close(scaled_add.scaled_add(a, b, 0.5), a + 0.5 * b)
print("pip extension: scaled_add matches PyTorch in f32, f64, bf16 and f16")
PY
)

# CMake consumers find the same package.
cmake -S tests/package/consumer -B "$work/cmake" -DCONSUME_MODE=find_package \
    -Dswitchyard_DIR="$("$py" -m switchyard --cmakedir)" > "$work/cmake.log"
cmake --build "$work/cmake" > /dev/null
"$work/cmake/consumer"
echo "pip package: wheel, extension and CMake consumer OK"
