// torch::Tensor to switchyard: operands straight from tensors, checks that
// name the op and the argument, broadcast result shapes and outputs, a
// device guard and stream, and the dispatch coordinates of a call.
//
//     sy::op_args args("mul_sigmoid", {{"x", x}, {"y", y}});  // same device, defined
//     at::Tensor out = args.new_output("out");                // broadcast shape
//     args.select(table)(args);                               // (device, dtype)
//     // in the op: sy::transform(tag, args["out"], f, args["x"], args["y"]);
//
// op_args throws std::runtime_error, which torch reports to Python as
// RuntimeError like its own ops' argument checks (std::invalid_argument would
// become ValueError):
//   "softplus: argument 'out' is on cuda:1 but 'x' is on cpu"
//
// Meta tensors (and the fake tensors of torch.compile, which reach C++ as
// meta tensors) get the same checks, result shapes (symbolic ones included)
// and outputs, and select returns a kernel that does nothing: an op's own
// function is then its shape function, registered for the Meta key by
// register_kernel (torch/register.h). Memory overlap is not checked there.
//
// For CUDA tensors op_args also makes their device current and sets
// switchyard's current CUDA stream to PyTorch's current stream on that device
// (device/cuda/current_stream.h), until it is destroyed: construct it first
// in the op, and transform and for_each launch where PyTorch would. For CPU
// tensors it runs the op's CPU kernels on PyTorch's intra-op threads
// (torch/threads.h) until it is destroyed. For MPS tensors (builds with
// SWITCHYARD_WITH_METAL) it runs Metal kernels on PyTorch's MPS stream
// (torch/mps.h) and commits them when it is destroyed; other builds refuse
// MPS tensors, naming the argument.
#pragma once

#include <ATen/core/Tensor.h>
#include <ATen/native/Resize.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/empty_like.h>
#include <c10/core/DeviceGuard.h>
#include <c10/core/SymInt.h>
#include <c10/core/SymNodeImpl.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "switchyard/core/axes.h"
#include "switchyard/core/dispatch_set.h"
#include "switchyard/core/enums.h"
#include "switchyard/device/cuda/current_stream.h"
#include "switchyard/torch/threads.h"
#include "switchyard/torch/types.h"
#include "switchyard/view/elementwise_layout.h"
#include "switchyard/view/iteration_order.h"
#include "switchyard/view/overlap.h"
#include "switchyard/view/strided_ref.h"

#if defined(SWITCHYARD_WITH_METAL)
#include "switchyard/torch/mps.h"
#endif

