// metal_device: the device contract (device.h) on Apple's Metal, plus what
// shader work needs: compute pipelines from MSL (shader/msl.h), dispatches
// recorded into one open command buffer, and counters.
//
//     switchyard::metal_device dev;               // the system's default Metal device
//     void* x = dev.alloc(n * 4);                 // an MTLBuffer (shared storage), as void*
//     dev.copy_from_host(x, host, n * 4);
//     ... dispatches record into the open command buffer, nothing is committed ...
//     dev.copy_to_host(host, x, n * 4);           // commits once, waits, then copies
//
// The device talks to Metal through a metal_backend: buffers, pipelines
// compiled from MSL, dispatches encoded into the open command buffer, and
// commit-and-wait. metal_device() uses Metal itself (device/metal/
// objc_backend.h: the Objective-C runtime's C API and Metal.framework, both
// loaded with dlopen, so nothing is linked against Apple's frameworks at
// build time and no Apple SDK header is needed); on a system without Metal
// it throws device_error "metal: Metal is not available on this system".
// metal_device(backend) takes another backend: the tests run this class,
// the library's Metal runners and every emitted kernel over a stand-in that
// compiles the MSL with clang and runs it on the CPU (tests/metal/).
//
// Buffers have shared storage (one memory for CPU and GPU), so copies are
// memcpy to or from the buffer's contents, after the recorded work that may
// use it has run: an upload or readback with work recorded commits it and
// waits first. Freed buffers go to a size-class pool (device/
// size_class_pool.h) until release_cached_buffers(), once no recorded work
// can use them (a buffer freed while work is recorded waits for the next
// commit). Not thread-safe: one thread uses a device at a time.
//
// Buffers the device did not make (PyTorch's MPS tensors' MTLBuffers) are
// borrowed: borrow(buffer, bytes) gives an address range of their own,
// reserved from the process's address space and never touched, so that a
// view may point anywhere into them (a tensor's storage offset); a dispatch
// binds the buffer from that offset. The device's own buffers are bound
// from their start, as alloc returned them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include <sys/mman.h>

#include "switchyard/device/device.h"
#include "switchyard/device/metal/backend.h"
#include "switchyard/device/metal/objc_backend.h"
#include "switchyard/device/size_class_pool.h"

namespace switchyard {

// A buffer a dispatch binds: a live buffer of the device or an address in
// a borrowed one, the bytes from there the kernel may touch, and the
// operand's name for errors ('x', or "partials").
struct metal_binding {
    void* buffer = nullptr;
    std::uint64_t bytes = 0;
    std::string name;
};

class metal_device {
public:
    // The buffers one compute stage binds (31 on every Apple GPU), the
    // uniform buffer included.
    static constexpr std::size_t max_buffers_per_stage = 31;

    metal_device() : metal_device(detail::make_system_metal_backend()) {}
    explicit metal_device(std::unique_ptr<metal_backend> backend) : s_(std::make_unique<state>()) {
        if (!backend) throw device_error("metal: metal_device given no backend");
        s_->backend = std::move(backend);
    }
    metal_device(metal_device&&) noexcept = default;
    metal_device& operator=(metal_device&& other) noexcept {
        if (this != &other) {
            close();
            s_ = std::move(other.s_);
        }
        return *this;
    }
    ~metal_device() { close(); }

    void* alloc(std::size_t bytes) {
        if (bytes == 0) return nullptr;
        state& s = live();
        std::uint64_t const largest = s.backend->max_buffer_length();
        if (bytes > largest)
            throw device_error("metal: cannot allocate " + std::to_string(bytes) +
                               " bytes: the device's maxBufferLength is " + std::to_string(largest) + " bytes");
        std::uint64_t const capacity = pool_type::capacity_for(bytes, largest);
        void* buffer = s.pool.take(capacity);
        if (!buffer) {
            buffer = s.backend->new_buffer(capacity);
            if (!buffer)
                throw device_error("metal: cannot allocate " + std::to_string(bytes) +
                                   " bytes (newBufferWithLength failed)");
            ++s.counters.buffers_created;
        }
        s.buffers.emplace(buffer, live_buffer{capacity, bytes});
        s.counters.live_bytes += capacity;
        if (s.counters.live_bytes > s.counters.peak_live_bytes) s.counters.peak_live_bytes = s.counters.live_bytes;
        return buffer;
    }

