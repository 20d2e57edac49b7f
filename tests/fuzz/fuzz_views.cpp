// Fuzz target: strided_ref construction, coalescing, contiguity, memory
// overlap, joint iteration orders and elementwise layouts, each against a
// naive reference that enumerates every element's offset. Memory is never
// touched: arrays point into a made-up address range.
#include <switchyard/core.h>
#include <switchyard/view.h>
#include <switchyard/view/coalesce.h>
#include <switchyard/view/elementwise_layout.h>
#include <switchyard/view/overlap.h>

#include <algorithm>
#include <cstdio>
#include <cstdint>
#include <set>
#include <stdexcept>
#include <vector>

#include "fuzz_bytes.h"

namespace sy = switchyard;

namespace {

__extension__ using wide = __int128;

// Arrays with more elements than this get only the checks that need no
// enumeration.
constexpr std::int64_t enumerable = 4096;
// A made-up, aligned base address; offsets are relative to it.
char* const base = reinterpret_cast<char*>(std::uintptr_t{1} << 40);

struct shape_desc {
    std::int64_t rank = 0;
    std::int64_t sizes[sy::max_rank + 1] = {};
    std::int64_t strides[sy::max_rank + 1] = {};
};

std::int64_t read_size(fuzz::bytes& in, bool wild) {
    switch (in.in(0, 7)) {
        case 6: return in.in(0, 40);
        case 7: return wild ? in.any_int64() : in.in(0, 3);
        default: return in.in(0, 4);
    }
}

std::int64_t read_stride(fuzz::bytes& in, bool wild) {
    switch (in.in(0, 7)) {
        case 6: return in.in(-300, 300);
        case 7: return wild ? in.any_int64() : 0;
        default: return in.in(-5, 5);
    }
}

shape_desc read_shape(fuzz::bytes& in, bool wild) {
    shape_desc s;
    s.rank = wild && in.in(0, 15) == 0 ? in.in(-1, sy::max_rank + 1) : in.in(0, 5);
    for (std::int64_t d = 0; d < std::clamp<std::int64_t>(s.rank, 0, sy::max_rank + 1); ++d) {
        s.sizes[d] = read_size(in, wild);
        s.strides[d] = read_stride(in, wild);
    }
    return s;
}

sy::dtype read_dtype(fuzz::bytes& in) {
    constexpr sy::dtype types[] = {sy::dtype::f32, sy::dtype::f16, sy::dtype::f64, sy::dtype::i8};
    return types[in.in(0, 3)];
}

// Whether make must accept, must refuse, or may do either (an element count
// whose running product overflows although a later size is zero).
enum class verdict { accept, refuse, either };

verdict expected_make(shape_desc const& s) {
    if (s.rank < 0 || s.rank > sy::max_rank) return verdict::refuse;
    bool running_overflow = false;
    wide numel = 1;
    for (std::int64_t d = 0; d < s.rank; ++d) {
        if (s.sizes[d] < 0) return verdict::refuse;
        numel *= s.sizes[d];
        if (numel > INT64_MAX) {
            running_overflow = true;
            numel = INT64_MAX;  // saturate; a later zero still makes it empty
        }
    }
    bool zero = false;
    for (std::int64_t d = 0; d < s.rank; ++d) zero = zero || s.sizes[d] == 0;
    if (zero) return running_overflow ? verdict::either : verdict::accept;
    if (running_overflow) return verdict::refuse;
    wide reach = 0;
    for (std::int64_t d = 0; d < s.rank; ++d) {
        wide const stride = s.strides[d];
        reach += static_cast<wide>(s.sizes[d] - 1) * (stride < 0 ? -stride : stride);
    }
    return reach > INT64_MAX ? verdict::refuse : verdict::accept;
}

// Offsets (in elements) of every element, in row-major order of the logical shape.
std::vector<std::int64_t> offsets_of(std::int64_t const* sizes, std::int64_t const* strides, std::int32_t rank) {
    for (std::int32_t d = 0; d < rank; ++d)
        if (sizes[d] == 0) return {};
    std::int64_t n = 1;
    for (std::int32_t d = 0; d < rank; ++d) n *= sizes[d];
    std::vector<std::int64_t> out;
    out.reserve(static_cast<std::size_t>(n));
    std::vector<std::int64_t> c(static_cast<std::size_t>(rank), 0);
    for (std::int64_t i = 0; i < n; ++i) {
        std::int64_t off = 0;
        for (std::int32_t d = 0; d < rank; ++d) off += c[static_cast<std::size_t>(d)] * strides[d];
        out.push_back(off);
        for (std::int32_t d = rank; d-- > 0;) {
            if (++c[static_cast<std::size_t>(d)] < sizes[d]) break;
            c[static_cast<std::size_t>(d)] = 0;
        }
    }
    return out;
}
std::vector<std::int64_t> offsets_of(sy::strided_ref const& r) { return offsets_of(r.sizes, r.strides, r.rank); }

// Byte addresses (relative to base; 128-bit, as strides may be huge) an
// array's elements cover.
std::set<wide> bytes_covered(sy::strided_ref const& r) {
    std::set<wide> bytes;
    auto const size = static_cast<wide>(sy::dtype_size(r.type));
    wide const start = static_cast<char*>(r.data) - base;
    for (std::int64_t off : offsets_of(r))
        for (wide b = 0; b < size; ++b) bytes.insert(start + off * size + b);
    return bytes;
}

bool share_a_byte(std::set<wide> const& a, std::set<wide> const& b) {
    for (wide x : a)
        if (b.count(x)) return true;
    return false;
}

// Byte intervals meet (what an overlap check may conservatively treat as shared).
bool ranges_meet(sy::strided_ref const& a, sy::strided_ref const& b) {
    if (a.numel() == 0 || b.numel() == 0) return false;
    auto bounds = [](sy::strided_ref const& r) {
        auto const o = offsets_of(r);
        auto const [lo, hi] = std::minmax_element(o.begin(), o.end());
        auto const size = static_cast<wide>(sy::dtype_size(r.type));
        wide const start = static_cast<char*>(r.data) - base;
        return std::pair{start + *lo * size, start + (*hi + 1) * size};
    };
    auto const [alo, ahi] = bounds(a);
    auto const [blo, bhi] = bounds(b);
    return alo < bhi && blo < ahi;
}

bool same_elements_in_order(sy::strided_ref const& a, sy::strided_ref const& b) {
    if (a.type != b.type || a.rank != b.rank) return false;
    for (std::int32_t d = 0; d < a.rank; ++d)
        if (a.sizes[d] != b.sizes[d]) return false;
    if (a.numel() == 0) return true;
    auto const oa = offsets_of(a), ob = offsets_of(b);
    std::int64_t const shift =
        (static_cast<char*>(b.data) - static_cast<char*>(a.data)) / static_cast<std::int64_t>(sy::dtype_size(a.type));
    if ((static_cast<char*>(b.data) - static_cast<char*>(a.data)) % static_cast<std::int64_t>(sy::dtype_size(a.type)))
        return false;
    for (std::size_t i = 0; i < oa.size(); ++i)
        if (oa[i] != ob[i] + shift) return false;
    return true;
}

// Builds an array of `s`'s shape and strides at element `start` of base, or
// nothing when make refuses (checking that it had to).
bool try_make(shape_desc const& s, sy::dtype type, std::int64_t start, sy::strided_ref& out) {
    verdict const v = expected_make(s);
    if (fuzz::verbose()) {
        std::fprintf(stderr, "array %s at %lld: rank %lld sizes", sy::value_name(type).c_str(),
                     static_cast<long long>(start), static_cast<long long>(s.rank));
        for (std::int64_t d = 0; d < std::clamp<std::int64_t>(s.rank, 0, sy::max_rank + 1); ++d)
            std::fprintf(stderr, " %lld/%lld", static_cast<long long>(s.sizes[d]),
                         static_cast<long long>(s.strides[d]));
        std::fprintf(stderr, "\n");
    }
    try {
        out = sy::strided_ref::make(base + start * static_cast<std::int64_t>(sy::dtype_size(type)), type,
                                    sy::device_kind::cpu, s.sizes, s.strides, s.rank, "a");
    } catch (std::invalid_argument const&) {
        FUZZ_CHECK(v != verdict::accept);
        return false;
    }
    FUZZ_CHECK(v != verdict::refuse);
    return true;
}

bool small(sy::strided_ref const& r) { return r.numel() <= enumerable; }

void check_single(sy::strided_ref const& a) {
    sy::detail::coalesced_dims const c = sy::detail::coalesce(a);
    FUZZ_CHECK(c.rank <= a.rank);
    if (!small(a)) return;
    auto const offsets = offsets_of(a);
    // Coalescing visits the same offsets in the same order.
    if (a.numel() > 0) FUZZ_CHECK(offsets_of(c.sizes, c.strides, c.rank) == offsets);
    bool in_order = true;
    for (std::size_t i = 0; i < offsets.size(); ++i) in_order = in_order && offsets[i] == static_cast<std::int64_t>(i);
    FUZZ_CHECK(a.is_contiguous() == in_order);
    std::vector<std::int64_t> sorted = offsets;
    std::sort(sorted.begin(), sorted.end());
    bool const duplicates = std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end();
    // Internal overlap is only ever claimed where two indices share an element.
    if (sy::has_internal_overlap(a)) FUZZ_CHECK(duplicates);
    if (!sorted.empty()) {
        bool const dense =
            !duplicates && sorted.back() - sorted.front() + 1 == static_cast<std::int64_t>(sorted.size());
        FUZZ_CHECK(sy::detail::is_dense_in_memory(a) == dense);
    }
}

void check_pair(sy::strided_ref const& a, sy::strided_ref const& b) {
    sy::memory_overlap const m = sy::memory_overlap_of(a, b);
    FUZZ_CHECK(m == sy::memory_overlap_of(b, a));
    if (!small(a) || !small(b)) return;
    bool const shared = share_a_byte(bytes_covered(a), bytes_covered(b));
    if (shared) FUZZ_CHECK(m != sy::memory_overlap::none);
    if (m == sy::memory_overlap::partial) FUZZ_CHECK(shared);
    if (m == sy::memory_overlap::full) FUZZ_CHECK(same_elements_in_order(a, b));
    if (m == sy::memory_overlap::unknown) FUZZ_CHECK(ranges_meet(a, b));
    if (sy::in_place_or_disjoint(a, b)) FUZZ_CHECK(!shared || same_elements_in_order(a, b));
}

// 1-3 arrays of one shape: the joint order is a permutation, and `dense`
// means a flat index is every operand's offset.
void check_order(fuzz::bytes& in, sy::strided_ref const& first) {
    sy::strided_ref refs[3] = {first, first, first};
    int const n = static_cast<int>(in.in(1, 3));
    for (int k = 1; k < n; ++k)
        for (std::int32_t d = 0; d < first.rank; ++d) refs[k].strides[d] = read_stride(in, false);
    sy::strided_ref const* ptrs[3] = {&refs[0], &refs[1], &refs[2]};
    sy::iteration_order const order = sy::joint_iteration_order(ptrs, n);
    FUZZ_CHECK(order.rank == first.rank);
    std::vector<int> seen(static_cast<std::size_t>(first.rank), 0);
    for (std::int32_t d = 0; d < order.rank; ++d) {
        FUZZ_CHECK(order.dims[d] >= 0 && order.dims[d] < first.rank);
        ++seen[static_cast<std::size_t>(order.dims[d])];
    }
    for (int s : seen) FUZZ_CHECK(s == 1);
    if (!order.dense || !small(first)) return;
    for (int k = 0; k < n; ++k) {
        auto const o = offsets_of(order.permute(refs[k]));
        for (std::size_t i = 0; i < o.size(); ++i) FUZZ_CHECK(o[i] == static_cast<std::int64_t>(i));
    }
}

// One output shape, outputs and inputs over shared memory; the layout either
// refuses for a reason the naive checks also find, or visits exactly the
// naive tuples of offsets.
void check_layout(fuzz::bytes& in) {
    shape_desc const out_shape = read_shape(in, false);
    std::int64_t numel = 1;
    for (std::int64_t d = 0; d < out_shape.rank; ++d) numel *= out_shape.sizes[d];
    if (numel > enumerable) return;
    int const n_out = static_cast<int>(in.in(1, 2)), n_in = static_cast<int>(in.in(0, 3));
    std::vector<sy::strided_ref> outs, ins;
    bool must_refuse = false, may_refuse = false;
    for (int k = 0; k < n_out; ++k) {
        shape_desc s = out_shape;
        if (k > 0 && in.in(0, 7) == 0 && s.rank > 0) s.sizes[in.in(0, s.rank - 1)] = in.in(0, 3);
        for (std::int64_t d = 0; d < s.rank; ++d) s.strides[d] = read_stride(in, false);
        sy::strided_ref r;
        if (!try_make(s, read_dtype(in), in.in(-64, 64), r)) return;
        outs.push_back(r);
    }
    for (int k = 0; k < n_in; ++k) {
        shape_desc s;
        s.rank = std::clamp<std::int64_t>(out_shape.rank - in.in(-1, 2), 0, sy::max_rank);
        for (std::int64_t d = 0; d < s.rank; ++d) {
            std::int64_t const od = d + out_shape.rank - s.rank;
            std::int64_t const choice = in.in(0, 9);
            s.sizes[d] = od < 0 || choice == 9 ? in.in(0, 3) : choice < 3 ? 1 : out_shape.sizes[od];
            s.strides[d] = read_stride(in, false);
        }
        sy::strided_ref r;
        // Sometimes exactly an output (in place).
        if (in.in(0, 5) == 0)
            r = outs[static_cast<std::size_t>(in.in(0, n_out - 1))];
        else if (!try_make(s, read_dtype(in), in.in(-64, 64), r))
            return;
        if (r.numel() > enumerable) return;
        ins.push_back(r);
    }
    // The naive verdict.
    auto const& shape = outs[0];
    for (auto const& o : outs) {
        bool const same = o.rank == shape.rank && std::equal(o.sizes, o.sizes + o.rank, shape.sizes);
        if (!same) must_refuse = true;
    }
    if (must_refuse) {
        FUZZ_CHECK([&] {
            try {
                sy::make_elementwise_layout("fuzz", outs.data(), n_out, ins.data(), n_in);
            } catch (std::invalid_argument const&) {
                return true;
            }
            return false;
        }());
        return;
    }
    for (auto const& o : outs) {
        for (std::int32_t d = 0; d < o.rank; ++d)
            if (o.numel() > 0 && o.sizes[d] > 1 && o.strides[d] == 0) must_refuse = true;
    }
    std::vector<sy::strided_ref> expanded;
    for (auto const& r : ins) {
        bool fits = r.rank <= shape.rank;
        sy::strided_ref e = shape;
        e.data = r.data;
        e.type = r.type;
        for (std::int32_t d = 0; fits && d < shape.rank; ++d) {
            std::int32_t const src = d - (shape.rank - r.rank);
            std::int64_t const size = src >= 0 ? r.sizes[src] : 1;
            fits = size == shape.sizes[d] || size == 1;
            e.strides[d] = src >= 0 && size != 1 ? r.strides[src] : 0;
        }
        if (!fits) must_refuse = true;
        expanded.push_back(e);
    }
    for (std::size_t k = 0; k < outs.size(); ++k)
        for (std::size_t j = 0; j < k; ++j) {
            if (share_a_byte(bytes_covered(outs[k]), bytes_covered(outs[j]))) must_refuse = true;
            if (ranges_meet(outs[k], outs[j])) may_refuse = true;
        }
    for (auto const& r : ins)
        for (auto const& o : outs) {
            if (same_elements_in_order(o, r)) continue;
            if (share_a_byte(bytes_covered(o), bytes_covered(r))) must_refuse = true;
            if (ranges_meet(o, r)) may_refuse = true;
        }

    sy::elementwise_layout layout;
    try {
        layout = sy::make_elementwise_layout("fuzz", outs.data(), n_out, ins.data(), n_in);
    } catch (std::invalid_argument const&) {
        FUZZ_CHECK(must_refuse || may_refuse);
        return;
    }
    FUZZ_CHECK(!must_refuse);
    FUZZ_CHECK(layout.numel == shape.numel());
    FUZZ_CHECK(layout.operands == n_out + n_in);
    if (layout.numel == 0) return;
    // Every element's tuple of offsets, as a multiset, against the naive one.
    std::vector<std::vector<std::int64_t>> got, want;
    for (std::int64_t i = 0; i < layout.numel; ++i) {
        std::vector<std::int64_t> t;
        for (int k = 0; k < layout.operands; ++k) t.push_back(layout.offset(k, i));
        got.push_back(t);
    }
    std::vector<std::vector<std::int64_t>> columns;
    for (auto const& o : outs) columns.push_back(offsets_of(o));
    for (auto const& e : expanded) columns.push_back(offsets_of(e));
    for (std::int64_t i = 0; i < layout.numel; ++i) {
        std::vector<std::int64_t> t;
        for (auto const& c : columns) t.push_back(c[static_cast<std::size_t>(i)]);
        want.push_back(t);
    }
    std::sort(got.begin(), got.end());
    std::sort(want.begin(), want.end());
    FUZZ_CHECK(got == want);
    for (int k = 0; k < layout.operands; ++k) FUZZ_CHECK(layout.data[k] == (k < n_out ? outs[k] : ins[k - n_out]).data);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(std::uint8_t const* data, std::size_t size) {
    fuzz::bytes in(data, size);
    switch (in.in(0, 2)) {
        case 0: {  // one array, possibly with extreme sizes and strides, then a second beside it
            sy::strided_ref a, b;
            if (!try_make(read_shape(in, true), read_dtype(in), in.in(-64, 64), a)) break;
            check_single(a);
            check_order(in, a);
            if (try_make(read_shape(in, in.flag()), read_dtype(in), in.in(-64, 64), b)) check_pair(a, b);
            break;
        }
        case 1: check_layout(in); break;
        default: {  // two arrays of one shape over one region: the overlap check
            shape_desc const s = read_shape(in, false);
            shape_desc t = s;
            for (std::int64_t d = 0; d < t.rank; ++d) t.strides[d] = read_stride(in, false);
            if (in.flag()) t = read_shape(in, false);
            sy::strided_ref a, b;
            if (try_make(s, read_dtype(in), in.in(-16, 16), a) && try_make(t, read_dtype(in), in.in(-16, 16), b)) {
                check_single(b);
                check_pair(a, b);
            }
            break;
        }
    }
    return 0;
}
