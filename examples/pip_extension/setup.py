# The switchyard headers come from the installed package.
import switchyard
from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CppExtension

setup(
    packages=["scaled_add"],
    ext_modules=[
        CppExtension(
            "scaled_add._C",
            ["scaled_add/scaled_add.cpp", "scaled_add/module.cpp"],
            include_dirs=[switchyard.get_include()],
            # -fopenmp: CPU kernels run on PyTorch's threads (docs/torch.md).
            extra_compile_args=["-std=c++20", "-O3", "-fvisibility=hidden", "-fopenmp"],
            extra_link_args=["-fopenmp"],
        )
    ],
    cmdclass={"build_ext": BuildExtension},
)
