// Shader devices (WebGPU, Metal): symbolic values, math on them, symbolic
// views (flat and tensor), kernel tracing and the WGSL emitter. API-free: none of this needs a
// WebGPU or Metal header. for_each on WebGPU (device/webgpu/for_each.h) is
// added by switchyard/for_each.h when SWITCHYARD_WITH_WEBGPU is defined.
#pragma once

#include "switchyard/shader/math.h"
#include "switchyard/shader/trace.h"
#include "switchyard/shader/value.h"
#include "switchyard/shader/tensor_view.h"
#include "switchyard/shader/view.h"
#include "switchyard/shader/wgsl.h"
#include "switchyard/shader/wgsl_reduce.h"
