// tensor_in / tensor_out: ranked access with explicit indices, for kernels
// whose indices mean something (gather, scatter, per-row work).
//
//     tensor_in<device_kind::cpu, dtype::i32, 2, contiguity::contiguous> ijk(coords_ref);  // [N, 3]
//     tensor_out<device_kind::cpu, dtype::i64, 1, contiguity::strided> codes(codes_ref);   // [N]
//     codes(n) = ijk(n, 0) * 9 + ijk(n, 1) * 3 + ijk(n, 2);
//
// The array's rank must equal Rank (checked at construction, naming the
// argument). contiguous: the offset is computed from the sizes (row-major);
// strided: from the strides, so transposed, sliced and broadcast (stride 0)
// arrays work. Trivially copyable; capture by value.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "switchyard/core/config.h"
#include "switchyard/core/dtype.h"
#include "switchyard/core/enums.h"
#include "switchyard/view/checks.h"
#include "switchyard/view/load.h"
#include "switchyard/view/strided_ref.h"

namespace switchyard {

namespace detail {

// The checks every tensor view's constructor makes (device, dtype, rank,
// contiguity), naming the argument; returns ref. Shared with
// shader/tensor_view.h.
template <auto Device, auto DType, int Rank, contiguity C>
strided_ref const& check_tensor_view_target(strided_ref const& ref, char const* view_name) {
    check_view_target<Device, DType>(ref, view_name);
    if (ref.rank != Rank)
        throw std::invalid_argument(std::string(view_name) + "<..., " + std::to_string(Rank) +
                                    ", ...>: " + ref_label(ref.name) + " has rank " + std::to_string(ref.rank) +
                                    " but the view needs rank " + std::to_string(Rank));
    if constexpr (C == contiguity::contiguous) {
        if (!ref.is_contiguous())
            throw std::invalid_argument(std::string(view_name) + ": " + ref_label(ref.name) +
                                        " is not contiguous but the view is contiguity::contiguous; use a "
                                        "strided view");
    }
    return ref;
}

// A tensor view's sizes and strides, with size(d) and stride(d): the part of
// the view that is the same on every device (shader/tensor_view.h too).
template <int Rank>
class tensor_shape {
public:
    static constexpr int stored = Rank > 0 ? Rank : 1;

    tensor_shape() = default;
    explicit tensor_shape(strided_ref const& ref) noexcept {
        for (int d = 0; d < Rank; ++d) {
            sizes_[d] = ref.sizes[d];
            strides_[d] = ref.strides[d];
        }
    }

    SWITCHYARD_HOST_DEVICE std::int64_t size(int d) const noexcept { return sizes_[d]; }
    SWITCHYARD_HOST_DEVICE std::int64_t stride(int d) const noexcept { return strides_[d]; }

protected:
    std::int64_t sizes_[stored] = {};
    std::int64_t strides_[stored] = {};
};

template <auto Device, auto DType, int Rank, contiguity C, bool Writable>
class tensor_view : public tensor_shape<Rank> {
    static_assert(Rank >= 0 && Rank <= max_rank, "tensor_in/tensor_out: Rank must be between 0 and max_rank (8)");
    using element = dtype_storage_t<DType>;
    using pointer = std::conditional_t<Writable, element*, element const*>;
    static constexpr char const* view_name = Writable ? "tensor_out" : "tensor_in";
    using tensor_shape<Rank>::sizes_;
    using tensor_shape<Rank>::strides_;

public:
    using value_type = element;
    static constexpr int rank = Rank;

    tensor_view() = default;
    explicit tensor_view(strided_ref const& ref)
        : tensor_shape<Rank>(check_tensor_view_target<Device, DType, Rank, C>(ref, view_name)),
          data_(static_cast<pointer>(ref.data)) {}
    template <strided_source_type Source>
    explicit tensor_view(Source const& source, char const* name = "tensor")
        : tensor_view(strided_source<Source>::ref(source, name)) {}

    SWITCHYARD_HOST_DEVICE pointer data() const noexcept { return data_; }

    template <typename... I>
    SWITCHYARD_HOST_DEVICE SWITCHYARD_INLINE decltype(auto) operator()(I... index) const noexcept {
        static_assert(sizeof...(I) == Rank, "tensor view: pass exactly Rank indices");
        static_assert((std::is_integral_v<I> && ...), "tensor view: indices must be integers");
        std::int64_t const idx[tensor_shape<Rank>::stored] = {static_cast<std::int64_t>(index)...};
        std::int64_t offset = 0;
        if constexpr (C == contiguity::contiguous) {
            for (int d = 0; d < Rank; ++d) offset = offset * sizes_[d] + idx[d];
        } else {
            for (int d = 0; d < Rank; ++d) offset += idx[d] * strides_[d];
        }
        if constexpr (Writable)
            return (data_[offset]);
        else
            return load_input(data_ + offset);
    }

private:
    pointer data_ = nullptr;
};

}  // namespace detail

// Read-only ranked view: t(i, j, ...) returns a const reference.
template <auto Device, auto DType, int Rank, contiguity C>
class tensor_in : public detail::tensor_view<Device, DType, Rank, C, false> {
    using detail::tensor_view<Device, DType, Rank, C, false>::tensor_view;
};

// Writable ranked view: t(i, j, ...) returns a reference.
template <auto Device, auto DType, int Rank, contiguity C>
class tensor_out : public detail::tensor_view<Device, DType, Rank, C, true> {
    using detail::tensor_view<Device, DType, Rank, C, true>::tensor_view;
};

}  // namespace switchyard
