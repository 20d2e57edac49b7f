# Tests run against the installed switchyard_examples package
# (pip install --no-build-isolation ./examples/python), or the in-place build.
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples" / "python"))

import zlib

import pytest


@pytest.fixture(autouse=True)
def _seed_global_generators(request):
    """Seed torch's global generators from the test's name before each test,
    so unseeded draws (torch.randn without a generator) do not depend on which
    tests ran before, and a failure repeats when the test is rerun alone."""
    try:
        import torch
    except ImportError:
        yield
        return
    # The file and test name, not the node id: that depends on the directory pytest runs from.
    torch.manual_seed(zlib.crc32(f"{request.node.path.name}::{request.node.name}".encode()))
    yield