namespace switchyard {

namespace detail {
// t's operand with element 0 at `data`.
inline strided_ref tensor_ref(at::Tensor const& t, char const* name, void* data) {
    auto const device = t.device();
    return strided_ref::make(data, to_dtype(t.scalar_type()), to_device_kind(device.type()), t.sizes().data(),
                             t.strides().data(), t.dim(), name, device.has_index() ? device.index() : 0);
}
}  // namespace detail

// An MPS tensor's data pointer is not an address switchyard can bind: it
// becomes an operand through op_args (torch/mps.h).
template <>
struct strided_source<at::Tensor> {
    static strided_ref ref(at::Tensor const& t, char const* name) {
        if (!t.defined()) throw std::invalid_argument(std::string("'") + name + "' is an undefined tensor");
        if (t.device().type() == c10::DeviceType::MPS)
            throw std::invalid_argument(std::string("'") + name +
                                        "' is an MPS tensor: pass it through sy::op_args, which binds it to "
                                        "switchyard's Metal device");
        return detail::tensor_ref(t, name, t.data_ptr());
    }
};

namespace detail {
// dispatch_set under another name: inside op_args, the name is its member.
template <typename... T>
using call_coordinates = switchyard::dispatch_set<T...>;

// The kernel select returns for meta tensors: it runs nothing.
template <typename F>
struct no_kernel;
template <typename R, typename... Args>
struct no_kernel<R (*)(Args...)> {
    static_assert(std::is_void_v<R> || std::is_default_constructible_v<R>,
                  "op_args::select: the table's kernels return a type with no default value, which the "
                  "meta-tensor kernel (it runs nothing) could return; return void or a default-constructible type");
    static R run(Args...) {
        if constexpr (!std::is_void_v<R>) return R{};
    }
};

// `coordinates` with the device type replaced by `device`.
template <typename... T>
switchyard::dispatch_set<T...> on_device(switchyard::dispatch_set<T...> const& coordinates, c10::DeviceType device) {
    return {[&] {
        if constexpr (std::is_same_v<T, c10::DeviceType>)
            return device;
        else
            return coordinates.template get<T>();
    }()...};
}

// A tensor's sizes as int64s, or as SymInts (symbolic under torch.compile).
template <typename Size>
auto sizes_of(at::Tensor const& t) {
    if constexpr (std::is_same_v<Size, c10::SymInt>)
        return t.sym_sizes();
    else
        return t.sizes();
}

// "5", or the symbol's expression ("s0") for a symbolic size.
inline std::string size_string(c10::SymInt const& size) {
    auto const value = size.maybe_as_int();
    return value ? std::to_string(*value) : size.toSymNodeImplUnowned()->str();
}
inline std::string size_string(std::int64_t size) { return std::to_string(size); }

inline std::string shape_string(c10::SymIntArrayRef sizes) {
    std::string s = "[";
    for (std::size_t d = 0; d < sizes.size(); ++d) s += (d ? ", " : "") + size_string(sizes[d]);
    return s + "]";
}

// The shortest text that reads back as `value`: 1e+300 rather than
// std::to_string's 301 digits.
inline std::string number_string(double value) {
    char text[32];
    for (int digits = 1; digits <= 17; ++digits) {
        std::snprintf(text, sizeof text, "%.*g", digits, value);
        if (std::strtod(text, nullptr) == value) break;
    }
    return text;
}

inline bool resize_output(at::Tensor const& out, std::vector<std::int64_t> const& shape) {
    return at::native::resize_output(out, shape);
}
inline bool resize_output(at::Tensor const& out, std::vector<c10::SymInt> const& shape) {
    return at::native::resize_output_symint(out, shape);
}
}  // namespace detail

// A tensor argument of an op and the name it has in the op's schema.
struct named_tensor {
    char const* name;
    at::Tensor const& tensor;
};

// The tensor arguments of one elementwise call, by name: validated once,
// then used for dispatch coordinates and as transform's operands. The first
// tensor is the primary one (its device and dtype are the call's).
//
//     sy::op_args args("mul_sigmoid", {{"x", x}, {"y", y}});   // inputs
//     at::Tensor out = args.new_output("out");   // broadcast shape, x's dtype
//     args.select(table)(args);                  // (device, dtype) of the call
//     // in the op: sy::transform(tag, args["out"], f, args["x"], args["y"]);
//
// Names are the schema's: errors and args["name"] use them. Up to
// max_operands (16) tensors.
class op_args {
public:
    op_args(std::string_view op, std::initializer_list<named_tensor> tensors) : op_(op) {
        if (tensors.size() == 0 || tensors.size() > max_args)
            fail("op_args takes 1 to " + std::to_string(max_args) + " tensors, got " + std::to_string(tensors.size()));
        auto const& first = *tensors.begin();
        if (!first.tensor.defined()) fail(std::string("argument '") + first.name + "' is an undefined tensor");
        meta_ = first.tensor.is_meta();
        device_ = first.tensor.device().type();
        if (device_ == c10::DeviceType::MPS) {
#if defined(SWITCHYARD_WITH_METAL)
            mps_.emplace();
#else
            fail(std::string("argument '") + first.name +
                 "' is an MPS tensor, but this extension was built without Metal support (define "
                 "SWITCHYARD_WITH_METAL on macOS: the switchyard::metal CMake target)");
#endif
        }
        for (auto const& t : tensors) add(t.name, t.tensor, first.name, first.tensor.device());
        inputs_ = count_;
        dtype_ = first.tensor.scalar_type();
        if (device_ == c10::DeviceType::CPU) team_.emplace();
        if (device_ == c10::DeviceType::CUDA) {
            c10::Device const device = first.tensor.device();
            guard_.reset_device(device);
            stream_.emplace(c10::impl::getDeviceGuardImpl(c10::DeviceType::CUDA)->getStream(device).native_handle());
        }
    }

    // Every tensor has the primary tensor's dtype (for ops whose outputs
    // match their input).
    op_args const& same_dtype() const {
        for (std::size_t i = 1; i < count_; ++i)
            if (refs_[i].type != refs_[0].type)
                fail(std::string("argument '") + refs_[i].name + "' has dtype " +
                     c10::toString(to_torch(refs_[i].type)) + " but '" + refs_[0].name + "' has " +
                     c10::toString(to_torch(refs_[0].type)));
        return *this;
    }
    // Every tensor has the primary tensor's shape.
    op_args const& same_shape() const {
        for (std::size_t i = 1; i < count_; ++i)
            if (meta_ ? !tensors_[i].sym_sizes().equals(tensors_[0].sym_sizes())
                      : !detail::same_shape(refs_[i], refs_[0]))
                fail(std::string("argument '") + refs_[i].name + "' has shape " + shape_text(i) + " but '" +
                     refs_[0].name + "' has " + shape_text(0));
        return *this;
    }

