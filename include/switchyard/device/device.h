// The device contract every device implements (CPU here; CUDA, Metal and
// WebGPU in their own folders), and device_error.
//
//     void* alloc(std::size_t bytes);        // owned by the device; alloc(0) may return nullptr
//     void free(void* p);                    // free(nullptr) does nothing
//     void copy_from_host(void* device_dst, void const* host_src, std::size_t bytes);
//     void copy_to_host(void* host_dst, void const* device_src, std::size_t bytes);
//     void sync();                           // wait for all work queued on the device
//     std::string_view name() const;         // "cpu", "cuda:0", ...
//
// Hot paths use devices statically through this concept; any_device
// (any_device.h) erases the type for runtime use.
#pragma once

#include <concepts>
#include <cstddef>
#include <stdexcept>
#include <string>
#include <string_view>

namespace switchyard {

template <typename D>
concept device = requires(D& d, D const& cd, void* p, void const* cp, std::size_t n) {
    { d.alloc(n) } -> std::same_as<void*>;
    { d.free(p) } -> std::same_as<void>;
    { d.copy_from_host(p, cp, n) } -> std::same_as<void>;
    { d.copy_to_host(p, cp, n) } -> std::same_as<void>;
    { d.sync() } -> std::same_as<void>;
    { cd.name() } -> std::convertible_to<std::string_view>;
};

// A device operation failed: the message names the device and the call.
class device_error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

}  // namespace switchyard
