// buffer<Device>: owning device memory that frees itself through the device
// that allocated it. Move-only.
//
//     cpu_device cpu;
//     buffer<cpu_device> b(cpu, 1024);     // 1024 bytes
//     b.copy_from_host(src, 1024);
//     float* p = b.data<float>();
//
// The buffer keeps a copy of the device handle (devices are cheap handles;
// any_device shares its device), so the device must outlive nothing extra.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>
#include <utility>

#include "switchyard/device/device.h"

namespace switchyard {

template <device Device>
class buffer {
public:
    buffer(Device device, std::size_t bytes) : device_(std::move(device)), bytes_(bytes) {
        data_ = device_.alloc(bytes);
    }
    buffer(buffer const&) = delete;
    buffer& operator=(buffer const&) = delete;
    buffer(buffer&& o) noexcept
        : device_(std::move(o.device_)), data_(std::exchange(o.data_, nullptr)), bytes_(std::exchange(o.bytes_, 0)) {}
    buffer& operator=(buffer&& o) noexcept {
        if (this != &o) {
            release();
            device_ = std::move(o.device_);
            data_ = std::exchange(o.data_, nullptr);
            bytes_ = std::exchange(o.bytes_, 0);
        }
        return *this;
    }
    ~buffer() { release(); }

    void* data() const noexcept { return data_; }
    template <typename T>
    T* data() const noexcept {
        return static_cast<T*>(data_);
    }
    std::size_t size_bytes() const noexcept { return bytes_; }
    Device& device() noexcept { return device_; }

    void copy_from_host(void const* src, std::size_t bytes) {
        check(bytes, "copy_from_host");
        device_.copy_from_host(data_, src, bytes);
    }
    void copy_to_host(void* dst, std::size_t bytes) {
        check(bytes, "copy_to_host");
        device_.copy_to_host(dst, data_, bytes);
    }

private:
    void check(std::size_t bytes, char const* call) const {
        if (bytes > bytes_)
            throw std::out_of_range(std::string("buffer::") + call + ": " + std::to_string(bytes) +
                                    " bytes requested but the buffer holds " + std::to_string(bytes_));
    }
    // Never throws: it runs in destructors, also while an earlier device
    // error unwinds (a CUDA error is sticky, and cudaFreeAsync reports it
    // again); the device reports such errors on its next call.
    void release() noexcept {
        if (data_) {
            try {
                device_.free(data_);
            } catch (...) {
            }
        }
        data_ = nullptr;
    }

    Device device_;
    void* data_ = nullptr;
    std::size_t bytes_ = 0;
};

}  // namespace switchyard
