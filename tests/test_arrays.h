// Test helpers shared by the CPU transform and reduction tests: a strided
// array over its own buffer, row-major strides, and a walk over coordinates.
#pragma once

#include <switchyard/view/strided_ref.h>

#include <cstdint>
#include <vector>

namespace test_arrays {

namespace sy = switchyard;

// A strided array over its own buffer: sizes, strides (elements), and an
// offset of its first element in the buffer (for negative strides).
template <typename T>
struct array {
    std::vector<T> buffer;
    sy::strided_ref ref;

    array(sy::dtype type, std::vector<std::int64_t> sizes, std::vector<std::int64_t> strides, char const* name) {
        std::int64_t lo = 0, hi = 0;
        for (std::size_t d = 0; d < sizes.size(); ++d) {
            std::int64_t const reach = sizes[d] > 0 ? (sizes[d] - 1) * strides[d] : 0;
            (reach < 0 ? lo : hi) += reach;
        }
        buffer.resize(static_cast<std::size_t>(hi - lo + 1));
        ref = sy::strided_ref::make(buffer.data() - lo, type, sy::device_kind::cpu, sizes.data(), strides.data(),
                                    static_cast<std::int64_t>(sizes.size()), name);
    }
    // Element at coordinates `c` of the broadcast shape of rank `rank`.
    T& at(std::vector<std::int64_t> const& c) const {
        std::int64_t off = 0;
        std::int32_t const lead = static_cast<std::int32_t>(c.size()) - ref.rank;
        for (std::int32_t d = 0; d < ref.rank; ++d)
            if (ref.sizes[d] != 1) off += c[static_cast<std::size_t>(d + lead)] * ref.strides[d];
        return static_cast<T*>(ref.data)[off];
    }
};

inline std::vector<std::int64_t> row_major(std::vector<std::int64_t> const& sizes) {
    std::vector<std::int64_t> s(sizes.size());
    std::int64_t stride = 1;
    for (std::size_t d = sizes.size(); d-- > 0;) {
        s[d] = stride;
        stride *= sizes[d] > 1 ? sizes[d] : 1;
    }
    return s;
}

// Calls fn(coordinates) for every element of `sizes` in row-major order.
template <typename Fn>
void for_coords(std::vector<std::int64_t> const& sizes, Fn fn) {
    std::int64_t n = 1;
    for (auto s : sizes) n *= s;
    std::vector<std::int64_t> c(sizes.size());
    for (std::int64_t i = 0; i < n; ++i) {
        std::int64_t r = i;
        for (std::size_t d = sizes.size(); d-- > 0;) {
            c[d] = r % sizes[d];
            r /= sizes[d];
        }
        fn(c);
    }
}

}  // namespace test_arrays
