// cpu_device: host memory, 64-byte aligned (a cache line, and the widest
// vector register), copies by memcpy, sync() a no-op since CPU work has
// finished when for_each returns.
#pragma once

#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

#include "switchyard/device/device.h"

namespace switchyard {

class cpu_device {
public:
    static constexpr std::size_t alignment = 64;

    // nullptr for 0 bytes; device_error when memory is exhausted.
    void* alloc(std::size_t bytes) {
        if (bytes == 0) return nullptr;
        std::size_t const rounded = (bytes + alignment - 1) / alignment * alignment;
        if (rounded < bytes) throw device_error("cpu alloc: " + std::to_string(bytes) + " bytes is too large");
        void* p = std::aligned_alloc(alignment, rounded);
        if (p == nullptr) throw device_error("cpu alloc: out of memory allocating " + std::to_string(bytes) + " bytes");
        return p;
    }
    void free(void* p) noexcept { std::free(p); }
    void copy_from_host(void* dst, void const* src, std::size_t bytes) {
        if (bytes) std::memcpy(dst, src, bytes);
    }
    void copy_to_host(void* dst, void const* src, std::size_t bytes) {
        if (bytes) std::memcpy(dst, src, bytes);
    }
    void sync() noexcept {}
    std::string_view name() const noexcept { return "cpu"; }
};

static_assert(device<cpu_device>);

}  // namespace switchyard
