// Everything in switchyard that needs no torch or vendor (CUDA, Metal,
// WebGPU) header. Later layers join this umbrella as they land.
#pragma once

#include "switchyard/core.h"