    // The tensor at `output` (by default the last one, the output by
    // convention) can be written safely: it has no internal overlap (a
    // dimension of size > 1 with stride 0) and is either exactly one of the
    // other tensors (in place) or shares no memory with them.
    op_args const& no_overlap(std::size_t output = max_args) const {
        if (output >= count_) output = count_ - 1;
        if (!meta_) check_writable(output);
        return *this;
    }

    // The shape of the inputs (the constructor's tensors) broadcast together
    // by PyTorch's rules.
    // Size is std::int64_t, or c10::SymInt for shapes that may be symbolic.
    template <typename Size = std::int64_t>
    std::vector<Size> broadcast_shape() const {
        std::int64_t rank = 0;
        for (std::size_t i = 0; i < inputs_; ++i) rank = std::max(rank, tensors_[i].dim());
        std::vector<Size> shape(static_cast<std::size_t>(rank), Size(1));
        for (std::size_t i = 0; i < inputs_; ++i) {
            auto const sizes = detail::sizes_of<Size>(tensors_[i]);
            auto const offset = rank - static_cast<std::int64_t>(sizes.size());
            for (std::size_t d = 0; d < sizes.size(); ++d) {
                Size& s = shape[static_cast<std::size_t>(offset) + d];
                Size const& size = sizes[d];
                if (size == s || size == 1) continue;
                if (s != 1) {
                    std::string others;
                    for (std::size_t j = 0; j < i; ++j)
                        others += std::string(j ? ", '" : "'") + refs_[j].name + "' " + shape_text(j);
                    fail(std::string("argument '") + refs_[i].name + "' has shape " + shape_text(i) +
                         ", which does not broadcast with " + others + " (size " + detail::size_string(size) +
                         " against " + detail::size_string(s) + " in dimension " +
                         std::to_string(offset + static_cast<std::int64_t>(d)) + " of the result)");
                }
                s = size;
            }
        }
        return shape;
    }

    // Allocates an output named `name` with the broadcast shape and the
    // primary tensor's dtype and device, and adds it. Where the primary
    // tensor has that shape the output takes its memory layout (as
    // PyTorch's elementwise ops do), else it is contiguous.
    [[nodiscard]] at::Tensor new_output(char const* name) {
        at::Tensor out = meta_ ? allocate_output<c10::SymInt>() : allocate_output<std::int64_t>();
        add(name, out, refs_[0].name, tensors_[0].device());
        return out;
    }

    // Adds the out= argument `out` as an output named `name`: on the primary
    // tensor's device, with its dtype and the broadcast shape (an out= of
    // another shape is resized to it as PyTorch's out= ops do, with their
    // deprecation warning when it had elements), no internal overlap, and no
    // memory shared with an input unless it is exactly that input (memory
    // the strides cannot prove disjoint counts as shared).
    op_args& output(char const* name, at::Tensor const& out) {
        if (out.defined() && out.scalar_type() != dtype_)
            fail(std::string("argument '") + name + "' has dtype " + c10::toString(out.scalar_type()) + " but '" +
                 refs_[0].name + "' has " + c10::toString(dtype_) + "; the result's dtype is " + c10::toString(dtype_));
        if (meta_)
            resize_output<c10::SymInt>(name, out);
        else
            resize_output<std::int64_t>(name, out);
        add(name, out, refs_[0].name, tensors_[0].device());
        if (!meta_) check_writable(count_ - 1, true);
        return *this;
    }

    // `value`, the op's host scalar argument `name`, once it is known to fit
    // the call's compute type (float for f16, bf16 and f32): PyTorch refuses
    // a Scalar that float cannot hold instead of computing with infinity.
    double scalar(char const* name, double value) const {
        if (dtype_ != c10::ScalarType::Double && std::isfinite(value) &&
            std::fabs(value) > static_cast<double>(std::numeric_limits<float>::max()))
            fail(std::string("argument '") + name + "' is " + detail::number_string(value) +
                 ": value cannot be converted to type float without overflow");
        return value;
    }

