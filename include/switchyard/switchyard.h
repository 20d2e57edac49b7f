// Everything in switchyard that needs no torch or vendor (CUDA, Metal,
// WebGPU) header: the core, thread pools, views, the CPU device, for_each and
// kernel math. Add switchyard/torch.h for the PyTorch adapter.
#pragma once

#include "switchyard/core.h"
#include "switchyard/device/any_device.h"
#include "switchyard/device/buffer.h"
#include "switchyard/device/cpu.h"
#include "switchyard/device/device.h"
#include "switchyard/for_each.h"
#include "switchyard/math.h"
#include "switchyard/parallel.h"
#include "switchyard/view.h"
