// coalesce(ref): an array's dimensions with size-1 dimensions dropped and
// every dimension merged into the one outside it where together they step
// evenly (outer stride == inner size * inner stride). Walking the result in
// row-major order visits the same elements at the same offsets with fewer
// divisions: a contiguous or merely sliced array becomes one or two
// dimensions. Shared by the CPU's strided_walk and the shader views.
#pragma once

#include <cstdint>

#include "switchyard/view/strided_ref.h"

namespace switchyard::detail {

struct coalesced_dims {
    std::int32_t rank = 0;
    std::int64_t sizes[max_rank] = {};
    std::int64_t strides[max_rank] = {};
};

inline coalesced_dims coalesce(strided_ref const& ref) noexcept {
    coalesced_dims c;
    for (std::int32_t d = 0; d < ref.rank; ++d) {
        std::int64_t const size = ref.sizes[d], stride = ref.strides[d];
        if (size == 1) continue;
        // (An empty array may have any sizes and strides: size * stride and
        // the merged size can overflow.)
        std::int64_t span = 0, merged = 0;
        if (c.rank > 0 && !__builtin_mul_overflow(size, stride, &span) && c.strides[c.rank - 1] == span &&
            !__builtin_mul_overflow(c.sizes[c.rank - 1], size, &merged)) {
            c.sizes[c.rank - 1] = merged;
            c.strides[c.rank - 1] = stride;
        } else {
            c.sizes[c.rank] = size;
            c.strides[c.rank] = stride;
            ++c.rank;
        }
    }
    return c;
}

}  // namespace switchyard::detail
