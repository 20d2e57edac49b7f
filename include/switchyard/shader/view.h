// flat_in / flat_out on shader devices (webgpu, metal): the same view types
// and constructors as on the CPU (view/flat.h), over a device buffer (the
// strided_ref's data is the buffer handle from the device's alloc, element 0
// at its start). Inside a traced kernel, in[i] records a load and out[i] = v
// a store; the view's sizes and strides travel as uniform words, so a new
// shape does not recompile the kernel.
//
// Shader devices index with 32-bit unsigned integers: a view must span fewer
// than 2^32 elements and have no negative strides. Dtypes without a shader
// type (f64, 64-bit and 8/16-bit integers, bool; bf16 except on Metal) are
// refused here, at dispatch, naming the dtype and device.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "switchyard/core/dtype.h"
#include "switchyard/core/enums.h"
#include "switchyard/view/coalesce.h"
#include "switchyard/view/flat.h"
#include "switchyard/shader/value.h"

namespace switchyard {

namespace shader {

// What a view binds: its buffer, dtype and extent, and the coalesced layout
// that maps the for_each index to an element (strided views).
struct view_layout {
    void const* buffer = nullptr;
    std::uint64_t bytes = 0;
    std::int32_t rank = 0;  // after coalescing; 0 or 1 with unit stride = contiguous
    std::uint32_t sizes[max_rank] = {};
    std::uint32_t strides[max_rank] = {};
    char const* name = "tensor";
};

template <typename Element>
view_layout make_view_layout(strided_ref const& ref, strided_ref const& laid_out, bool contiguous, char const* view) {
    constexpr std::int64_t index_limit = std::int64_t{1} << 32;
    auto fail = [&](std::string const& what) {
        throw std::invalid_argument(std::string(view) + ": " + switchyard::detail::ref_label(ref.name) + " " + what);
    };
    // Both: the dtype the device stores, and a storage type the tracer knows
    // (a dtype enum other than the core's may store f16 as its own type).
    if (!stores_dtype(ref.device, ref.type) || scalar_of<Element> == scalar::unsupported)
        fail("has dtype " + std::string(to_string(ref.type)) + ", which " + std::string(to_string(ref.device)) +
             " does not support: shader languages have no 64-bit floats or integers, or 8/16-bit or bool storage, "
             "and WGSL no bf16 (supported: f32, i32, f16 where the adapter has shader-f16, and bf16 on Metal)");
    view_layout layout;
    layout.buffer = ref.data;
    layout.name = ref.name;
    std::int64_t const numel = laid_out.numel();
    if (numel >= index_limit)
        fail("has " + std::to_string(numel) + " elements; shader devices index with 32 bits (fewer than 2^32)");
    std::int64_t extent = numel > 0 ? 1 : 0;  // one past the largest element offset
    if (contiguous) {
        extent = numel;
        layout.rank = 1;
        layout.sizes[0] = static_cast<std::uint32_t>(numel);
        layout.strides[0] = 1;
    } else {
        // The CPU's coalescing; it keeps the sign of every stride and the
        // largest offset, so both are checked on the coalesced dimensions.
        switchyard::detail::coalesced_dims const c = switchyard::detail::coalesce(laid_out);
        layout.rank = c.rank;
        for (std::int32_t d = 0; d < c.rank; ++d) {
            if (c.strides[d] < 0) fail("has a negative stride, which shader devices do not support");
            if (numel > 0) extent += (c.sizes[d] - 1) * c.strides[d];
            layout.sizes[d] = static_cast<std::uint32_t>(c.sizes[d]);
            layout.strides[d] = static_cast<std::uint32_t>(c.strides[d]);
        }
        if (extent >= index_limit)
            fail("spans " + std::to_string(extent) + " elements; shader devices index with 32 bits (fewer than 2^32)");
    }
    layout.bytes = static_cast<std::uint64_t>(extent) * sizeof(Element);
    return layout;
}

// The element offset of the for_each index in `layout`, as trace nodes: the
// index itself when the layout is contiguous, else a div/mod walk whose sizes
// and strides are uniforms.
inline value<std::uint32_t> element_offset(trace& t, view_layout const& layout) {
    using u32 = value<std::uint32_t>;
    u32 const index = u32::from_node(t.index());
    if (layout.rank == 0) return u32(0u);
    if (layout.rank == 1) return layout.strides[0] == 1 ? index : index * u32(layout.strides[0]);
    u32 rest = index;
    u32 offset = (rest % u32(layout.sizes[layout.rank - 1])) * u32(layout.strides[layout.rank - 1]);
    rest = rest / u32(layout.sizes[layout.rank - 1]);
    for (std::int32_t d = layout.rank - 2; d > 0; --d) {
        offset = offset + (rest % u32(layout.sizes[d])) * u32(layout.strides[d]);
        rest = rest / u32(layout.sizes[d]);
    }
    return offset + rest * u32(layout.strides[0]);
}

// out[i] on a shader device: assigning records a store; reading, a load.
template <typename T>
class element_ref {
public:
    element_ref(std::uint32_t slot, std::int32_t offset) : slot_(slot), offset_(offset) {}
    element_ref(element_ref const&) = default;

