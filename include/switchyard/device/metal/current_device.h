// The Metal device that for_each and transform use on this thread
// (device/current_device.h): the one a metal_device_guard names, else a
// process-wide default device created on first use (the system's default
// GPU; where Metal is not available, creating it throws device_error).
//
//     switchyard::metal_device dev;
//     switchyard::metal_device_guard use(dev);   // for_each on metal runs on dev until `use` ends
#pragma once

#include "switchyard/device/current_device.h"
#include "switchyard/device/metal.h"

namespace switchyard {

using metal_device_guard = device_guard<metal_device>;

inline metal_device& current_metal_device() { return current_device<metal_device>(); }

}  // namespace switchyard
