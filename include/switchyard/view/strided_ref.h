// strided_ref: a small non-owning description of an n-d array: data pointer,
// dtype, device, sizes and strides (in elements, int64). The torch adapter
// fills one from a torch::Tensor; raw-buffer users build one directly.
//
//     float buf[12];
//     auto x = strided_ref::contiguous(buf, dtype::f32, device_kind::cpu, {3, 4}, "x");
//     auto xt = strided_ref::make(buf, dtype::f32, device_kind::cpu, {4, 3}, {1, 4}, "xt");
//
// Construction validates what views rely on and names the argument in every
// error: rank <= max_rank, sizes >= 0, a non-null pointer when there are
// elements, the pointer aligned to the element size (CPU and CUDA), and no
// int64 overflow of the element count or of any offset.
// It is trivially copyable, so kernels can capture views built from it.
#pragma once

#include <concepts>
#include <cstdint>
#include <cstdio>
#include <initializer_list>
#include <stdexcept>
#include <string>

#include "switchyard/core/dtype.h"
#include "switchyard/core/enums.h"

namespace switchyard {

// The largest rank views accept. Higher ranks are rejected with an error
// rather than truncated.
inline constexpr int max_rank = 8;

struct strided_ref {
    void* data = nullptr;
    dtype type = dtype::f32;
    device_kind device = device_kind::cpu;
    std::int32_t device_index = 0;
    std::int32_t rank = 0;
    std::int64_t sizes[max_rank] = {};
    std::int64_t strides[max_rank] = {};
    // Names the argument in error messages ("input", "out", ...).
    char const* name = "tensor";

    // Validated construction from sizes and strides (in elements).
    static strided_ref make(void* data, dtype type, device_kind device, std::int64_t const* sizes,
                            std::int64_t const* strides, std::int64_t rank, char const* name = "tensor",
                            std::int32_t device_index = 0);
    static strided_ref make(void* data, dtype type, device_kind device, std::initializer_list<std::int64_t> sizes,
                            std::initializer_list<std::int64_t> strides, char const* name = "tensor") {
        if (sizes.size() != strides.size())
            throw std::invalid_argument(std::string("strided_ref '") + name + "': " + std::to_string(sizes.size()) +
                                        " sizes but " + std::to_string(strides.size()) + " strides");
        return make(data, type, device, sizes.begin(), strides.begin(), static_cast<std::int64_t>(sizes.size()), name);
    }
    // Row-major (C order) strides for the given sizes.
    static strided_ref contiguous(void* data, dtype type, device_kind device, std::initializer_list<std::int64_t> sizes,
                                  char const* name = "tensor") {
        std::int64_t strides[max_rank] = {};
        std::int64_t const rank = static_cast<std::int64_t>(sizes.size());
        row_major_strides(sizes.begin(), rank, strides);
        return make(data, type, device, sizes.begin(), strides, rank, name);
    }
    // Row-major memory at `data` with the shape, dtype and device of `like`.
    static strided_ref contiguous_like(void* data, strided_ref const& like, char const* name) {
        std::int64_t strides[max_rank] = {};
        row_major_strides(like.sizes, like.rank, strides);
        return make(data, like.type, like.device, like.sizes, strides, like.rank, name, like.device_index);
    }

    // strides[d] for d < max_rank; larger ranks are refused by make.
    static constexpr void row_major_strides(std::int64_t const* sizes, std::int64_t rank,
                                            std::int64_t* strides) noexcept {
        // Unsigned: an empty array's other sizes may multiply past int64
        // (its strides are then never used).
        std::uint64_t stride = 1;
        for (std::int64_t d = rank; d-- > 0;) {
            if (d < max_rank) strides[d] = static_cast<std::int64_t>(stride);
            stride *= static_cast<std::uint64_t>(sizes[d] > 1 ? sizes[d] : 1);
        }
    }

    // A dimension of size 0: the array names no element, whatever its other
    // sizes and strides.
    constexpr bool empty() const noexcept {
        for (std::int32_t d = 0; d < rank; ++d)
            if (sizes[d] == 0) return true;
        return false;
    }

    // make checks the count in dimension order; an empty array's other
    // sizes may multiply past int64 in another order (after a permutation).
    constexpr std::int64_t numel() const noexcept {
        if (empty()) return 0;
        std::int64_t n = 1;
        for (std::int32_t d = 0; d < rank; ++d) n *= sizes[d];
        return n;
    }

