// switchyard/math.h inside CUDA kernels: every function, float and double,
// compiled by nvcc as device code (and as constant expressions on the host).
#include <switchyard/math.h>

namespace sy = switchyard;

template <class T>
__global__ void all_math(T const* x, T* y, int n) {
    int const i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
    if (i >= n) return;
    T const v = x[i];
    T acc = sy::exp(v) + sy::expm1(v) + sy::log(v) + sy::log1p(v) + sy::tanh(v) + sy::sigmoid(v) + sy::sqrt(v) +
            sy::abs(v) + sy::min(v, T(1)) + sy::max(v, T(0));
    y[i] = sy::select(v > T(0), acc, -acc);
}

// Integer select, min and max in device code, beside CUDA's own ::min/::max.
__global__ void integer_math(int const* x, long long* y, int n) {
    int const i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
    if (i >= n) return;
    y[i] = sy::select(x[i] > 0, sy::min(x[i], 7), sy::max(x[i], -7)) + sy::min(static_cast<long long>(i), 3ll);
}

// Device code also gets the constexpr versions.
__global__ void constants(float* y) {
    constexpr float e = sy::exp(1.0f);
    constexpr double l = sy::log(10.0);
    y[0] = e + static_cast<float>(l);
}

template __global__ void all_math<float>(float const*, float*, int);
template __global__ void all_math<double>(double const*, double*, int);

void launch(float const* xf, float* yf, double const* xd, double* yd, int n) {
    all_math<<<(n + 127) / 128, 128>>>(xf, yf, n);
    all_math<<<(n + 127) / 128, 128>>>(xd, yd, n);
    constants<<<1, 1>>>(yf);
    integer_math<<<1, 32>>>(nullptr, nullptr, 0);
}
