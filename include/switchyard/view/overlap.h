// Memory overlap of arrays, for ops that write. An output must not have
// internal overlap (two indices naming one element: a dimension of size > 1
// with stride 0, as after expand), and it must either be exactly an input
// (in place) or share no memory with it. Decided from sizes and strides only:
//
//   memory_overlap_of(a, b)   none     the byte ranges are disjoint
//                             full     same data, dtype, sizes and strides
//                             partial  both are dense and the ranges meet
//                             unknown  the ranges meet but a layout is not
//                                      dense (x[::2] and x[1::2] do not
//                                      share an element); callers allow it
#pragma once

#include <algorithm>
#include <cstdint>

#include "switchyard/core/dtype.h"
#include "switchyard/view/strided_ref.h"

namespace switchyard {

enum class memory_overlap { none, full, partial, unknown };

// A dimension of size > 1 with stride 0 in an array that has elements (an
// empty array names no element twice, whatever its strides).
constexpr bool has_internal_overlap(strided_ref const& r) noexcept {
    if (r.empty()) return false;
    for (std::int32_t d = 0; d < r.rank; ++d)
        if (r.sizes[d] > 1 && r.strides[d] == 0) return true;
    return false;
}

namespace detail {

// Dense in some order of its dimensions: every element of [lo, hi) is used once.
inline bool is_dense_in_memory(strided_ref const& r) {
    std::uint64_t strides[max_rank], sizes[max_rank];
    std::int32_t n = 0;
    for (std::int32_t d = 0; d < r.rank; ++d) {
        if (r.sizes[d] == 1) continue;
        sizes[n] = static_cast<std::uint64_t>(r.sizes[d]);
        strides[n] = stride_magnitude(r.strides[d]);
        ++n;
    }
    // Insertion sort by stride: at most max_rank dimensions.
    for (std::int32_t i = 1; i < n; ++i)
        for (std::int32_t j = i; j > 0 && strides[j] < strides[j - 1]; --j) {
            std::swap(strides[j], strides[j - 1]);
            std::swap(sizes[j], sizes[j - 1]);
        }
    std::uint64_t expected = 1;
    for (std::int32_t i = 0; i < n; ++i) {
        if (strides[i] != expected || __builtin_mul_overflow(expected, sizes[i], &expected)) return false;
    }
    return true;
}

// Byte addresses in 128 bits: sizes and strides that a view accepts can
// still reach past int64 in bytes, and a wrapped range would look disjoint
// from one it overlaps.
__extension__ using wide_int = __int128;

struct byte_range {
    wide_int lo, hi;  // [lo, hi)
};

inline byte_range bytes_of(strided_ref const& r) {
    wide_int lo = 0, hi = 0;
    for (std::int32_t d = 0; d < r.rank; ++d) {
        wide_int const reach = static_cast<wide_int>(r.sizes[d] - 1) * r.strides[d];
        (reach < 0 ? lo : hi) += reach;
    }
    auto const element = static_cast<wide_int>(dtype_size(r.type));
    auto const base = static_cast<wide_int>(reinterpret_cast<std::intptr_t>(r.data));
    return {base + lo * element, base + (hi + 1) * element};
}

}  // namespace detail

inline memory_overlap memory_overlap_of(strided_ref const& a, strided_ref const& b) {
    if (a.numel() == 0 || b.numel() == 0 || a.device != b.device || a.device_index != b.device_index)
        return memory_overlap::none;
    // On shader devices data is a buffer handle, element 0 at the buffer's
    // start: different handles never share memory.
    bool const handles = a.device == device_kind::webgpu || a.device == device_kind::metal;
    if (handles && a.data != b.data) return memory_overlap::none;
    detail::byte_range const ra = detail::bytes_of(a), rb = detail::bytes_of(b);
    if (ra.hi <= rb.lo || rb.hi <= ra.lo) return memory_overlap::none;
    bool same = a.data == b.data && a.type == b.type && a.rank == b.rank;
    for (std::int32_t d = 0; same && d < a.rank; ++d)
        same = a.sizes[d] == b.sizes[d] && (a.sizes[d] == 1 || a.strides[d] == b.strides[d]);
    if (same) return memory_overlap::full;
    if (detail::is_dense_in_memory(a) && detail::is_dense_in_memory(b)) return memory_overlap::partial;
    return memory_overlap::unknown;
}

// Whether an elementwise operation may write `out` while reading `in`:
// exactly the same array (in place) or no shared memory. Memory the strides
// cannot prove disjoint counts as shared.
inline bool in_place_or_disjoint(strided_ref const& out, strided_ref const& in) {
    memory_overlap const m = memory_overlap_of(out, in);
    return m == memory_overlap::none || m == memory_overlap::full;
}

}  // namespace switchyard