    // Row-major contiguous (dimensions of size 1 may have any stride; an
    // empty array is contiguous, as in PyTorch).
    constexpr bool is_contiguous() const noexcept {
        if (empty()) return true;
        std::uint64_t expected = 1;  // unsigned, as in row_major_strides
        for (std::int32_t d = rank; d-- > 0;) {
            if (sizes[d] == 1) continue;
            if (static_cast<std::uint64_t>(strides[d]) != expected) return false;
            expected *= static_cast<std::uint64_t>(sizes[d]);
        }
        return true;
    }
};

// strided_source<T>: specialize with `static strided_ref ref(T const&, char
// const* name)` to let views be built directly from T (the torch adapter does
// this for torch::Tensor).
template <typename T>
struct strided_source {};

template <typename T>
concept strided_source_type = requires(T const& t) {
    { strided_source<T>::ref(t, "") } -> std::same_as<strided_ref>;
};

namespace detail {

// |stride| without overflow: INT64_MIN's magnitude does not fit int64.
constexpr std::uint64_t stride_magnitude(std::int64_t stride) noexcept {
    return stride < 0 ? std::uint64_t{0} - static_cast<std::uint64_t>(stride) : static_cast<std::uint64_t>(stride);
}

inline std::string ref_label(char const* name) { return std::string("'") + (name ? name : "tensor") + "'"; }

inline std::string address_string(void const* p) {
    char text[2 + 16 + 1];
    std::snprintf(text, sizeof text, "0x%llx", static_cast<unsigned long long>(reinterpret_cast<std::uintptr_t>(p)));
    return text;
}

}  // namespace detail

inline strided_ref strided_ref::make(void* data, dtype type, device_kind device, std::int64_t const* sizes,
                                     std::int64_t const* strides, std::int64_t rank, char const* name,
                                     std::int32_t device_index) {
    auto fail = [&](std::string const& what) {
        throw std::invalid_argument("strided_ref " + detail::ref_label(name) + ": " + what);
    };
    if (rank < 0) fail("rank " + std::to_string(rank) + " is negative");
    if (rank > max_rank)
        fail("rank " + std::to_string(rank) + " exceeds switchyard's maximum of " + std::to_string(max_rank) +
             " dimensions");
    strided_ref r;
    r.data = data;
    r.type = type;
    r.device = device;
    r.device_index = device_index;
    r.rank = static_cast<std::int32_t>(rank);
    r.name = name;
    std::int64_t numel = 1;
    std::int64_t reach = 0;  // largest |offset| of any element
    for (std::int64_t d = 0; d < rank; ++d) {
        if (sizes[d] < 0)
            fail("size of dimension " + std::to_string(d) + " is " + std::to_string(sizes[d]) + "; sizes must be >= 0");
        r.sizes[d] = sizes[d];
        r.strides[d] = strides[d];
        if (__builtin_mul_overflow(numel, sizes[d], &numel)) fail("the element count overflows int64");
    }
    if (numel > 0) {
        for (std::int64_t d = 0; d < rank; ++d) {
            std::int64_t span = 0;
            // |INT64_MIN| does not fit int64; a dimension of size 1 never uses its stride.
            if ((strides[d] == INT64_MIN && sizes[d] > 1) ||
                __builtin_mul_overflow(sizes[d] - 1, static_cast<std::int64_t>(detail::stride_magnitude(strides[d])),
                                       &span) ||
                __builtin_add_overflow(reach, span, &reach))
                fail("sizes x strides overflow int64 (dimension " + std::to_string(d) + ")");
        }
        if (data == nullptr) fail("data pointer is null but the array has " + std::to_string(numel) + " elements");
        // Elements are read through typed pointers (and vectors of them): a
        // pointer between elements (torch.frombuffer with a byte offset) is
        // refused rather than read misaligned. On shader devices data is a
        // buffer handle.
        std::size_t const element = dtype_size(type);
        if ((device == device_kind::cpu || device == device_kind::cuda) &&
            reinterpret_cast<std::uintptr_t>(data) % element != 0)
            fail("data pointer " + detail::address_string(data) + " is not aligned to its " + std::to_string(element) +
                 "-byte " + std::string(to_string(type)) + " elements; pass memory aligned to the element size");
    }
    return r;
}

}  // namespace switchyard
