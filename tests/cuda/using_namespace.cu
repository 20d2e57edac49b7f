// `using namespace switchyard;` in a .cu file: unqualified math calls must
// stay unambiguous next to CUDA's own overloads (::sqrt(float),
// ::min(float, float), ...), which win; qualified calls still reach
// switchyard's functions. Compiled by nvcc only (an OBJECT library).
#include <switchyard/switchyard.h>

#include <cmath>

using namespace switchyard;

__global__ void unqualified_math(float const* xf, float* yf, double const* xd, double* yd, int n) {
    int const i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
    if (i >= n) return;
    float const f = xf[i];
    double const d = xd[i];
    yf[i] = sqrt(f) + exp(f) + log(f) + tanh(f) + abs(f) + min(f, 1.0f) + max(f, 0.0f) + static_cast<float>(min(i, 3));
    yd[i] = sqrt(d) + exp(d) + log(d) + tanh(d) + abs(d) + min(d, 1.0) + max(d, 0.0) + max(1, 2);
    // Qualified calls are switchyard's, softplus_to included.
    yf[i] += switchyard::exp(f) + switchyard::min(f, 0) + softplus(f) + softplus_to<half>(f) + sigmoid(f);
    yd[i] += switchyard::exp(d) + switchyard::select(d > 0.0, d, -d) + softplus(d) + expm1(d) + log1p(d);
}

double unqualified_on_host(float f, double d) {
    return sqrt(2.0) + exp(1.0f) + min(f, 2.0f) + max(d, 1.0) + sqrt(f) + exp(d) + min(1.0, 2.0) + max(3.0f, f);
}

void launch_unqualified(float const* xf, float* yf, double const* xd, double* yd, int n) {
    unqualified_math<<<(n + 127) / 128, 128>>>(xf, yf, xd, yd, n);
}
