// The x86-64 levels the CPU's elementwise runner (device/cpu/transform.h) is
// compiled for, and the level of the CPU it runs on.
//
// With g++ on x86-64 a row function is compiled three times, for AVX-512
// (x86-64-v4), AVX2 with F16C and FMA (x86-64-v3) and the baseline, and the
// widest the CPU has is picked once per process. Unlike for_each's
// target_clones (device/cpu/for_each.h), each copy knows at compile time which
// level it is, so it can use instructions the baseline lacks, F16C's f16
// conversions in registers among them. A program built with -march=native (or
// any -mavx512f) needs no copies; clang 14 and nvcc's host pass use the
// baseline, as they do for for_each.
#pragma once

#if defined(__GNUC__) && !defined(__clang__) && !defined(__CUDACC__) && defined(__x86_64__) && \
    !defined(SWITCHYARD_NO_TARGET_CLONES) && !defined(__AVX512F__)
#define SWITCHYARD_CPU_ISA_VARIANTS 1
#endif

namespace switchyard::detail {

enum class cpu_isa { baseline, x86_64_v3, x86_64_v4 };

// The widest level this CPU runs (always baseline without the variants).
inline cpu_isa host_cpu_isa() noexcept {
#if defined(SWITCHYARD_CPU_ISA_VARIANTS)
    static cpu_isa const level = [] {
        __builtin_cpu_init();
        if (__builtin_cpu_supports("x86-64-v4")) return cpu_isa::x86_64_v4;
        if (__builtin_cpu_supports("x86-64-v3")) return cpu_isa::x86_64_v3;
        return cpu_isa::baseline;
    }();
    return level;
#else
    return cpu_isa::baseline;
#endif
}

}  // namespace switchyard::detail
