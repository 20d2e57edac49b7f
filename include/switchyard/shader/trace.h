// The trace of a kernel on a shader device: a straight-line list of typed
// operations (loads, arithmetic, math calls, selects, stores) recorded while
// for_each calls the kernel once with symbolic arguments (shader/value.h,
// shader/view.h). Emitters (shader/wgsl.h) turn it into shader source.
//
// Nodes are kept in program order and each refers only to earlier nodes, so
// emitting them in order as `let` bindings reproduces the kernel's order of
// loads and stores exactly. Every number the kernel takes from the host (a
// captured beta, a literal 2.0f, a view's strides) becomes a 32-bit uniform
// word, never shader text: the text depends only on the kernel's structure,
// so one compiled pipeline serves every value of its scalars.
//
// Tracing is per thread: a trace_scope makes a trace the active one for the
// duration of the kernel call.
#pragma once

#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "switchyard/core/config.h"
#include "switchyard/core/bfloat16.h"
#include "switchyard/core/dtype.h"
#include "switchyard/core/enums.h"
#include "switchyard/core/half.h"

namespace switchyard::shader {

// A kernel that cannot be traced or emitted for a shader device (an `if` on a
// device value, an unsupported dtype, a computed index, ...).
class shader_error : public std::invalid_argument {
public:
    using std::invalid_argument::invalid_argument;
};

// Whether a device value (device_kind or a mapped enum such as
// torch::DeviceType) names a shader device, whose kernels are traced.
template <auto Device>
inline constexpr bool is_shader_device_v =
    core_device_v<Device> == device_kind::webgpu || core_device_v<Device> == device_kind::metal;

// Whether shader device d keeps dtype t in its buffers: f32, i32 and f16
// (f16 where the adapter has shader-f16, checked when a kernel runs), and
// bf16 on Metal only. Shading languages have no 64-bit types, WGSL no bf16,
// and neither has 8/16-bit integer or bool storage.
constexpr bool stores_dtype(device_kind d, dtype t) noexcept {
    return t == dtype::f32 || t == dtype::i32 || t == dtype::f16 || (t == dtype::bf16 && d == device_kind::metal);
}

// Whether device D keeps dtype t in its buffers, for any device (the CPU
// and CUDA keep every dtype): a function of the dtype alone, for
// core/axes.h's axis_where.
template <device_kind D>
constexpr bool device_stores_dtype(dtype t) noexcept {
    return !is_shader_device_v<D> || stores_dtype(D, t);
}

// The scalar types shader code has (bf16 only in MSL). Everything else (f64,
// 64-bit and 8/16-bit integers) is `unsupported` and refused when a trace
// meets it.
enum class scalar : std::uint8_t { f32, f16, bf16, i32, u32, boolean, unsupported };

template <typename T>
inline constexpr scalar scalar_of = std::is_same_v<T, float>           ? scalar::f32
                                    : std::is_same_v<T, half>          ? scalar::f16
                                    : std::is_same_v<T, bfloat16>      ? scalar::bf16
                                    : std::is_same_v<T, std::int32_t>  ? scalar::i32
                                    : std::is_same_v<T, std::uint32_t> ? scalar::u32
                                    : std::is_same_v<T, bool>          ? scalar::boolean
                                                                       : scalar::unsupported;

// The dtype name of a C++ type, for errors about types shaders lack.
template <typename T>
constexpr char const* type_name() {
    if constexpr (std::is_same_v<T, double>)
        return "f64";
    else if constexpr (std::is_same_v<T, bfloat16>)
        return "bf16";
    else if constexpr (std::is_same_v<T, std::int64_t>)
        return "i64";
    else if constexpr (std::is_same_v<T, std::uint64_t>)
        return "u64";
    else if constexpr (std::is_same_v<T, std::int16_t>)
        return "i16";
    else if constexpr (std::is_same_v<T, std::int8_t>)
        return "i8";
    else if constexpr (std::is_same_v<T, std::uint8_t>)
        return "u8";
    else if constexpr (std::is_same_v<T, float>)
        return "f32";
    else if constexpr (std::is_same_v<T, half>)
        return "f16";
    else if constexpr (std::is_same_v<T, std::int32_t>)
        return "i32";
    else if constexpr (std::is_same_v<T, std::uint32_t>)
        return "u32";
    else if constexpr (std::is_same_v<T, bool>)
        return "bool";
    else
        return "an unsupported type";
}

enum class op : std::uint8_t {
    index,    // the for_each index (u32)
    arg,      // argument `slot` of a traced function (shader/wgsl.h, emit_wgsl_function)
    uniform,  // a host number: uniform word `slot`
    load,     // binding `slot` at element a
    store,    // binding `slot` at element a := b
    convert,  // a, converted to the node's type
    select,   // a ? b : c
    // unary
    neg,
    logical_not,
    bit_not,
    // binary
    add,
    sub,
    mul,
    div,
    rem,
    lt,
    le,
    gt,
    ge,
    eq,
    ne,
    logical_and,
    logical_or,
    bit_and,
    bit_or,
    bit_xor,
    // math (switchyard/math.h's functions)
    abs,
    min,
    max,
    sqrt,
    exp,
    expm1,
    log,
    log1p,
    tanh,
    sigmoid,
    softplus,
};

struct node {
    op code = op::index;
    scalar type = scalar::f32;
    std::int32_t a = -1, b = -1, c = -1;
    std::uint32_t slot = 0;
};

// A storage buffer the kernel reads or writes.
struct binding {
    void const* buffer = nullptr;
    scalar type = scalar::f32;
    bool writable = false;
    std::uint64_t bytes = 0;
    std::int64_t elements = 0;  // the fewest elements of the views on this buffer
    char const* name = "tensor";
};

class trace {
public:
    // `device` names the target in errors; `index_value` is what the kernel
    // receives as its index (views recognise it; see check_index).
    // has_f16 / has_bf16: whether the target computes in and stores those
    // (WebGPU: f16 with the adapter's shader-f16, never bf16; Metal: both).
    trace(char const* device, std::int64_t index_value, bool has_f16, bool has_bf16 = false)
        : device_(device), index_value_(index_value), has_f16_(has_f16), has_bf16_(has_bf16) {
        uniforms_.push_back(0);  // word 0: the element count, set at dispatch
    }

