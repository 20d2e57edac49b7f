# Tests run against the installed switchyard_examples package
# (pip install --no-build-isolation ./examples/python), or the in-place build.
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples" / "python"))
