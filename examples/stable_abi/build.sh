#!/usr/bin/env bash
# Builds the stable-ABI softplus: build.sh OUTPUT.so
# Against the installed PyTorch's headers, for the stable ABI of 2.11
# (TORCH_TARGET_VERSION), so PyTorch 2.11 and later load the same binary.
# It needs libtorch_cpu.so (the C shim functions) by name only: the loading
# PyTorch has it loaded already, whichever version that is.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
torch_include="$(python3 -c 'import torch.utils.cpp_extension as e; print(e.include_paths()[0])')"
torch_lib="$(python3 -c 'import torch.utils.cpp_extension as e; print(e.library_paths()[0])')"
"${CXX:-g++}" -std=c++20 -O3 -shared -fPIC -fvisibility=hidden -Wall -Wextra \
    -DTORCH_TARGET_VERSION="(((0ULL + 2) << 56) | ((0ULL + 11) << 48))" \
    -isystem "$torch_include" -I "$here/../../include" \
    "$here/softplus_stable.cpp" -o "$1" -L "$torch_lib" -ltorch_cpu
