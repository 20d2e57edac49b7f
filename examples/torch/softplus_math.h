// softplus's scalar functions, shared by the torch ops (softplus.cpp,
// softplus_backward.cpp) and the WebGPU tests: functions of compute-type
// values C, so they run as plain C++ on CPU and CUDA and trace to WGSL on
// WebGPU, where C is a shader::value (switchyard/kernel_types.h). No torch here.
#pragma once

#include <switchyard/math.h>
#include <switchyard/shader/math.h>

namespace switchyard_examples {

namespace sy = switchyard;

// PyTorch's definition: x where beta * x > threshold, else log1p(exp(beta * x)) / beta.
// sy::softplus(y) is log1p(exp(y)), computed without overflow and cheaper;
// softplus_to<S> computes it only as accurately as storage type S needs
// (fewer instructions for f16/bf16 on the GPU, where they are compute-bound).
// Multiplying by 1/beta (computed once) instead of dividing is within an ulp
// of the quotient, exact for beta = 1, and spares the GPU an IEEE division
// per element (a fifth of this kernel's time on an H100).
template <typename S, typename C>
SWITCHYARD_HOST_DEVICE C softplus_scalar(C x, C beta, C inv_beta, C threshold) {
    C const bx = beta * x;
    return sy::select(bx > threshold, x, sy::softplus_to<S>(bx) * inv_beta);
}

// d softplus / dx = sigmoid(beta * x), and 1 where the forward returned x.
template <typename C>
SWITCHYARD_HOST_DEVICE C softplus_grad_scalar(C grad, C x, C beta, C threshold) {
    C const bx = beta * x;
    return grad * sy::select(bx > threshold, C(1), sy::sigmoid(bx));
}

}  // namespace switchyard_examples
