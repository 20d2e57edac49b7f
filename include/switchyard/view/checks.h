// Checks shared by all views: the array's device and dtype must be the ones
// the view was instantiated for. Errors name the view, the argument and both
// values, and are thrown in every build mode.
#pragma once

#include <stdexcept>
#include <string>

#include "switchyard/core/dtype.h"
#include "switchyard/core/enums.h"
#include "switchyard/view/strided_ref.h"

namespace switchyard::detail {

template <auto Device, auto DType>
void check_view_target(strided_ref const& ref, char const* view) {
    constexpr device_kind device = core_device_v<Device>;
    constexpr dtype type = core_dtype_v<DType>;
    if (ref.device != device)
        throw std::invalid_argument(std::string(view) + ": " + ref_label(ref.name) + " is on " +
                                    std::string(to_string(ref.device)) + " but the view is for " +
                                    std::string(to_string(device)));
    if (ref.type != type)
        throw std::invalid_argument(std::string(view) + ": " + ref_label(ref.name) + " has dtype " +
                                    std::string(to_string(ref.type)) + " but the view expects " +
                                    std::string(to_string(type)));
}

}  // namespace switchyard::detail
