// PyTorch's MPS tensors through switchyard's Metal device (compiled where
// SWITCHYARD_WITH_METAL is defined; op_args uses it for MPS tensors).
//
// One metal_device per process runs the ops on MPS tensors. Its backend is
// Metal's own (device/metal/objc_backend.h) with PyTorch's MPS stream in
// place of a command queue: a dispatch is encoded into the stream's command
// buffer on the stream's serial dispatch queue, as PyTorch documents for
// custom Metal kernels; committing is PyTorch's commitStream, waiting its
// deviceSynchronize. Everything goes through ATen's MPS hooks, a C++
// interface, so no Objective-C++ and no MPS header of PyTorch's is needed;
// where PyTorch reports no MPS device the first op says so.
//
// For an op's lifetime, torch_mps_scope makes that device current, holds it
// (one op at a time; an op called from inside another on the same thread
// shares the outer one's hold), and borrows each tensor's MTLBuffer (an MPS storage's
// data pointer is its MTLBuffer): a view points into the borrowed range at
// the tensor's storage offset, and the dispatch binds the buffer from there.
// When the op ends its work is committed without waiting; PyTorch's later
// work on the stream runs after it.
//
// Not run in this project's CI (no Mac): docs/metal.md says what is verified.
#pragma once

#include <ATen/core/Tensor.h>
#include <ATen/detail/MPSHooksInterface.h>

#include <cstdint>
#include <exception>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "switchyard/device/metal.h"
#include "switchyard/device/metal/current_device.h"
#include "switchyard/device/metal/objc_backend.h"

namespace switchyard {

namespace detail {

class torch_mps_backend final : public objc_metal_backend {
public:
    torch_mps_backend() : dispatch_sync_(reinterpret_cast<dispatch_sync_function>(loaded_symbol("dispatch_sync_f"))) {}

    // On the stream's queue, as PyTorch's custom-kernel pattern commits: the
    // stream's command buffer is not changed under another thread's encoder.
    // Work holding uniform buffers (rare) is waited for, so they can go.
    void commit() override {
        if (holds_uniform_buffers()) return commit_and_wait();
        on_stream_queue([] { at::detail::getMPSHooks().commitStream(); });
    }
    void commit_and_wait() override {
        at::detail::getMPSHooks().deviceSynchronize();
        release_uniform_buffers();
    }

protected:
    void encode_on_command_buffer(void* work, void (*encode)(void* work, void* command_buffer)) override {
        void* const command_buffer = at::detail::getMPSHooks().getCommandBuffer();
        if (!command_buffer) throw device_error("metal: PyTorch's MPS stream gave no command buffer");
        on_stream_queue([&] { encode(work, command_buffer); });
    }

private:
    using dispatch_sync_function = void (*)(void* queue, void* context, void (*work)(void*));
    dispatch_sync_function dispatch_sync_;

    // Runs f() on the MPS stream's serial dispatch queue and waits. An
    // exception must not cross libdispatch's C frames: it is carried out and
    // rethrown here.
    template <typename F>
    void on_stream_queue(F const& f) {
        struct call {
            F const& f;
            std::exception_ptr error;
        } c{f, nullptr};
        dispatch_sync_(at::detail::getMPSHooks().getDispatchQueue(), &c, [](void* p) {
            auto& c = *static_cast<call*>(p);
            try {
                c.f();
            } catch (...) {
                c.error = std::current_exception();
            }
        });
        if (c.error) std::rethrow_exception(c.error);
    }
};

}  // namespace detail

// See the file comment. Construct it before the op's views are made.
class torch_mps_scope {
public:
    torch_mps_scope() : lock_(hold()), device_(shared_device()), use_(device_) { ++depth(); }
    torch_mps_scope(torch_mps_scope const&) = delete;
    torch_mps_scope& operator=(torch_mps_scope const&) = delete;
    ~torch_mps_scope() {
        try {
            device_.flush();
        } catch (...) {  // a destructor does not throw; PyTorch's next sync reports the stream's failure
        }
        for (auto const& [buffer, address] : borrowed_) device_.end_borrow(address);
        --depth();
    }

    // Where t's element 0 is for switchyard's views: inside its MTLBuffer's
    // borrowed range, at its storage offset.
    // An empty storage has no buffer: its views have no elements to bind.
    void* address_of(at::Tensor const& t) {
        void* const buffer = const_cast<void*>(t.storage().data());
        if (!buffer || t.storage().nbytes() == 0) return nullptr;
        void* address = nullptr;
        for (auto const& [b, a] : borrowed_)
            if (b == buffer) address = a;
        if (!address) {
            address = device_.borrow(buffer, t.storage().nbytes());
            borrowed_.emplace_back(buffer, address);
        }
        return static_cast<char*>(address) + t.storage_offset() * static_cast<std::int64_t>(t.element_size());
    }

    metal_device& device() noexcept { return device_; }

private:
    // Ops in progress on this thread: a nested op (an op calling another)
    // does not take the lock its caller holds.
    static int& depth() {
        static thread_local int d = 0;
        return d;
    }
    static std::unique_lock<std::mutex> hold() {
        static std::mutex m;
        return depth() > 0 ? std::unique_lock<std::mutex>() : std::unique_lock<std::mutex>(m);
    }
    // Made on first use (a failure, no MPS or no Metal, is thrown to that op
    // and tried again by the next) and never destroyed: at exit PyTorch's
    // stream and the Objective-C runtime may be gone before it.
    static metal_device& shared_device() {
        static metal_device* d = nullptr;
        if (!d) {
            if (!at::detail::getMPSHooks().hasMPS())
                throw device_error("switchyard: PyTorch reports no MPS device (built without MPS, or none here)");
            d = new metal_device(std::make_unique<detail::torch_mps_backend>());
        }
        return *d;
    }

    std::unique_lock<std::mutex> lock_;
    metal_device& device_;
    metal_device_guard use_;
    std::vector<std::pair<void*, void*>> borrowed_;  // (MTLBuffer, its borrowed address)
};

}  // namespace switchyard
