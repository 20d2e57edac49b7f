// softplus's scalar functions, shared by the torch ops (softplus.cpp) and
// the WebGPU tests: templates over the storage type T and compute type C, so
// they run as plain C++ on CPU and CUDA and trace to WGSL on WebGPU, where T
// and C are shader::value types (switchyard/kernel_types.h). No torch here.
#pragma once

#include <switchyard/math.h>
#include <switchyard/shader/math.h>

namespace switchyard_examples {

namespace sy = switchyard;

// PyTorch's definition: x where beta * x > threshold, else log1p(exp(beta * x)) / beta.
// sy::softplus(y) is log1p(exp(y)), computed without overflow and cheaper;
// softplus_to<T> computes it only as accurately as storage type T needs
// (fewer instructions for f16/bf16 on the GPU, where they are compute-bound).
// Multiplying by 1/beta (computed once) instead of dividing is within an ulp
// of the quotient, exact for beta = 1, and spares the GPU an IEEE division
// per element (a fifth of this kernel's time on an H100).
// T is the storage type, C the compute type (float for half types).
template <typename T, typename C>
SWITCHYARD_HOST_DEVICE T softplus_scalar(T x, C beta, C inv_beta, C threshold) {
    C const xc = static_cast<C>(x);
    C const bx = beta * xc;
    return static_cast<T>(sy::select(bx > threshold, xc, sy::softplus_to<T>(bx) * inv_beta));
}

// d softplus / dx = sigmoid(beta * x), and 1 where the forward returned x.
template <typename T, typename C>
SWITCHYARD_HOST_DEVICE T softplus_grad_scalar(T grad, T x, C beta, C threshold) {
    C const bx = beta * static_cast<C>(x);
    return static_cast<T>(static_cast<C>(grad) * sy::select(bx > threshold, C(1), sy::sigmoid(bx)));
}

}  // namespace switchyard_examples