    char const* device() const noexcept { return device_; }
    std::vector<node> const& nodes() const noexcept { return nodes_; }
    std::vector<binding> const& bindings() const noexcept { return bindings_; }
    std::vector<std::uint32_t> const& uniforms() const noexcept { return uniforms_; }
    std::vector<std::uint32_t>& uniforms() noexcept { return uniforms_; }

    std::int32_t add(node n) {
        nodes_.push_back(n);
        return static_cast<std::int32_t>(nodes_.size() - 1);
    }
    scalar type_of(std::int32_t id) const { return nodes_[static_cast<std::size_t>(id)].type; }

    // A host number as a uniform word.
    std::int32_t uniform(scalar type, std::uint32_t word) {
        uniforms_.push_back(word);
        return add({op::uniform, type, -1, -1, -1, static_cast<std::uint32_t>(uniforms_.size() - 1)});
    }

    std::int32_t index() {
        if (index_node_ < 0) index_node_ = add({op::index, scalar::u32});
        return index_node_;
    }
    // The index's node, or -1 if the kernel never used its index.
    std::int32_t index_node() const noexcept { return index_node_; }

    // Views may be indexed only by the for_each index itself: a shader has one
    // invocation per index, and an offset or computed index would need the
    // value the kernel received, which is a placeholder here.
    void check_index(std::int64_t i, char const* view) const {
        if (i != index_value_)
            throw shader_error(std::string(device_) + ": a kernel indexed " + view +
                               " with something other than the for_each index; on shader devices views are "
                               "read and written at the kernel's own index only (view[i])");
    }

    // What the kernel received as its index.
    std::int64_t index_value() const noexcept { return index_value_; }
    // A trace whose kernel passed a number to a view that could be either its
    // index or a constant (a tensor view coordinate equal to a small
    // placeholder): for_each's check that the kernel does not compute with
    // its index skips such a trace.
    void mark_ambiguous() noexcept { ambiguous_ = true; }
    bool ambiguous() const noexcept { return ambiguous_; }