    // The tensor named `name`.
    strided_ref const& operator[](std::string_view name) const {
        for (std::size_t i = 0; i < count_; ++i)
            if (name == refs_[i].name) return refs_[i];
        std::string known;
        for (std::size_t i = 0; i < count_; ++i) known += std::string(i ? ", '" : "'") + refs_[i].name + "'";
        fail("no argument named '" + std::string(name) + "' (the arguments are " + known + ")");
    }
    strided_ref const& ref(std::size_t i) const { return refs_[i]; }
    std::size_t size() const noexcept { return count_; }
    c10::DeviceType device_type() const noexcept { return device_; }
    c10::ScalarType scalar_type() const noexcept { return dtype_; }

    // The joint iteration order of all tensors, the last one (the output, by
    // convention) leading.
    iteration_order order() const {
        if (meta_) fail("meta tensors have no memory to iterate over (op_args::select runs no kernel for them)");
        strided_ref const* ordered[max_args];
        ordered[0] = &refs_[count_ - 1];
        for (std::size_t i = 0; i + 1 < count_; ++i) ordered[i + 1] = &refs_[i];
        same_shape();
        return joint_iteration_order(ordered, static_cast<int>(count_));
    }
    // Meta tensors have no memory layout: contiguous, which selects nothing.
    contiguity combined_contiguity() const {
        return meta_ || order().dense ? contiguity::contiguous : contiguity::strided;
    }

    // (device type, dtype, combined contiguity) of the call.
    switchyard::dispatch_set<c10::DeviceType, c10::ScalarType, contiguity> dispatch_set() const {
        return {device_, dtype_, combined_contiguity()};
    }

    // The table's kernel for this call: its coordinates are the call's
    // device type and dtype, and its combined contiguity where the table has
    // a contiguity axis (ops built on transform need none).
    // For meta tensors: a kernel that runs nothing.
    template <typename Table>
    typename Table::function_type select(Table const& table) const {
        return [&]<typename... A>(axes<A...>) {
            return select(table,
                          detail::call_coordinates<typename A::value_type...>{coordinate<typename A::value_type>()...});
        }(typename Table::space{});
    }
    // The table's kernel for coordinates the op builds itself (for tables
    // with other axes); for meta tensors, a kernel that runs nothing.
    template <typename Table, typename... T>
    typename Table::function_type select(Table const& table, switchyard::dispatch_set<T...> const& coordinates) const {
        if (!meta_) return table.select(coordinates);
        // Meta: the call must be one that some device of the table serves
        // (else the table's error, naming the coordinates), as on that device.
        bool covered = false;
        [&]<typename... A>(axes<A...>) {
            auto const try_axis = [&]<typename Axis>(Axis) {
                if constexpr (std::is_same_v<typename Axis::value_type, c10::DeviceType>)
                    for (c10::DeviceType const d : Axis::values)
                        covered = covered || table.try_select(detail::on_device(coordinates, d)) != nullptr;
            };
            (try_axis(A{}), ...);
        }(typename Table::space{});
        if (!covered) table.select(coordinates);
        return &detail::no_kernel<typename Table::function_type>::run;
    }
    bool is_meta() const noexcept { return meta_; }

    [[noreturn]] void fail(std::string const& what) const { throw std::runtime_error(op_ + ": " + what); }

private:
    static constexpr std::size_t max_args = max_operands;

    void add(char const* name, at::Tensor const& t, char const* first_name, c10::Device first_device) {
        if (count_ == max_args)
            fail("op_args takes at most " + std::to_string(max_args) + " tensors; '" + name + "' is one more");
        if (!t.defined()) fail(std::string("argument '") + name + "' is an undefined tensor");
        if (t.device() != first_device)
            fail(std::string("argument '") + name + "' is on " + t.device().str() + " but '" + first_name + "' is on " +
                 first_device.str());
        try {
            if (meta_) {  // no memory: the name, dtype and rank serve the checks
                if (t.dim() > max_rank)
                    throw std::invalid_argument("rank " + std::to_string(t.dim()) +
                                                " exceeds switchyard's maximum of " + std::to_string(max_rank) +
                                                " dimensions");
                refs_[count_] = strided_ref{};
                refs_[count_].name = name;
                refs_[count_].type = to_dtype(t.scalar_type());
                refs_[count_].rank = static_cast<std::int32_t>(t.dim());
            } else {
                refs_[count_] = ref_of(t, name);
            }
        } catch (std::exception const& e) {
            fail(std::string("argument '") + name + "': " + e.what());
        }
        tensors_[count_] = t;
        ++count_;
    }

    // A tensor's operand; an MPS tensor's data is its address in the borrowed
    // range of its MTLBuffer (torch/mps.h).
    strided_ref ref_of(at::Tensor const& t, char const* name) {
#if defined(SWITCHYARD_WITH_METAL)
        if (mps_) return detail::tensor_ref(t, name, mps_->address_of(t));
#endif
        return strided_source<at::Tensor>::ref(t, name);
    }

