"""torch.ops.scaled_add.scaled_add(x, y, alpha) = x + alpha * y, y broadcast."""

import torch

from . import _C  # noqa: F401  (registers the op)

scaled_add = torch.ops.scaled_add.scaled_add
