// The view layer: strided_ref, iteration orders, flat and ranked views,
// memory overlap checks.
#pragma once

#include "switchyard/view/fast_divide.h"
#include "switchyard/view/flat.h"
#include "switchyard/view/iteration_order.h"
#include "switchyard/view/overlap.h"
#include "switchyard/view/reduction_layout.h"
#include "switchyard/view/row_layout.h"
#include "switchyard/view/strided_ref.h"
#include "switchyard/view/tensor.h"
