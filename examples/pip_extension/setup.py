# The switchyard headers come from the installed package.
import sys

import switchyard
from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CppExtension

openmp = ["-fopenmp"] if sys.platform.startswith("linux") else []

setup(
    packages=["scaled_add"],
    ext_modules=[
        CppExtension(
            "scaled_add._C",
            ["scaled_add/scaled_add.cpp", "scaled_add/module.cpp"],
            include_dirs=[switchyard.get_include()],
            # -fopenmp (Linux): CPU kernels run on PyTorch's threads (docs/torch.md).
            extra_compile_args=["-std=c++20", "-O3", "-fvisibility=hidden"] + openmp,
            extra_link_args=openmp,
        )
    ],
    cmdclass={"build_ext": BuildExtension},
)
