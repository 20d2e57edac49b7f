// The core layer: tags, concepts, axes, enums, dtypes, dispatch sets and
// sparse dispatch tables. Standard library only.
#pragma once

#include "switchyard/core/axes.h"
#include "switchyard/core/axis.h"
#include "switchyard/core/bfloat16.h"
#include "switchyard/core/combine.h"
#include "switchyard/core/concepts.h"
#include "switchyard/core/config.h"
#include "switchyard/core/dispatch_error.h"
#include "switchyard/core/dispatch_set.h"
#include "switchyard/core/dispatch_table.h"
#include "switchyard/core/dtype.h"
#include "switchyard/core/enums.h"
#include "switchyard/core/half.h"
#include "switchyard/core/named.h"
#include "switchyard/core/row_stat.h"
#include "switchyard/core/tag.h"
#include "switchyard/core/tag_device.h"
#include "switchyard/core/type_label.h"
