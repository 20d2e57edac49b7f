// Helpers for the lazy chain tests, shared by the CPU and CUDA suites.
#pragma once

#include <cstddef>

#include "switchyard/view/strided_ref.h"

namespace switchyard_tests {

// chain.add(y) K times: a chain with K array operands.
template <std::size_t K, typename Chain>
auto add_each(Chain const& chain, switchyard::strided_ref const& y) {
    if constexpr (K == 0)
        return chain;
    else
        return add_each<K - 1>(chain.add(y), y);
}

}  // namespace switchyard_tests
