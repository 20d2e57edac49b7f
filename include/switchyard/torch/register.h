// register_kernel(m, "op", &fn): registers fn as the kernel of op for every
// device the including file is compiled for: CPU, CUDA when nvcc compiles
// it, and MPS where SWITCHYARD_WITH_METAL is defined (macOS). One
// registration serves every build of an op file.
//
// fn is also registered for the Meta key, as the op's shape function (what
// torch.compile's fake tensors run): with meta tensors, op_args checks the
// arguments and allocates results of the right shapes, and op_args::select
// returns a kernel that does nothing (torch/tensor.h). So fn must reach its
// kernels through op_args::select. An op that does not, or that has its own
// Meta kernel or Python fake (torch.library.register_fake refuses an op with
// a C++ Meta kernel), passes sy::without_meta.
//
//     TORCH_LIBRARY_FRAGMENT(my_ops, m) {
//         m.def("softplus(Tensor x, float beta=1, float threshold=20) -> Tensor");
//         sy::register_kernel(m, "softplus", &softplus);
//     }
#pragma once

#include <c10/core/DispatchKey.h>
#include <torch/library.h>

namespace switchyard {

// register_kernel(m, "op", &fn, sy::without_meta): the devices only.
struct without_meta_t {};
inline constexpr without_meta_t without_meta{};

template <typename F>
void register_kernel(torch::Library& m, char const* name, F* kernel, without_meta_t) {
    m.impl(name, torch::dispatch(c10::DispatchKey::CPU, kernel));
#if defined(__CUDACC__)
    m.impl(name, torch::dispatch(c10::DispatchKey::CUDA, kernel));
#endif
#if defined(SWITCHYARD_WITH_METAL)
    m.impl(name, torch::dispatch(c10::DispatchKey::MPS, kernel));
#endif
}

template <typename F>
void register_kernel(torch::Library& m, char const* name, F* kernel) {
    register_kernel(m, name, kernel, without_meta);
    m.impl(name, torch::dispatch(c10::DispatchKey::Meta, kernel));
}

}  // namespace switchyard
