// Helpers for the lazy chain tests, shared by the CPU, CUDA and Metal suites.
#pragma once

#include <cstddef>
#include <vector>

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

// chain.add(ys[n - K])...add(ys[n - 1]), n = ys.size(): K array operands, one step each.
template <std::size_t K, typename Chain>
auto add_all(Chain const& chain, std::vector<switchyard::strided_ref> const& ys) {
    if constexpr (K == 0)
        return chain;
    else
        return add_all<K - 1>(chain.add(ys[ys.size() - K]), ys);
}

}  // namespace switchyard_tests
