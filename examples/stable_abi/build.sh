#!/usr/bin/env bash
# Builds the stable-ABI softplus: build.sh OUTPUT.so
# Against the installed PyTorch's headers, for the stable ABI of 2.11
# (TORCH_TARGET_VERSION), so PyTorch 2.11 and later load the same binary.
# It needs libtorch_cpu.so (the C shim functions) by name only: the loading
# PyTorch has it loaded already, whichever version that is.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cxx="${CXX:-g++}"
torch_include="$(python3 -c 'import torch.utils.cpp_extension as e; print(e.include_paths()[0])')"
torch_lib="$(python3 -c 'import torch.utils.cpp_extension as e; print(e.library_paths()[0])')"
# A compiler that finds no libstdc++.so (a private GCC install that ships only
# the static archive) links libstdc++ into the library, and that second copy
# of the C++ runtime crashes in a process that has PyTorch's loaded
# (docs/torch.md). Such a build links the libstdc++ that PyTorch's process
# loads instead, by its path.
runtime=()
if [[ "$("$cxx" -print-file-name=libstdc++.so)" != /* ]]; then
    loaded="$(python3 -c 'import torch
print(next((l.split()[-1] for l in open("/proc/self/maps") if "/libstdc++.so" in l), ""))')"
    if [[ -z "$loaded" ]]; then
        echo "build.sh: $cxx finds no libstdc++.so and PyTorch's process loads none to link instead" >&2
        exit 1
    fi
    runtime=("$loaded")
fi
"$cxx" -std=c++20 -O3 -shared -fPIC -fvisibility=hidden -Wall -Wextra \
    -DTORCH_TARGET_VERSION="(((0ULL + 2) << 56) | ((0ULL + 11) << 48))" \
    -isystem "$torch_include" -I "$here/../../include" \
    "$here/softplus_stable.cpp" -o "$1" -L "$torch_lib" -ltorch_cpu "${runtime[@]}"
