# Builds the switchyard example ops as a PyTorch extension:
#   pip install --no-build-isolation ./examples/python
# then `import switchyard_examples` registers torch.ops.switchyard_examples.*.
from pathlib import Path

from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CppExtension

here = Path(__file__).resolve().parent
repo = here.parents[1]
sources = [str(here / "switchyard_examples" / "module.cpp")] + [
    str(repo / "examples" / "torch" / name) for name in ("softplus.cpp", "relu.cpp", "op.cpp", "functional.cpp")
]

setup(
    name="switchyard_examples",
    version="0.1.0",
    description="Example PyTorch ops written with switchyard",
    packages=["switchyard_examples"],
    ext_modules=[
        CppExtension(
            "switchyard_examples._C",
            sources,
            include_dirs=[str(repo / "include")],
            # switchyard needs C++20; hidden visibility keeps two extensions that
            # include it from sharing (and clashing on) inline symbols.
            extra_compile_args=["-std=c++20", "-O3", "-fvisibility=hidden"],
        )
    ],
    cmdclass={"build_ext": BuildExtension},
)