    void free(void* p) {
        if (!p) return;
        state& s = live();
        auto const it = s.buffers.find(p);
        if (it == s.buffers.end()) throw device_error("metal: free of a pointer this device did not allocate");
        std::uint64_t const capacity = it->second.capacity;
        s.buffers.erase(it);
        s.counters.live_bytes -= capacity;
        // Recorded work may still use the buffer: it is reused or released
        // only after the next commit.
        if (s.recorded)
            s.freed_while_recorded.emplace_back(p, capacity);
        else
            recycle(p, capacity);
    }

    void copy_from_host(void* device_dst, void const* host_src, std::size_t bytes) {
        if (bytes == 0) return;
        check_extent(device_dst, bytes, "copy_from_host");
        if (live().recorded || live().in_flight) commit();  // that work reads what was there before
        std::memcpy(live().backend->contents(device_dst), host_src, bytes);
        ++live().counters.uploads;
    }

    void copy_to_host(void* host_dst, void const* device_src, std::size_t bytes) {
        if (bytes == 0) return;
        void* const src = const_cast<void*>(device_src);
        check_extent(src, bytes, "copy_to_host");
        if (live().recorded || live().in_flight) commit();
        std::memcpy(host_dst, live().backend->contents(src), bytes);
        ++live().counters.readbacks;
    }

    // Commits recorded work, if any, and waits until it and work flushed
    // before completes.
    void sync() {
        if (live().recorded || live().in_flight) commit();
    }

    // Commits recorded work without waiting for it, where the backend can
    // (metal_backend::commit): buffers freed while it was recorded are
    // reused by later work, which runs after it; copies and sync() still
    // wait for it. The torch adapter flushes at the end of each MPS op.
    void flush() {
        state& s = live();
        if (!s.recorded) return;
        s.recorded = false;
        s.in_flight = true;
        ++s.counters.commits;
        s.backend->commit();
        recycle_freed_while_recorded();
    }

    std::string_view name() const noexcept { return "metal"; }

    // The GPU's name from Metal.
    std::string gpu_name() const { return live().backend->name(); }

    // Releases the buffers kept for reuse; live buffers are untouched.
    void release_cached_buffers() {
        state& s = live();
        if (s.recorded || s.in_flight) commit();  // work may still use them
        s.pool.clear([&](void* b) { s.backend->release_buffer(b); });
    }
    std::uint64_t cached_buffer_bytes() const { return live().pool.free_bytes(); }

    // ------------------------------------------------------- shader support --

    // Every Apple GPU has half.
    bool has_f16() const noexcept { return true; }
    // MSL 3.1's bfloat (macOS 14, iOS 17 and later).
    bool has_bf16() const noexcept { return true; }
    metal_counters counters() const { return live().counters; }

    // The pipeline for `msl`'s function `entry`, compiled on first request and
    // kept for the device's lifetime.
    void* cached_pipeline(std::string const& msl, std::string const& entry = "sy_kernel") {
        state& s = live();
        std::string key = entry + '\n' + msl;
        auto const it = s.pipelines.find(key);
        if (it != s.pipelines.end()) return it->second;
        void* const pipeline = s.backend->new_pipeline(msl, entry);
        ++s.counters.pipelines_compiled;
        s.pipelines.emplace(std::move(key), pipeline);
        return pipeline;
    }
    std::size_t cached_pipelines() const { return live().pipelines.size(); }

    // Whether p is a live buffer from this device's alloc; its size (the
    // bytes alloc was asked for: what copies and kernels may touch) and its
    // capacity (the pool's size class it came from).
    bool owns(void const* p) const noexcept { return s_ && s_->buffers.count(const_cast<void*>(p)) != 0; }
    std::uint64_t size(void const* p) const { return find(p).size; }
    std::uint64_t capacity(void const* p) const { return find(p).capacity; }

