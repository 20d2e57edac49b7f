// Everything in switchyard that needs no torch or vendor (CUDA, Metal,
// WebGPU) header: the core, thread pools, views, the CPU device, for_each,
// transform, transform_reduce, kernel math, kernel types and shader
// tracing, and lazy chains. Add switchyard/torch.h for the PyTorch adapter;
// define SWITCHYARD_WITH_WEBGPU (the switchyard::webgpu CMake target) for
// for_each on WebGPU.
#pragma once

#include "switchyard/core.h"
#include "switchyard/device/any_device.h"
#include "switchyard/device/buffer.h"
#include "switchyard/device/cpu.h"
#include "switchyard/device/device.h"
#include "switchyard/for_each.h"
#include "switchyard/kernel_types.h"
#include "switchyard/lazy.h"
#include "switchyard/math.h"
#include "switchyard/parallel.h"
#include "switchyard/reduce.h"
#include "switchyard/shader.h"
#include "switchyard/transform.h"
#include "switchyard/transform_rows.h"
#include "switchyard/view.h"
