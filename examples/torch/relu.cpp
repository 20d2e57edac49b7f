// relu: the "before" baseline, written the way extensions are written without
// switchyard: a hand-rolled dtype switch, a serial loop, contiguous 1-D
// thinking (the tensor is made contiguous first, at the cost of a copy), and
// a separate overload for every piece. Compare with softplus.cpp, which needs
// none of this.
#include <ATen/ops/empty_like.h>
#include <c10/util/BFloat16.h>
#include <c10/util/Half.h>
#include <torch/library.h>

#include <cstdint>
#include <stdexcept>
#include <string>

namespace switchyard_examples {

namespace {

// NaN stays NaN (as in torch.relu), hence !(x <= 0) rather than x > 0. Half
// types need their own overloads: their comparisons go through float.
template <typename T>
T relu_scalar(T x) {
    return !(x <= T(0)) ? x : T(0);
}
c10::Half relu_scalar(c10::Half x) { return !(static_cast<float>(x) <= 0.0f) ? x : c10::Half(0.0f); }
c10::BFloat16 relu_scalar(c10::BFloat16 x) { return !(static_cast<float>(x) <= 0.0f) ? x : c10::BFloat16(0.0f); }

template <typename T>
void relu_cpu(at::Tensor const& x, at::Tensor& out) {
    T const* in = x.data_ptr<T>();
    T* o = out.data_ptr<T>();
    std::int64_t const n = x.numel();
    for (std::int64_t i = 0; i < n; ++i) o[i] = relu_scalar(in[i]);
}

}  // namespace

at::Tensor relu(at::Tensor const& input) {
    if (!input.device().is_cpu())
        throw std::runtime_error("relu: argument 'x' is on " + input.device().str() +
                                    "; this baseline only has a CPU kernel");
    at::Tensor const x = input.contiguous();
    at::Tensor out = at::empty_like(x);
    switch (x.scalar_type()) {
        case at::kFloat: relu_cpu<float>(x, out); break;
        case at::kDouble: relu_cpu<double>(x, out); break;
        case at::kHalf: relu_cpu<c10::Half>(x, out); break;
        case at::kBFloat16: relu_cpu<c10::BFloat16>(x, out); break;
        default:
            throw std::runtime_error(std::string("relu: argument 'x' has dtype ") + c10::toString(x.scalar_type()) +
                                        "; relu supports Half, BFloat16, Float and Double");
    }
    return out;
}

TORCH_LIBRARY_FRAGMENT(switchyard_examples, m) { m.def("relu(Tensor x) -> Tensor"); }

TORCH_LIBRARY_IMPL(switchyard_examples, CPU, m) { m.impl("relu", &relu); }

}  // namespace switchyard_examples
