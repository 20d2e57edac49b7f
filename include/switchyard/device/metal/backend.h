// metal_backend: what metal_device (device/metal.h) asks of Metal, and
// metal_counters, what the device has done. The device is written against
// this interface so that its logic (pooling, batching, counters, checks)
// runs anywhere: Metal's own backend is device/metal/objc_backend.h, the
// tests' stand-in tests/metal/standin_backend.h.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "switchyard/device/counters.h"

namespace switchyard {

// What a Metal device has done (device/counters.h), its command buffers
// committed (one per sync for batched work) and pipelines compiled.
struct metal_counters : device_counters {
    std::uint64_t commits = 0;
    std::uint64_t pipelines_compiled = 0;
};

// Metal as metal_device uses it. Handles are Objective-C objects (or the
// stand-in's) as void*; the backend owns what it creates until released.
class metal_backend {
public:
    virtual ~metal_backend() = default;

    // The GPU's name ("Apple M2 Pro", ...).
    virtual std::string name() const = 0;
    // The largest buffer the device makes (maxBufferLength).
    virtual std::uint64_t max_buffer_length() const = 0;
    // A buffer of `bytes` with shared storage, and its CPU address.
    virtual void* new_buffer(std::uint64_t bytes) = 0;
    virtual void* contents(void* buffer) = 0;
    virtual void release_buffer(void* buffer) = 0;
    // A compute pipeline for function `entry` of MSL source, compiled with
    // fast math off; throws device_error with the compiler's message.
    virtual void* new_pipeline(std::string const& msl, std::string const& entry) = 0;
    virtual void release_pipeline(void* pipeline) = 0;
    // Threads per threadgroup of every dispatch: a reduction's kernel folds
    // a group's values in threadgroup memory and counts on this size.
    static constexpr std::uint64_t threadgroup_size = 256;
    // Encodes one dispatch of `threads` threads into the open command buffer
    // (opening one if none is), in threadgroups of threadgroup_size (the
    // last one whole, its threads past `threads` included): buffers 0..k-1,
    // each bound from its byte offset (offsets[j], aligned to the element
    // the kernel reads), then `uniforms` as buffer k.
    virtual void encode_dispatch(void* pipeline, std::span<void* const> buffers, std::span<std::uint64_t const> offsets,
                                 std::span<std::byte const> uniforms, std::uint64_t threads) = 0;
    // Commits the open command buffer, if any, and waits until it completes.
    virtual void commit_and_wait() = 0;
    // Commits the open command buffer, if any, without waiting where the
    // backend can: work encoded later runs after it (one queue, in order),
    // and commit_and_wait() still waits for it.
    virtual void commit() { commit_and_wait(); }
};

}  // namespace switchyard
