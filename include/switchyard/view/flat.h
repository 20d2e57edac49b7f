// flat_in / flat_out: rank-free elementwise access, in[i] and out[i] for
// i in [0, numel), whatever the array's rank.
//
//     flat_in<device_kind::cpu, dtype::f32, contiguity::contiguous> in(x_ref);
//     flat_out<device_kind::cpu, dtype::f32, contiguity::contiguous> out(y_ref);
//     out[i] = f(in[i]);
//
// in[i] is the element's value, out[i] a reference to it. Memory read
// through a flat_in must not be written at other indices during the same
// for_each (view/load.h); in place, out[i] = f(in[i]) over the same memory,
// is fine.
//
// contiguity::contiguous: data[i], nothing else; the array must be row-major
// contiguous, or dense in a shared iteration_order (iteration_order.h).
// contiguity::strided: any sizes and strides (transposed, sliced, broadcast
// with stride 0, 0-d, empty). Dimensions are coalesced once at construction
// and the index is split per dimension with precomputed fast division
// (fast_divide.h), so an index costs no hardware divide; an array that
// coalesces to one dimension costs one multiply.
//
// Without an iteration_order a flat index is the row-major (logical) index.
// Views are trivially copyable and hold no ownership: capture them by value
// (then for_each can find them in the kernel's closure, stream_mark.h, and
// prefetch their data on the CPU).
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "switchyard/core/config.h"
#include "switchyard/core/dtype.h"
#include "switchyard/core/enums.h"
#include "switchyard/view/checks.h"
#include "switchyard/view/coalesce.h"
#include "switchyard/view/fast_divide.h"
#include "switchyard/view/iteration_order.h"
#include "switchyard/view/load.h"
#include "switchyard/view/stream_mark.h"
#include "switchyard/view/strided_ref.h"

namespace switchyard {

namespace detail {

// Maps a flat index to an element offset for a strided array.
class strided_walk {
public:
    strided_walk() = default;
    explicit strided_walk(strided_ref const& ref) {
        numel_ = ref.numel();
        coalesced_dims const c = coalesce(ref);
        rank_ = c.rank;
        for (std::int32_t d = 0; d < rank_; ++d) {
            sizes_[d] = c.sizes[d];
            strides_[d] = c.strides[d];
            dividers_[d] = fast_divider(sizes_[d] > 0 ? sizes_[d] : 1);
        }
    }

    SWITCHYARD_HOST_DEVICE SWITCHYARD_INLINE std::int64_t offset(std::int64_t i) const noexcept {
        if (rank_ <= 1) return rank_ == 0 ? 0 : i * strides_[0];
        std::int64_t offset = 0;
        for (std::int32_t d = rank_ - 1; d > 0; --d) {
            std::int64_t const outer = dividers_[d].divide(i);
            offset += (i - outer * sizes_[d]) * strides_[d];
            i = outer;
        }
        return offset + i * strides_[0];
    }

    SWITCHYARD_HOST_DEVICE std::int64_t numel() const noexcept { return numel_; }
    // Rank after coalescing (for tests and diagnostics).
    SWITCHYARD_HOST_DEVICE std::int32_t coalesced_rank() const noexcept { return rank_; }

private:
    std::int64_t numel_ = 0;
    std::int32_t rank_ = 0;
    std::int64_t sizes_[max_rank] = {};
    std::int64_t strides_[max_rank] = {};
    fast_divider dividers_[max_rank] = {};
};

template <contiguity C>
strided_ref checked_flat_layout(strided_ref const& ref, iteration_order const* order, char const* view) {
    strided_ref laid_out = order ? order->permute(ref) : ref;
    if constexpr (C == contiguity::contiguous) {
        if (!laid_out.is_contiguous())
            throw std::invalid_argument(std::string(view) + ": " + ref_label(ref.name) +
                                        (order ? " is not dense in the shared iteration order" : " is not contiguous") +
                                        " but the view is contiguity::contiguous; use a strided view");
    }
    return laid_out;
}

template <auto Device, auto DType, contiguity C, bool Writable>
class flat_view {
    static_assert(core_device_v<Device> != device_kind::webgpu && core_device_v<Device> != device_kind::metal,
                  "flat_in / flat_out on a shader device need switchyard/shader.h (included by "
                  "switchyard/switchyard.h)");
    using element = dtype_storage_t<DType>;
    using pointer = std::conditional_t<Writable, element*, element const*>;
    static constexpr char const* view_name = Writable ? "flat_out" : "flat_in";

public:
    using value_type = element;

    flat_view() = default;
    explicit flat_view(strided_ref const& ref) : flat_view(ref, nullptr) {}
    flat_view(strided_ref const& ref, iteration_order const& order) : flat_view(ref, &order) {}
    // From any array type with a strided_source (a torch::Tensor with the
    // torch adapter); `name` names it in errors.
    template <strided_source_type Source>
    explicit flat_view(Source const& source, char const* name = "tensor")
        : flat_view(strided_source<Source>::ref(source, name), nullptr) {}
    template <strided_source_type Source>
    flat_view(Source const& source, iteration_order const& order, char const* name = "tensor")
        : flat_view(strided_source<Source>::ref(source, name), &order) {}

    SWITCHYARD_HOST_DEVICE std::int64_t size() const noexcept {
        if constexpr (C == contiguity::contiguous)
            return layout_;
        else
            return layout_.numel();
    }
    SWITCHYARD_HOST_DEVICE pointer data() const noexcept { return data_; }

    // flat_out: a reference to element i. flat_in: its value, read through
    // load_input (view/load.h: read-only loads on CUDA).
    SWITCHYARD_HOST_DEVICE SWITCHYARD_INLINE decltype(auto) operator[](std::int64_t i) const noexcept {
        pointer p = data_;
        if constexpr (C == contiguity::contiguous)
            p += i;
        else
            p += layout_.offset(i);
        if constexpr (Writable)
            return (*p);
        else
            return load_input(p);
    }

private:
    flat_view(strided_ref const& ref, iteration_order const* order) {
        check_view_target<Device, DType>(ref, view_name);
        strided_ref const laid_out = checked_flat_layout<C>(ref, order, view_name);
        data_ = static_cast<pointer>(ref.data);
        mark_ = stream_mark(data_, laid_out.numel(), {sizeof(element), Writable, C == contiguity::contiguous});
        if constexpr (C == contiguity::contiguous)
            layout_ = laid_out.numel();
        else
            layout_ = strided_walk(laid_out);
    }

    pointer data_ = nullptr;
    // Lets for_each find this view inside a kernel's closure (stream_mark.h).
    stream_mark mark_;
    // The element count (contiguous) or the index-to-offset walk (strided).
    std::conditional_t<C == contiguity::contiguous, std::int64_t, strided_walk> layout_{};
};

}  // namespace detail

// Read-only flat view: in[i] returns a const reference to element i.
template <auto Device, auto DType, contiguity C>
class flat_in : public detail::flat_view<Device, DType, C, false> {
    using detail::flat_view<Device, DType, C, false>::flat_view;
};

// Writable flat view: out[i] returns a reference to element i.
template <auto Device, auto DType, contiguity C>
class flat_out : public detail::flat_view<Device, DType, C, true> {
    using detail::flat_view<Device, DType, C, true>::flat_view;
};

}  // namespace switchyard