    // The binding slot of `buffer`; one buffer is bound once, read-write if
    // any view writes it.
    std::uint32_t bind(void const* buffer, scalar type, bool writable, std::uint64_t bytes, std::int64_t elements,
                       char const* name) {
        for (std::size_t k = 0; k < bindings_.size(); ++k) {
            binding& b = bindings_[k];
            if (b.buffer != buffer) continue;
            if (b.type != type)
                throw shader_error(std::string(device_) + ": '" + name + "' and '" + b.name +
                                   "' view the same buffer with different dtypes, which one shader binding "
                                   "cannot express");
            b.writable = b.writable || writable;
            if (bytes > b.bytes) b.bytes = bytes;
            if (elements < b.elements) {
                b.elements = elements;
                b.name = name;
            }
            return static_cast<std::uint32_t>(k);
        }
        bindings_.push_back({buffer, type, writable, bytes, elements, name});
        return static_cast<std::uint32_t>(bindings_.size() - 1);
    }

    bool has_f16() const noexcept { return has_f16_; }
    bool has_bf16() const noexcept { return has_bf16_; }

private:
    char const* device_;
    std::int64_t index_value_;
    bool has_f16_;
    bool has_bf16_;
    std::vector<node> nodes_;
    std::vector<binding> bindings_;
    std::vector<std::uint32_t> uniforms_;
    std::int32_t index_node_ = -1;
    bool ambiguous_ = false;
};

namespace detail {
SWITCHYARD_PROCESS_STATE inline trace*& active_trace() noexcept {
    thread_local trace* active = nullptr;
    return active;
}
}  // namespace detail

// Makes `t` the active trace of this thread while it lives.
class trace_scope {
public:
    explicit trace_scope(trace& t) : previous_(detail::active_trace()) { detail::active_trace() = &t; }
    ~trace_scope() { detail::active_trace() = previous_; }
    trace_scope(trace_scope const&) = delete;
    trace_scope& operator=(trace_scope const&) = delete;

private:
    trace* previous_;
};

// The active trace; symbolic values exist only inside one.
inline trace& active(char const* what) {
    trace* t = detail::active_trace();
    if (!t)
        throw shader_error(std::string("switchyard: ") + what +
                           " on a shader-device value outside a shader for_each (symbolic values exist only "
                           "while for_each traces a kernel)");
    return *t;
}

// Refuses a type shaders lack, naming dtype and device.
template <typename T>
void require_supported(trace const& t) {
    if constexpr (scalar_of<T> == scalar::unsupported) {
        throw shader_error(std::string(t.device()) + " does not support dtype " + type_name<T>() +
                           ": shader languages have no 64-bit floats or integers, or 8/16-bit integers "
                           "(supported: f32, i32, u32, bool, f16 where the adapter has shader-f16, and bf16 on "
                           "Metal)");
    } else if constexpr (scalar_of<T> == scalar::f16) {
        if (!t.has_f16())
            throw shader_error(std::string(t.device()) +
                               ": dtype f16 needs the adapter feature shader-f16, which this adapter lacks");
    } else if constexpr (scalar_of<T> == scalar::bf16) {
        if (!t.has_bf16())
            throw shader_error(std::string(t.device()) +
                               " does not support dtype bf16: WGSL has no bf16 (Metal has, as MSL 3.1's bfloat)");
    }
}

// Whether any node of the trace computes in f16 (a WGSL shader then needs
// `enable f16;`).
inline bool uses_f16(trace const& t) {
    for (node const& nd : t.nodes())
        if (nd.type == scalar::f16) return true;
    return false;
}

// The 32-bit uniform word of a host number (f16 and bf16 travel as f32).
template <typename T>
std::uint32_t uniform_word(T v) {
    std::uint32_t word = 0;
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, half> || std::is_same_v<T, bfloat16>) {
        float const f = static_cast<float>(v);
        std::memcpy(&word, &f, 4);
    } else if constexpr (std::is_same_v<T, bool>) {
        word = v ? 1u : 0u;
    } else {
        word = static_cast<std::uint32_t>(v);
    }
    return word;
}

}  // namespace switchyard::shader
