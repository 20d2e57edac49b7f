// relu: the "before" baseline, written the way extensions are written without
// switchyard: a hand-rolled dtype switch, a serial loop, contiguous 1-D
// thinking (the tensor is made contiguous first, at the cost of a copy), and
// a separate overload for every piece, then all of it again for CUDA (a
// kernel, its launch, the device guard and the stream by hand) and for Meta
// (the shape function torch.compile needs). Compare with
// softplus.cpp, which needs none of this.
#include <ATen/ops/empty.h>
#include <ATen/ops/empty_like.h>
#include <c10/util/BFloat16.h>
#include <c10/util/Half.h>
#include <torch/library.h>

#include <cstdint>
#include <stdexcept>
#include <string>

#if defined(__CUDACC__)
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#endif

namespace switchyard_examples {

namespace {

// NaN stays NaN (as in torch.relu), hence !(x <= 0) rather than x > 0. Half
// types need their own overloads: their comparisons go through float.
template <typename T>
C10_HOST_DEVICE T relu_scalar(T x) {
    return !(x <= T(0)) ? x : T(0);
}
C10_HOST_DEVICE c10::Half relu_scalar(c10::Half x) { return !(static_cast<float>(x) <= 0.0f) ? x : c10::Half(0.0f); }
C10_HOST_DEVICE c10::BFloat16 relu_scalar(c10::BFloat16 x) {
    return !(static_cast<float>(x) <= 0.0f) ? x : c10::BFloat16(0.0f);
}

template <typename T>
void relu_cpu(at::Tensor const& x, at::Tensor& out) {
    T const* in = x.data_ptr<T>();
    T* o = out.data_ptr<T>();
    std::int64_t const n = x.numel();
    for (std::int64_t i = 0; i < n; ++i) o[i] = relu_scalar(in[i]);
}

#if defined(__CUDACC__)
template <typename T>
__global__ void relu_kernel(T const* in, T* out, std::int64_t n) {
    std::int64_t const i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i < n) out[i] = relu_scalar(in[i]);
}

template <typename T>
void relu_cuda(at::Tensor const& x, at::Tensor& out) {
    c10::cuda::CUDAGuard const guard(x.device());
    std::int64_t const n = x.numel();
    if (n == 0) return;
    int const block = 256;
    auto const grid = static_cast<unsigned>((n + block - 1) / block);
    relu_kernel<T><<<grid, block, 0, c10::cuda::getCurrentCUDAStream()>>>(x.data_ptr<T>(), out.data_ptr<T>(), n);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
}
#endif

template <typename T>
void relu_any(at::Tensor const& x, at::Tensor& out) {
#if defined(__CUDACC__)
    if (x.is_cuda()) return relu_cuda<T>(x, out);
#endif
    relu_cpu<T>(x, out);
}

}  // namespace

at::Tensor relu(at::Tensor const& input) {
    if (!input.device().is_cpu() && !input.device().is_cuda())
        throw std::runtime_error("relu: argument 'x' is on " + input.device().str() +
                                 "; this baseline only has CPU and CUDA kernels");
    // A tensor whose data sits between element boundaries (torch.frombuffer
    // with a byte offset) would be read through misaligned pointers: copy it.
    bool const misaligned = reinterpret_cast<std::uintptr_t>(input.data_ptr()) % input.element_size() != 0;
    at::Tensor const x = misaligned ? input.clone(at::MemoryFormat::Contiguous) : input.contiguous();
    at::Tensor out = at::empty_like(x);
    switch (x.scalar_type()) {
        case at::kFloat: relu_any<float>(x, out); break;
        case at::kDouble: relu_any<double>(x, out); break;
        case at::kHalf: relu_any<c10::Half>(x, out); break;
        case at::kBFloat16: relu_any<c10::BFloat16>(x, out); break;
        default:
            throw std::runtime_error(std::string("relu: argument 'x' has dtype ") + c10::toString(x.scalar_type()) +
                                     "; relu supports Half, BFloat16, Float and Double");
    }
    return out;
}

// The shape function torch.compile needs, written once more by hand: the
// same dtype check, and a contiguous result, as relu returns.
at::Tensor relu_meta(at::Tensor const& x) {
    at::ScalarType const t = x.scalar_type();
    if (t != at::kHalf && t != at::kBFloat16 && t != at::kFloat && t != at::kDouble)
        throw std::runtime_error(std::string("relu: argument 'x' has dtype ") + c10::toString(x.scalar_type()) +
                                 "; relu supports Half, BFloat16, Float and Double");
    return at::empty_symint(x.sym_sizes(), x.options());
}

TORCH_LIBRARY_FRAGMENT(switchyard_examples, m) { m.def("relu(Tensor x) -> Tensor"); }

TORCH_LIBRARY_IMPL(switchyard_examples, Meta, m) { m.impl("relu", &relu_meta); }

TORCH_LIBRARY_IMPL(switchyard_examples, CPU, m) { m.impl("relu", &relu); }

#if defined(__CUDACC__)
TORCH_LIBRARY_IMPL(switchyard_examples, CUDA, m) { m.impl("relu", &relu); }
#endif

}  // namespace switchyard_examples
