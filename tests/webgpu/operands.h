// Test helpers for the WebGPU tests: host data with a device copy of the
// same sizes and strides, a device buffer, test inputs and an ulp distance.
#pragma once

#include <switchyard/switchyard.h>

#include <cfloat>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <vector>

namespace test_webgpu {

namespace sy = switchyard;

inline sy::webgpu_device& dev() { return sy::current_webgpu_device(); }

// Host data and a device copy of it with the same sizes and strides.
struct operand {
    std::vector<float> host;
    void* buffer = nullptr;
    sy::strided_ref cpu, gpu;
    operand(std::vector<std::int64_t> sizes, std::vector<std::int64_t> strides, std::int64_t elements, char const* name,
            float seed) {
        host.resize(static_cast<std::size_t>(elements));
        for (std::size_t i = 0; i < host.size(); ++i) host[i] = std::sin(float(i) * 0.37f + seed) * 4.0f;
        buffer = dev().alloc(host.size() * 4);
        dev().copy_from_host(buffer, host.data(), host.size() * 4);
        auto const rank = static_cast<std::int64_t>(sizes.size());
        cpu = sy::strided_ref::make(host.data(), sy::dtype::f32, sy::device_kind::cpu, sizes.data(), strides.data(),
                                    rank, name);
        gpu = sy::strided_ref::make(buffer, sy::dtype::f32, sy::device_kind::webgpu, sizes.data(), strides.data(), rank,
                                    name);
    }
    ~operand() { dev().free(buffer); }
    operand(operand const&) = delete;
    operand& operator=(operand const&) = delete;
    std::vector<float> read() const {
        std::vector<float> v(host.size());
        dev().copy_to_host(v.data(), buffer, v.size() * 4);
        return v;
    }
};

// A device buffer holding `host`, freed with the test.
struct device_array {
    void* buffer = nullptr;
    std::size_t bytes = 0;
    template <typename T>
    explicit device_array(std::vector<T> const& host) : bytes(host.size() * sizeof(T)) {
        buffer = dev().alloc(bytes);
        dev().copy_from_host(buffer, host.data(), bytes);
    }
    explicit device_array(std::size_t n_bytes) : buffer(dev().alloc(n_bytes)), bytes(n_bytes) {}
    ~device_array() { dev().free(buffer); }
    device_array(device_array const&) = delete;
    device_array& operator=(device_array const&) = delete;
    template <typename T>
    std::vector<T> read(std::size_t n) const {
        std::vector<T> host(n);
        dev().copy_to_host(host.data(), buffer, n * sizeof(T));
        return host;
    }
    sy::strided_ref ref(sy::dtype type, std::initializer_list<std::int64_t> sizes, char const* name) const {
        return sy::strided_ref::contiguous(buffer, type, sy::device_kind::webgpu, sizes, name);
    }
};

// Inputs spread over [-42, 42], repeating every 4001 values.
inline std::vector<float> test_inputs(std::size_t n) {
    std::vector<float> x(n);
    for (std::size_t i = 0; i < n; ++i) x[i] = static_cast<float>(static_cast<int>(i % 4001) - 2000) * 0.021f;
    return x;
}

// Ulps of b between a and b; values below FLT_MIN count as equal (a GPU may
// flush subnormals).
inline double ulps(float a, float b) {
    if (a == b || (std::fabs(a) < FLT_MIN && std::fabs(b) < FLT_MIN)) return 0;
    return std::fabs(double(a) - double(b)) / (std::nextafter(std::fabs(b), INFINITY) - std::fabs(b));
}

}  // namespace test_webgpu
