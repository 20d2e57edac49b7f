// torch::Tensor to switchyard: views straight from tensors, checks that name
// the op and the argument, combined contiguity, a device guard, and the
// dispatch coordinates of a call.
//
//     auto const args = op_args("softplus", {{"x", x}, {"out", out}});  // same device, defined
//     table.select(args.dispatch_set())(x, out, beta, threshold);      // (device, dtype, contiguity)
//     flat_in<torch::kCPU, torch::kFloat, contiguity::strided> in(x, "x");
//
// op_args throws std::runtime_error, which torch reports to Python as
// RuntimeError like its own ops' argument checks (std::invalid_argument would
// become ValueError):
//   "softplus: argument 'out' is on cuda:1 but 'x' is on cpu"
//
// For CUDA tensors op_args also makes their device current and sets
// switchyard's current CUDA stream to PyTorch's current stream on that device
// (device/cuda/current_stream.h), until it is destroyed: construct it first
// in the op, and for_each launches where PyTorch would.
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/DeviceGuard.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>

#include <initializer_list>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

#include "switchyard/core/dispatch_set.h"
#include "switchyard/core/enums.h"
#include "switchyard/device/cuda/current_stream.h"
#include "switchyard/torch/types.h"
#include "switchyard/view/iteration_order.h"
#include "switchyard/view/overlap.h"
#include "switchyard/view/strided_ref.h"

namespace switchyard {

template <>
struct strided_source<at::Tensor> {
    static strided_ref ref(at::Tensor const& t, char const* name) {
        if (!t.defined()) throw std::invalid_argument(std::string("'") + name + "' is an undefined tensor");
        auto const device = t.device();
        return strided_ref::make(t.data_ptr(), to_dtype(t.scalar_type()), to_device_kind(device.type()),
                                 t.sizes().data(), t.strides().data(), t.dim(), name,
                                 device.has_index() ? device.index() : 0);
    }
};

// A tensor argument of an op and the name it has in the op's schema.
struct named_tensor {
    char const* name;
    at::Tensor const& tensor;
};

// The tensor arguments of one elementwise call: validated once, then used for
// dispatch coordinates and views. The first tensor is the primary one (its
// device and dtype are the call's).
class op_args {
public:
    op_args(std::string_view op, std::initializer_list<named_tensor> tensors) : op_(op) {
        if (tensors.size() == 0 || tensors.size() > max_args)
            fail("op_args takes 1 to " + std::to_string(max_args) + " tensors, got " + std::to_string(tensors.size()));
        for (auto const& t : tensors)
            if (!t.tensor.defined()) fail(std::string("argument '") + t.name + "' is an undefined tensor");
        auto const& first = *tensors.begin();
        for (auto const& t : tensors)
            if (t.tensor.device() != first.tensor.device())
                fail(std::string("argument '") + t.name + "' is on " + t.tensor.device().str() + " but '" + first.name +
                     "' is on " + first.tensor.device().str());
        for (auto const& t : tensors) {
            try {
                refs_[count_++] = strided_source<at::Tensor>::ref(t.tensor, t.name);
            } catch (std::exception const& e) {
                fail(std::string("argument '") + t.name + "': " + e.what());
            }
        }
        device_ = first.tensor.device().type();
        dtype_ = first.tensor.scalar_type();
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
        for (std::size_t i = 1; i < count_; ++i) {
            bool same = refs_[i].rank == refs_[0].rank;
            for (std::int32_t d = 0; same && d < refs_[0].rank; ++d) same = refs_[i].sizes[d] == refs_[0].sizes[d];
            if (!same)
                fail(std::string("argument '") + refs_[i].name + "' has shape " + detail::shape_string(refs_[i]) +
                     " but '" + refs_[0].name + "' has " + detail::shape_string(refs_[0]));
        }
        return *this;
    }

    // The tensor at `output` (by default the last one, the output by
    // convention) can be written safely: it has no internal overlap (a
    // dimension of size > 1 with stride 0) and is either exactly one of the
    // other tensors (in place) or shares no memory with them.
    op_args const& no_overlap(std::size_t output = max_args) const {
        if (output >= count_) output = count_ - 1;
        strided_ref const& out = refs_[output];
        if (has_internal_overlap(out))
            fail(std::string("argument '") + out.name +
                 "' has internal overlap (a dimension of size > 1 with stride 0, as after expand); an output "
                 "needs one element per index");
        for (std::size_t i = 0; i < count_; ++i)
            if (i != output && memory_overlap_of(out, refs_[i]) == memory_overlap::partial)
                fail(std::string("argument '") + out.name + "' partially overlaps '" + refs_[i].name +
                     "' in memory; pass either separate memory or exactly the same tensor (in place)");
        return *this;
    }

    strided_ref const& ref(std::size_t i) const { return refs_[i]; }
    c10::DeviceType device_type() const noexcept { return device_; }
    c10::ScalarType scalar_type() const noexcept { return dtype_; }

    // The joint iteration order of all tensors, the last one (the output, by
    // convention) leading.
    iteration_order order() const {
        switch (count_) {
            case 1: return iteration_order_of(refs_[0]);
            case 2: return iteration_order_of(refs_[1], refs_[0]);
            case 3: return iteration_order_of(refs_[2], refs_[0], refs_[1]);
            default: return iteration_order_of(refs_[3], refs_[0], refs_[1], refs_[2]);
        }
    }
    contiguity combined_contiguity() const { return order().dense ? contiguity::contiguous : contiguity::strided; }

    // (device type, dtype, combined contiguity) of the call.
    switchyard::dispatch_set<c10::DeviceType, c10::ScalarType, contiguity> dispatch_set() const {
        return {device_, dtype_, combined_contiguity()};
    }

    [[noreturn]] void fail(std::string const& what) const { throw std::runtime_error(op_ + ": " + what); }

private:
    static constexpr std::size_t max_args = 4;
    std::string op_;
    strided_ref refs_[max_args];
    std::size_t count_ = 0;
    c10::DeviceType device_ = c10::DeviceType::CPU;
    c10::ScalarType dtype_ = c10::ScalarType::Float;
    c10::OptionalDeviceGuard guard_;
    std::optional<cuda_stream_scope> stream_;  // after guard_: restored first
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
