// tensor_in / tensor_out on shader devices (webgpu, metal): the ranked views
// of view/tensor.h over a device buffer. Inside a traced kernel t(c0, c1, ...)
// records a load (or, for tensor_out, an element to store into) at
// sum(c_d * stride_d), the strides travelling as uniform words. Each
// coordinate is one of
//   - the kernel's for_each index i;
//   - a host integer (a constant column, a fixed row), checked against the
//     dimension's size when traced and passed as a uniform;
//   - a shader::value<int32_t> or value<uint32_t> computed on the device,
//     typically read from another view (a gather or scatter); it is not
//     checked, and WGSL keeps an access outside the buffer inside it, so a
//     wrong coordinate gives an unspecified element, never a fault.
// Host arithmetic on the index (t(i + 1, 0), t(i / 3, i % 3)) cannot be
// traced: for_each on a shader device refuses such a kernel.
//
// Unlike flat views, a tensor view is not checked against the for_each count:
// its coordinates, not the count, say which elements it touches.
#pragma once

#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "switchyard/shader/value.h"
#include "switchyard/shader/view.h"
#include "switchyard/view/tensor.h"

namespace switchyard {

namespace shader {

// A tensor view coordinate as a u32 value (see the header comment).
template <typename I>
value<std::uint32_t> tensor_coordinate(trace& t, I c, std::int64_t size, int dim, char const* view, char const* name) {
    using u32 = value<std::uint32_t>;
    auto out_of_range = [&](std::int64_t v) {
        return shader_error(std::string(t.device()) + ": " + view + " '" + name + "': coordinate " +
                            std::to_string(dim) + " is " + std::to_string(v) + ", outside [0, " + std::to_string(size) +
                            "); on shader devices a coordinate is the for_each index, a host constant in range, "
                            "or an integer value computed on the device");
    };
    if constexpr (std::is_integral_v<I> && !std::is_same_v<I, bool>) {
        auto const v = static_cast<std::int64_t>(c);
        if (v == t.index_value()) {
            // The placeholders for_each checks with include 0 to 3, which a
            // constant coordinate may equal: such a trace is ambiguous.
            if (v >= 0 && v < (std::int64_t{1} << 32)) t.mark_ambiguous();
            return u32::from_node(t.index());
        }
        if (v < 0 || v >= size) throw out_of_range(v);
        return u32(static_cast<std::uint32_t>(v));
    } else if constexpr (std::is_same_v<I, value<std::int32_t>> || std::is_same_v<I, value<std::uint32_t>>) {
        if (!c.symbolic()) return tensor_coordinate(t, c.host(), size, dim, view, name);
        if constexpr (std::is_same_v<I, value<std::uint32_t>>)
            return c;
        else
            return static_cast<u32>(c);
    } else {
        static_assert(std::is_integral_v<I>,
                      "tensor view on a shader device: a coordinate is an integer, the for_each index, or a "
                      "shader::value<int32_t> / value<uint32_t>");
        return u32(0u);
    }
}

}  // namespace shader

namespace detail {

template <auto Device, auto DType, int Rank, contiguity C, bool Writable>
requires shader::is_shader_device_v<Device>
class tensor_view<Device, DType, Rank, C, Writable> : public tensor_shape<Rank> {
    static_assert(Rank >= 0 && Rank <= max_rank, "tensor_in/tensor_out: Rank must be between 0 and max_rank (8)");
    using element = dtype_storage_t<DType>;
    static constexpr char const* view_name = Writable ? "tensor_out" : "tensor_in";
    using tensor_shape<Rank>::sizes_;
    using tensor_shape<Rank>::strides_;

public:
    using value_type = shader::value<element>;
    static constexpr int rank = Rank;

    tensor_view() = default;
    // Dtype, extent and stride signs are checked as for a strided flat view.
    explicit tensor_view(strided_ref const& ref)
        : tensor_shape<Rank>(check_tensor_view_target<Device, DType, Rank, C>(ref, view_name)),
          layout_(shader::make_view_layout<element>(ref, ref, false, view_name)) {}
    template <strided_source_type Source>
    explicit tensor_view(Source const& source, char const* name = "tensor")
        : tensor_view(strided_source<Source>::ref(source, name)) {}

    // The device buffer.
    void* data() const noexcept { return const_cast<void*>(layout_.buffer); }

    // Inside a traced kernel: t(c...) a symbolic load, or an element to store into.
    template <typename... I>
    auto operator()(I... coordinate) const {
        static_assert(sizeof...(I) == Rank, "tensor view: pass exactly Rank coordinates");
        shader::trace& t = shader::active(view_name);
        shader::require_supported<element>(t);
        using u32 = shader::value<std::uint32_t>;
        u32 offset(0u);
        bool first = true;
        int d = 0;
        auto add = [&](auto c) {
            u32 const term = shader::tensor_coordinate(t, c, sizes_[d], d, view_name, layout_.name);
            u32 const scaled = strides_[d] == 1 ? term : term * u32(static_cast<std::uint32_t>(strides_[d]));
            offset = first ? scaled : offset + scaled;
            first = false;
            ++d;
        };
        (add(coordinate), ...);
        std::uint32_t const slot = t.bind(layout_.buffer, shader::scalar_of<element>, Writable, layout_.bytes,
                                          std::numeric_limits<std::int64_t>::max(), layout_.name);
        shader::element_ref<element> ref(slot, offset.node_in(t));
        if constexpr (Writable)
            return ref;
        else
            return static_cast<shader::value<element>>(ref);
    }

private:
    shader::view_layout layout_{};
};

}  // namespace detail
}  // namespace switchyard
