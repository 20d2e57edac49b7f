// Portability macros shared by every layer: host/device annotations for code
// that must also compile as CUDA device code, and forced inlining for the
// small functions on dispatch and kernel hot paths.
#pragma once

#if defined(__CUDACC__)
#define SWITCHYARD_HOST_DEVICE __host__ __device__
#else
#define SWITCHYARD_HOST_DEVICE
#endif

#if defined(_MSC_VER) && !defined(__clang__)
#define SWITCHYARD_INLINE __forceinline
#define SWITCHYARD_NOINLINE __declspec(noinline)
#else
#define SWITCHYARD_INLINE inline __attribute__((always_inline))
#define SWITCHYARD_NOINLINE __attribute__((noinline))
#endif

#define SWITCHYARD_VERSION_MAJOR 0
#define SWITCHYARD_VERSION_MINOR 1
#define SWITCHYARD_VERSION_PATCH 0
