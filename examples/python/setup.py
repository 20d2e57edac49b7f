# Builds the switchyard example ops as a PyTorch extension:
#   pip install --no-build-isolation ./examples/python
# then `import switchyard_examples` registers torch.ops.switchyard_examples.*.
#
# With a CUDA build of PyTorch and nvcc, the op files are compiled by nvcc
# (through examples/torch/cuda/*.cu, which include them) and register CUDA
# kernels as well; SWITCHYARD_EXAMPLES_CUDA=0 forces the CPU-only build,
# =1 requires CUDA.
import os
import shutil
import sys
from pathlib import Path

import torch
from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CppExtension, CUDAExtension

here = Path(__file__).resolve().parent
repo = here.parents[1]
ops = ("softplus", "softplus_backward", "mul_sigmoid", "relu", "op", "functional", "sumsq", "softmax", "argmax")
# Device-independent registrations, compiled by the C++ compiler either way.
host_only = [str(repo / "examples" / "torch" / f) for f in ("mutating_ops.cpp", "derivatives.cpp")]

wanted = os.environ.get("SWITCHYARD_EXAMPLES_CUDA", "auto")
cuda_possible = torch.version.cuda is not None and (
    shutil.which("nvcc") is not None or bool(os.environ.get("CUDA_HOME"))
)
if wanted == "1" and not cuda_possible:
    raise SystemExit("SWITCHYARD_EXAMPLES_CUDA=1 but PyTorch has no CUDA or nvcc was not found")
use_cuda = cuda_possible and wanted != "0"

# switchyard needs C++20; hidden visibility keeps two extensions that include
# it from sharing (and clashing on) inline symbols. OpenMP, as PyTorch's own
# CPU kernels are built (Linux: Apple's clang has no -fopenmp): with it
# at::parallel_for runs on PyTorch's threads, and the ops' CPU kernels run
# there too (docs/torch.md, "CPU threads").
openmp = ["-fopenmp"] if sys.platform.startswith("linux") else []
cxx_flags = ["-std=c++20", "-O3", "-fvisibility=hidden"] + openmp
link_flags = openmp
# On macOS with an MPS build of PyTorch the device-neutral ops also register
# for MPS and run through switchyard's Metal device (include/switchyard/
# torch/mps.h); SWITCHYARD_EXAMPLES_METAL=0 leaves Metal out, =1 requires it.
wanted_metal = os.environ.get("SWITCHYARD_EXAMPLES_METAL", "auto")
metal_possible = sys.platform == "darwin" and torch.backends.mps.is_built()
if wanted_metal == "1" and not metal_possible:
    raise SystemExit("SWITCHYARD_EXAMPLES_METAL=1 but this is not macOS with an MPS build of PyTorch")
if metal_possible and wanted_metal != "0":
    cxx_flags.append("-DSWITCHYARD_WITH_METAL=1")
module = str(here / "switchyard_examples" / "module.cpp")
if use_cuda:
    extension = CUDAExtension(
        "switchyard_examples._C",
        [module] + host_only + [str(repo / "examples" / "torch" / "cuda" / f"{op}.cu") for op in ops],
        include_dirs=[str(repo / "include")],
        # On top of PyTorch's default nvcc flags (which define
        # __CUDA_NO_HALF_OPERATORS__ and friends): C++20, and
        # __host__ __device__ lambdas for for_each.
        extra_compile_args={
            "cxx": cxx_flags,
            "nvcc": ["-std=c++20", "-O3", "--extended-lambda", "--expt-relaxed-constexpr",
                     "-Xcompiler=-fvisibility=hidden" + "".join("," + f for f in openmp)],
        },
        extra_link_args=link_flags,
    )
else:
    extension = CppExtension(
        "switchyard_examples._C",
        [module] + host_only + [str(repo / "examples" / "torch" / f"{op}.cpp") for op in ops],
        include_dirs=[str(repo / "include")],
        extra_compile_args=cxx_flags,
        extra_link_args=link_flags,
    )

setup(
    name="switchyard_examples",
    version="0.1.0",
    description="Example PyTorch ops written with switchyard",
    packages=["switchyard_examples"],
    ext_modules=[extension],
    cmdclass={"build_ext": BuildExtension},
)