    element_ref const& operator=(value<T> const& v) const {
        trace& t = active("a store");
        t.add({op::store, scalar_of<T>, offset_, v.node_in(t), -1, slot_});
        return *this;
    }
    template <host_number U>
    element_ref const& operator=(U v) const {
        return *this = value<T>(v);
    }
    element_ref const& operator=(element_ref const& other) const { return *this = static_cast<value<T>>(other); }

    operator value<T>() const {  // NOLINT: reads like the element itself
        trace& t = active("a load");
        return value<T>::from_node(t.add({op::load, scalar_of<T>, offset_, -1, -1, slot_}));
    }

    template <typename U>
    element_ref const& operator+=(U const& o) const {
        return *this = value<T>(*this) + o;
    }
    template <typename U>
    element_ref const& operator-=(U const& o) const {
        return *this = value<T>(*this) - o;
    }
    template <typename U>
    element_ref const& operator*=(U const& o) const {
        return *this = value<T>(*this) * o;
    }
    template <typename U>
    element_ref const& operator/=(U const& o) const {
        return *this = value<T>(*this) / o;
    }

private:
    std::uint32_t slot_;
    std::int32_t offset_;
};

}  // namespace shader

namespace detail {

template <auto Device, auto DType, contiguity C, bool Writable>
requires shader::is_shader_device_v<Device>
class flat_view<Device, DType, C, Writable> {
    using element = dtype_storage_t<DType>;
    static constexpr char const* view_name = Writable ? "flat_out" : "flat_in";

public:
    using value_type = shader::value<element>;

    flat_view() = default;
    explicit flat_view(strided_ref const& ref) : flat_view(ref, nullptr) {}
    flat_view(strided_ref const& ref, iteration_order const& order) : flat_view(ref, &order) {}
    template <strided_source_type Source>
    explicit flat_view(Source const& source, char const* name = "tensor")
        : flat_view(strided_source<Source>::ref(source, name), nullptr) {}
    template <strided_source_type Source>
    flat_view(Source const& source, iteration_order const& order, char const* name = "tensor")
        : flat_view(strided_source<Source>::ref(source, name), &order) {}

    std::int64_t size() const noexcept { return numel_; }
    // The device buffer.
    void* data() const noexcept { return const_cast<void*>(layout_.buffer); }

    // Inside a traced kernel: in[i] a symbolic load, out[i] a symbolic element.
    auto operator[](std::int64_t i) const {
        shader::trace& t = shader::active(view_name);
        t.check_index(i, view_name);
        shader::require_supported<element>(t);
        std::uint32_t const slot =
            t.bind(layout_.buffer, shader::scalar_of<element>, Writable, layout_.bytes, numel_, layout_.name);
        std::int32_t const offset = shader::element_offset(t, layout_).node_in(t);
        shader::element_ref<element> ref(slot, offset);
        if constexpr (Writable)
            return ref;
        else
            return static_cast<shader::value<element>>(ref);
    }

private:
    flat_view(strided_ref const& ref, iteration_order const* order) {
        check_view_target<Device, DType>(ref, view_name);
        strided_ref const laid_out = checked_flat_layout<C>(ref, order, view_name);
        numel_ = laid_out.numel();
        layout_ = shader::make_view_layout<element>(ref, laid_out, C == contiguity::contiguous, view_name);
    }

    std::int64_t numel_ = 0;
    shader::view_layout layout_{};
};

}  // namespace detail
}  // namespace switchyard
