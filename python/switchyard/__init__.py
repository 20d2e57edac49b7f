"""switchyard's C++ headers and CMake package, for building extensions.

    import switchyard
    switchyard.get_include()    # the folder to add with -I
    switchyard.get_cmake_dir()  # switchyard_DIR for find_package(switchyard)

The same from a shell: ``python -m switchyard --includes`` or ``--cmakedir``.
"""

from importlib import metadata as _metadata
from pathlib import Path as _Path

__all__ = ["get_include", "get_cmake_dir", "__version__"]

try:
    __version__ = _metadata.version("switchyard")
except _metadata.PackageNotFoundError:  # imported from a source tree
    __version__ = "unknown"

_root = _Path(__file__).resolve().parent


def _existing(path: _Path, what: str) -> str:
    if not path.exists():
        raise RuntimeError(
            f"switchyard: {what} not found at {path}; this package is meant to be installed "
            "(pip install switchyard, or pip install . in the repository), not imported from its source tree")
    return str(path)


def get_include() -> str:
    """The folder holding ``switchyard/switchyard.h``: pass it with -I."""
    return _existing(_root / "include", "the C++ headers")


def get_cmake_dir() -> str:
    """The folder holding ``switchyardConfig.cmake``: set switchyard_DIR to it
    (or add it to CMAKE_PREFIX_PATH) before find_package(switchyard)."""
    return _existing(_root / "share" / "cmake" / "switchyard", "the CMake package")