    // Lets dispatches bind `buffer`, an MTLBuffer this device did not make,
    // whose first `bytes` the caller's views may use, until end_borrow of
    // the returned address: views point into [address, address + bytes).
    // The device neither copies, frees nor pools the buffer; its owner keeps
    // it alive and orders its other uses.
    void* borrow(void* buffer, std::uint64_t bytes) {
        state& s = live();
        if (!buffer) throw std::invalid_argument("metal: borrow of a null buffer");
        std::size_t const reserved = bytes > 0 ? static_cast<std::size_t>(bytes) : 1;
        void* const address = ::mmap(nullptr, reserved, PROT_NONE, MAP_PRIVATE | MAP_ANON | MAP_NORESERVE, -1, 0);
        if (address == MAP_FAILED)
            throw device_error("metal: cannot reserve " + std::to_string(bytes) +
                               " bytes of address space for a borrowed buffer");
        s.borrowed.emplace(reinterpret_cast<std::uintptr_t>(address), borrowed_buffer{buffer, bytes, reserved});
        return address;
    }
    void end_borrow(void* address) {
        state& s = live();
        auto const it = s.borrowed.find(reinterpret_cast<std::uintptr_t>(address));
        if (it == s.borrowed.end())
            throw std::invalid_argument(
                "metal: end_borrow of an address that borrow() did not return (or already ended)");
        ::munmap(address, it->second.reserved);
        s.borrowed.erase(it);
    }

    // What a dispatch binds for p: the buffer, p's byte offset in it and the
    // buffer's size (what alloc was asked for, or borrow given). buffer is
    // null where p is neither a live buffer of this device nor an address
    // in a borrowed one.
    struct bound_buffer {
        void* buffer = nullptr;
        std::uint64_t offset = 0;
        std::uint64_t size = 0;
    };
    bound_buffer resolve(void const* p) const noexcept {
        if (!s_ || !p) return {};
        if (auto const own = s_->buffers.find(const_cast<void*>(p)); own != s_->buffers.end())
            return {const_cast<void*>(p), 0, own->second.size};
        auto const address = reinterpret_cast<std::uintptr_t>(p);
        auto it = s_->borrowed.upper_bound(address);
        if (it == s_->borrowed.begin()) return {};
        --it;
        std::uint64_t const offset = address - it->first;
        if (offset >= it->second.reserved) return {};
        return {it->second.buffer, offset, it->second.bytes};
    }

    // Records a dispatch of `threads` threads into the open command buffer:
    // the bindings' buffers at 0..k-1 (borrowed ones from their offsets),
    // then the uniform words, padded to whole uint4s as the kernels declare
    // them. Refuses a binding that is not a live or borrowed buffer of this
    // device or that reaches past the bytes alloc was asked for (or borrow
    // given), naming `op` and the binding.
    void dispatch(void* pipeline, std::span<metal_binding const> bindings, std::vector<std::uint32_t> uniform_words,
                  std::uint64_t threads, std::string_view op) {
        state& s = live();
        if (bindings.size() + 1 > max_buffers_per_stage)
            throw device_error("metal: a dispatch binds " + std::to_string(bindings.size()) +
                               " buffers and its uniforms; a compute stage binds at most " +
                               std::to_string(max_buffers_per_stage));
        std::vector<void*> buffers;
        std::vector<std::uint64_t> offsets;
        buffers.reserve(bindings.size());
        offsets.reserve(bindings.size());
        for (metal_binding const& b : bindings) {
            bound_buffer const at = resolve(b.buffer);
            if (!at.buffer)
                throw device_error(std::string(op) + " on metal: " + b.name + " is not a live buffer of this device");
            if (at.offset > at.size || b.bytes > at.size - at.offset)
                throw std::invalid_argument(
                    std::string(op) + " on metal: " + b.name + " reaches " + std::to_string(b.bytes) + " bytes " +
                    (at.offset > 0 ? "from byte " + std::to_string(at.offset) + " of" : "into") + " a buffer of " +
                    std::to_string(at.size));
            buffers.push_back(at.buffer);
            offsets.push_back(at.offset);
        }
        if (threads == 0) return;
        uniform_words.resize((uniform_words.size() + 3) / 4 * 4);
        s.backend->encode_dispatch(pipeline, buffers, offsets, std::as_bytes(std::span(uniform_words)), threads);
        s.recorded = true;
        ++s.counters.dispatches;
    }

private:
    using pool_type = detail::size_class_pool<void*>;

