// Lazy elementwise chains: lazy(x).relu().mul(2.0f).add(y).compute(out), fused
// into one transform on every device (lazy/chain.h).
#pragma once

#include "switchyard/lazy/chain.h"
#include "switchyard/lazy/ops.h"
