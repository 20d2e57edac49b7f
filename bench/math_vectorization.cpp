// Vectorization check for switchyard/math.h: one noinline loop
// y[i] = switchyard::f(x[i]) per function and type, compiled on its own
// (-c, no main) and inspected with objdump for packed instructions, or with
// -fopt-info-vec-optimized (g++) / -Rpass=loop-vectorize (clang++):
//
//   g++ -std=c++20 -O3 [-march=x86-64-v3] -Iinclude -fopt-info-vec-optimized
//       -c bench/math_vectorization.cpp -o mv.o
//   objdump -d --no-show-raw-insn mv.o
//
// Every symbol is extern "C" (sy_vec_<function>_<type>) to keep the
// disassembly readable. sqrt vectorizes only with -fno-math-errno (see
// math.h); everything else needs no flag beyond -O3.
#include <switchyard/math.h>

#include <cstddef>

namespace sy = switchyard;

#define SY_VEC_UNARY(name, T, expr)                                                                            \
    extern "C" SWITCHYARD_NOINLINE void sy_vec_##name(T* __restrict y, T const* __restrict x, std::size_t n) { \
        for (std::size_t i = 0; i < n; ++i) {                                                                  \
            T const v = x[i];                                                                                  \
            y[i] = (expr);                                                                                     \
        }                                                                                                      \
    }

#define SY_VEC_BINARY(name, T, expr)                                                                                 \
    extern "C" SWITCHYARD_NOINLINE void sy_vec_##name(T* __restrict y, T const* __restrict x, T const* __restrict z, \
                                                      std::size_t n) {                                               \
        for (std::size_t i = 0; i < n; ++i) {                                                                        \
            T const a = x[i];                                                                                        \
            T const b = z[i];                                                                                        \
            y[i] = (expr);                                                                                           \
        }                                                                                                            \
    }

#define SY_VEC_ALL(T, suffix)                                           \
    SY_VEC_UNARY(exp_##suffix, T, sy::exp(v))                           \
    SY_VEC_UNARY(expm1_##suffix, T, sy::expm1(v))                       \
    SY_VEC_UNARY(log_##suffix, T, sy::log(v))                           \
    SY_VEC_UNARY(log1p_##suffix, T, sy::log1p(v))                       \
    SY_VEC_UNARY(tanh_##suffix, T, sy::tanh(v))                         \
    SY_VEC_UNARY(sigmoid_##suffix, T, sy::sigmoid(v))                   \
    SY_VEC_UNARY(sqrt_##suffix, T, sy::sqrt(v))                         \
    SY_VEC_UNARY(abs_##suffix, T, sy::abs(v))                           \
    SY_VEC_BINARY(min_##suffix, T, sy::min(a, b))                       \
    SY_VEC_BINARY(max_##suffix, T, sy::max(a, b))                       \
    SY_VEC_BINARY(select_##suffix, T, sy::select(a > b, a, T(0.5) * b)) \
    /* softplus, the composite the CPU benchmark times */               \
    SY_VEC_UNARY(softplus_##suffix, T, sy::log1p(sy::exp(v)))

SY_VEC_ALL(float, f32)
SY_VEC_ALL(double, f64)