    // Shapes formatted without c10::str: an ostream crashed inside the
    // nvcc-built example extension on the GPU machine (torch 2.11).
    std::string shape_text(std::size_t i) const { return detail::shape_string(tensors_[i].sym_sizes()); }

    static std::string shape_string_of(std::vector<std::int64_t> const& shape) {
        return detail::shape_string(shape.data(), shape.size());
    }
    static std::string shape_string_of(std::vector<c10::SymInt> const& shape) { return detail::shape_string(shape); }

    template <typename Size>
    at::Tensor allocate_output() const {
        std::vector<Size> const shape = broadcast_shape<Size>();
        at::Tensor const& primary = tensors_[0];
        if (detail::sizes_of<Size>(primary).equals(shape)) return at::empty_like(primary);
        if constexpr (std::is_same_v<Size, c10::SymInt>)
            return at::empty_symint(shape, primary.options());
        else
            return at::empty(shape, primary.options());
    }

    template <typename Size>
    void resize_output(char const* name, at::Tensor const& out) {
        std::vector<Size> const shape = broadcast_shape<Size>();
        // Resizing can reallocate storage that an input shares (x = base[:2],
        // out = base[3:]): the inputs' data pointers are read again after it.
        if (out.defined() && out.device() == tensors_[0].device() && detail::resize_output(out, shape) && !meta_)
            for (std::size_t i = 0; i < count_; ++i) refs_[i] = ref_of(tensors_[i], refs_[i].name);
        if (out.defined() && !detail::sizes_of<Size>(out).equals(shape))
            fail(std::string("argument '") + name + "' has shape " + detail::shape_string(out.sym_sizes()) +
                 " but the result has shape " + shape_string_of(shape));
    }

    // `strict`: memory the strides cannot prove disjoint counts as shared
    // (outputs of transform); else it is allowed, as for the for_each ops.
    void check_writable(std::size_t output, bool strict = false) const {
        strided_ref const& out = refs_[output];
        if (has_internal_overlap(out))
            fail(std::string("argument '") + out.name +
                 "' has internal overlap (a dimension of size > 1 with stride 0, as after expand); an output "
                 "needs one element per index");
        for (std::size_t i = 0; i < count_; ++i) {
            if (i == output) continue;
            memory_overlap const m = memory_overlap_of(out, refs_[i]);
            if (m == memory_overlap::partial || (m == memory_overlap::full && !detail::same_shape(out, refs_[i])) ||
                (strict && m == memory_overlap::unknown))
                fail(std::string("argument '") + out.name + "' partially overlaps '" + refs_[i].name +
                     "' in memory; pass either separate memory or exactly the same tensor (in place)");
        }
    }

    template <typename T>
    T coordinate() const {
        if constexpr (std::is_same_v<T, c10::DeviceType>)
            return device_;
        else if constexpr (std::is_same_v<T, c10::ScalarType>)
            return dtype_;
        else if constexpr (std::is_same_v<T, contiguity>)
            return combined_contiguity();
        else
            static_assert(std::is_same_v<T, c10::DeviceType>,
                          "op_args::select: the table has an axis other than device type, dtype and contiguity; "
                          "build its dispatch_set yourself");
    }

    std::string op_;
    strided_ref refs_[max_args];
    std::size_t count_ = 0;
    std::size_t inputs_ = 0;
    bool meta_ = false;
    // Handles, not references: a caller may pass temporaries (x.contiguous()),
    // whose memory the refs point into.
    at::Tensor tensors_[max_args];
    c10::DeviceType device_ = c10::DeviceType::CPU;
    c10::ScalarType dtype_ = c10::ScalarType::Float;
    c10::OptionalDeviceGuard guard_;
    std::optional<cuda_stream_scope> stream_;  // after guard_: restored first
    std::optional<torch_team_scope> team_;
#if defined(SWITCHYARD_WITH_METAL)
    std::optional<torch_mps_scope> mps_;
#endif
};

// Makes the tensor's device current for the guard's lifetime (a no-op for
// CPU tensors), so kernels launch on the right GPU.
template <typename Tag>
c10::OptionalDeviceGuard make_device_guard(Tag, at::Tensor const& t) {
    // Returned as a prvalue: device guards cannot be moved.
    return c10::OptionalDeviceGuard(t.defined() && !t.device().is_cpu() ? std::optional<c10::Device>(t.device())
                                                                        : std::nullopt);
}

}  // namespace switchyard
