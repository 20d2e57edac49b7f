// The torch adapter: torch values as tags, views from tensors, checks, device
// guard and dispatch coordinates. Includes only the c10/ATen headers it needs
// (never torch/extension.h).
#pragma once

#include "switchyard/torch/register.h"
#include "switchyard/torch/tensor.h"
#include "switchyard/torch/types.h"
