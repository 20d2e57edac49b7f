// register_kernel(m, "op", &fn): registers fn as the kernel of op for every
// device the including file is compiled for: CPU, and CUDA when nvcc
// compiles it. One registration serves both builds of an op file.
//
//     TORCH_LIBRARY_FRAGMENT(my_ops, m) {
//         m.def("softplus(Tensor x, float beta=1, float threshold=20) -> Tensor");
//         sy::register_kernel(m, "softplus", &softplus);
//     }
#pragma once

#include <c10/core/DispatchKey.h>
#include <torch/library.h>

namespace switchyard {

template <typename F>
void register_kernel(torch::Library& m, char const* name, F* kernel) {
    m.impl(name, torch::dispatch(c10::DispatchKey::CPU, kernel));
#if defined(__CUDACC__)
    m.impl(name, torch::dispatch(c10::DispatchKey::CUDA, kernel));
#endif
}

}  // namespace switchyard
