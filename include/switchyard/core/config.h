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

// Put before a loop of a few constant iterations that g++ must not unroll
// fully: it unrolls such loops before its loop vectorizer runs, and its SLP
// pass may then leave the unrolled operations scalar (it did for amax's NaN
// select in the CPU lane folds). nvcc's and nvc++'s front ends refuse the
// pragma, so CPU code in .cu files goes without it (a speed cost only).
#if !defined(SWITCHYARD_KEEP_LOOP)
#if defined(__GNUC__) && !defined(__CUDACC__) && !defined(__NVCOMPILER)
#define SWITCHYARD_KEEP_LOOP _Pragma("GCC unroll 1")
#else
#define SWITCHYARD_KEEP_LOOP
#endif
#endif

// Marks the functions and variables that hold process-wide state: thread
// pools, default devices, the current stream and trace, CUDA scratch pools,
// the polling cap. They are hidden, so every shared library that includes
// switchyard (each PyTorch extension) has its own state objects, whatever
// visibility it is compiled with. Libraries that should share them (built
// against the same switchyard) define SWITCHYARD_SHARED_STATE, all of them.
// The rest of switchyard's inline code stays private only with
// -fvisibility=hidden (see docs/torch.md).
#if defined(_WIN32)
#define SWITCHYARD_PROCESS_STATE
#elif defined(SWITCHYARD_SHARED_STATE)
#define SWITCHYARD_PROCESS_STATE __attribute__((visibility("default")))
#else
#define SWITCHYARD_PROCESS_STATE __attribute__((visibility("hidden")))
#endif

#define SWITCHYARD_VERSION_MAJOR 0
#define SWITCHYARD_VERSION_MINOR 1
#define SWITCHYARD_VERSION_PATCH 0