    struct live_buffer {
        std::uint64_t capacity;  // the pool's size class
        std::uint64_t size;      // the bytes alloc was asked for
    };

    struct borrowed_buffer {
        void* buffer;
        std::uint64_t bytes;   // what views may use
        std::size_t reserved;  // the address range's length
    };

    struct state {
        std::unique_ptr<metal_backend> backend;
        std::unordered_map<void*, live_buffer> buffers;
        pool_type pool;
        std::unordered_map<std::string, void*> pipelines;
        metal_counters counters;
        bool recorded = false;   // the open command buffer holds work
        bool in_flight = false;  // flushed work nothing has waited for yet
        std::vector<std::pair<void*, std::uint64_t>> freed_while_recorded;
        std::vector<void*> release_after_wait;               // not pooled, freed while flushed work ran
        std::map<std::uintptr_t, borrowed_buffer> borrowed;  // by reserved address, ordered for resolve()
    };

    state& live() const {
        if (!s_) throw device_error("metal: use of a moved-from metal_device");
        return *s_;
    }
    // A live buffer's sizes; zeros for anything else.
    live_buffer find(void const* p) const {
        auto const it = live().buffers.find(const_cast<void*>(p));
        return it == live().buffers.end() ? live_buffer{0, 0} : it->second;
    }
    // Into the pool (flushed work that used it runs before any later use),
    // else released, once no flushed work can use it.
    void recycle(void* buffer, std::uint64_t capacity) {
        if (s_->pool.give(buffer, capacity)) return;
        if (s_->in_flight)
            s_->release_after_wait.push_back(buffer);
        else
            s_->backend->release_buffer(buffer);
    }
    void commit() {
        state& s = live();
        if (s.recorded) ++s.counters.commits;
        s.recorded = false;
        s.in_flight = false;
        s.backend->commit_and_wait();
        for (void* b : s.release_after_wait) s.backend->release_buffer(b);
        s.release_after_wait.clear();
        recycle_freed_while_recorded();
    }
    void recycle_freed_while_recorded() {
        for (auto const& [buffer, capacity] : s_->freed_while_recorded) recycle(buffer, capacity);
        s_->freed_while_recorded.clear();
    }
    // The destructor's work (and a move assignment's, for the state it replaces).
    void close() noexcept {
        if (!s_) return;
        try {
            if (s_->recorded || s_->in_flight) s_->backend->commit_and_wait();
        } catch (...) {  // a destructor does not throw; the work's error has no one to reach
        }
        for (auto const& [buffer, bytes] : s_->buffers) s_->backend->release_buffer(buffer);
        for (void* b : s_->release_after_wait) s_->backend->release_buffer(b);
        for (auto const& [buffer, bytes] : s_->freed_while_recorded) s_->backend->release_buffer(buffer);
        s_->pool.clear([&](void* b) { s_->backend->release_buffer(b); });
        for (auto const& [text, pipeline] : s_->pipelines) s_->backend->release_pipeline(pipeline);
        for (auto const& [address, b] : s_->borrowed) ::munmap(reinterpret_cast<void*>(address), b.reserved);
        s_.reset();
    }
    void check_extent(void* buffer, std::size_t bytes, char const* call) const {
        auto const it = live().buffers.find(buffer);
        if (it == live().buffers.end())
            throw device_error(std::string("metal: ") + call +
                               " with a pointer that is not a live buffer of this device");
        std::uint64_t const size = it->second.size;
        if (bytes > size)
            throw device_error(std::string("metal: ") + call + " of " + std::to_string(bytes) +
                               " bytes exceeds the buffer's " + std::to_string(size));
    }

    std::unique_ptr<state> s_;
};

}  // namespace switchyard
