// The metal_backend of Metal itself (device/metal/backend.h), written against
// the Objective-C runtime's C API: libobjc, Foundation and Metal.framework
// are loaded with dlopen and every method is a message sent through
// objc_msgSend cast to the method's C signature. So the library builds on
// any system with no Apple SDK and links nothing of Apple's; on a system
// without Metal, detail::make_system_metal_backend() throws device_error
// "metal: Metal is not available on this system" naming what was missing.
//
// Ownership follows Cocoa's rules: objects from new..., alloc and copy are
// owned and released here; the command buffer and encoders (autoreleased)
// are made inside an autorelease pool, the command buffer retained while it
// is open. Pipelines are compiled in the safe math mode, or with fast math
// off before macOS 15 (the emitted kernels' math relies on IEEE arithmetic;
// whether Apple's compiler still contracts a * b + c into an FMA there is
// not verified: docs/metal.md). Dispatches are threadgroups of 256 threads
// (metal_backend::threadgroup_size) covering the grid; the kernels return
// past their count.
//
// This file compiles on Linux with g++ and clang (tests/CMakeLists.txt
// checks it), but it has not run on a Mac in this project's CI: see
// docs/metal.md for what is verified and how.
#pragma once

#include <dlfcn.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "switchyard/device/device.h"
#include "switchyard/device/metal/backend.h"

namespace switchyard::detail {

// Dispatches are encoded into this backend's own command queue's open
// command buffer; a subclass may encode elsewhere (torch/mps.h encodes into
// PyTorch's MPS stream) by overriding encode_on_command_buffer, commit and
// commit_and_wait.
class objc_metal_backend : public metal_backend {
public:
    objc_metal_backend() {
        objc_ = open_library("/usr/lib/libobjc.A.dylib", "the Objective-C runtime");
        foundation_ = open_library("/System/Library/Frameworks/Foundation.framework/Foundation", "Foundation");
        metal_ = open_library("/System/Library/Frameworks/Metal.framework/Metal", "Metal.framework");
        msg_send_ = symbol(objc_, "objc_msgSend");
        get_class_ = reinterpret_cast<void* (*)(char const*)>(symbol(objc_, "objc_getClass"));
        register_selector_ = reinterpret_cast<void* (*)(char const*)>(symbol(objc_, "sel_registerName"));
        pool_push_ = reinterpret_cast<void* (*)()>(symbol(objc_, "objc_autoreleasePoolPush"));
        pool_pop_ = reinterpret_cast<void (*)(void*)>(symbol(objc_, "objc_autoreleasePoolPop"));
        // A command-line program gets a default device only with Core
        // Graphics loaded; MTLCopyAllDevices is the fallback.
        ::dlopen("/System/Library/Frameworks/CoreGraphics.framework/CoreGraphics", RTLD_LAZY | RTLD_LOCAL);
        auto const create_device = reinterpret_cast<void* (*)()>(symbol(metal_, "MTLCreateSystemDefaultDevice"));
        device_ = create_device();
        if (!device_) {
            auto const copy_all = reinterpret_cast<void* (*)()>(symbol(metal_, "MTLCopyAllDevices"));
            if (void* const all = copy_all()) {
                autorelease_pool const pool(*this);
                device_ = send<void*>(all, "firstObject");
                if (device_) send<void*>(device_, "retain");
                release(all);
            }
        }
        if (!device_) throw device_error("metal: Metal is not available on this system (no Metal device found)");
        queue_ = send<void*>(device_, "newCommandQueue");
        if (!queue_) {
            release(device_);
            device_ = nullptr;
            throw device_error("metal: newCommandQueue failed");
        }
    }
    objc_metal_backend(objc_metal_backend const&) = delete;
    objc_metal_backend& operator=(objc_metal_backend const&) = delete;
    ~objc_metal_backend() override {
        if (command_buffer_) release(command_buffer_);
        for (void* b : uniform_buffers_) release(b);
        if (queue_) release(queue_);
        if (device_) release(device_);
    }

    std::string name() const override {
        autorelease_pool const pool(*this);
        return utf8(send<void*>(device_, "name"));
    }
    std::uint64_t max_buffer_length() const override { return send<std::uint64_t>(device_, "maxBufferLength"); }

    void* new_buffer(std::uint64_t bytes) override {
        constexpr std::uint64_t storage_mode_shared = 0;  // MTLResourceStorageModeShared
        return send<void*, std::uint64_t, std::uint64_t>(device_, "newBufferWithLength:options:", bytes,
                                                         storage_mode_shared);
    }
    void* contents(void* buffer) override { return send<void*>(buffer, "contents"); }
    void release_buffer(void* buffer) override { release(buffer); }

    void* new_pipeline(std::string const& msl, std::string const& entry) override {
        autorelease_pool const pool(*this);
        void* const options = send<void*>(send<void*>(get_class_("MTLCompileOptions"), "alloc"), "init");
        // IEEE arithmetic for the helpers' error terms: MTLMathModeSafe where
        // the OS has math modes (macOS 15), else fast math off.
        if (send<objc_bool, void*>(options, "respondsToSelector:", register_selector_("setMathMode:")))
            send<void, std::int64_t>(options, "setMathMode:", 0);  // MTLMathModeSafe
        else
            send<void, objc_bool>(options, "setFastMathEnabled:", objc_bool{});
        void* error = nullptr;
        void* const library = send<void*, void*, void*, void**>(
            device_, "newLibraryWithSource:options:error:", ns_string(msl), options, &error);
        release(options);
        if (!library) throw device_error("metal: the MSL did not compile: " + describe(error) + "\n" + msl);
        void* const function = send<void*, void*>(library, "newFunctionWithName:", ns_string(entry));
        release(library);
        if (!function) throw device_error("metal: the compiled MSL has no function '" + entry + "'");
        error = nullptr;
        void* const pipeline =
            send<void*, void*, void**>(device_, "newComputePipelineStateWithFunction:error:", function, &error);
        release(function);
        if (!pipeline) throw device_error("metal: newComputePipelineStateWithFunction failed: " + describe(error));
        return pipeline;
    }
    void release_pipeline(void* pipeline) override { release(pipeline); }

    void encode_dispatch(void* pipeline, std::span<void* const> buffers, std::span<std::uint64_t const> offsets,
                         std::span<std::byte const> uniforms, std::uint64_t threads) override {
        std::uint64_t const limit = send<std::uint64_t>(pipeline, "maxTotalThreadsPerThreadgroup");
        if (limit < threadgroup_size)
            throw device_error("metal: the pipeline runs at most " + std::to_string(limit) +
                               " threads per threadgroup; switchyard's kernels are written for " +
                               std::to_string(threadgroup_size));
        void* uniform_buffer = nullptr;
        if (uniforms.size() > 4096) {  // past setBytes' documented limit; kept until the work completes
            uniform_buffer = new_buffer(uniforms.size());
            if (!uniform_buffer)
                throw device_error("metal: cannot allocate a uniform buffer of " + std::to_string(uniforms.size()));
            std::memcpy(contents(uniform_buffer), uniforms.data(), uniforms.size());
            uniform_buffers_.push_back(uniform_buffer);
        }
        dispatch_work work{*this, pipeline, buffers, offsets, uniforms, uniform_buffer, threads};
        encode_on_command_buffer(
            &work, [](void* w, void* command_buffer) { static_cast<dispatch_work*>(w)->encode(command_buffer); });
    }

    void commit_and_wait() override {
        if (!command_buffer_) return;
        autorelease_pool const pool(*this);
        void* const done = command_buffer_;
        command_buffer_ = nullptr;
        send<void>(done, "commit");
        send<void>(done, "waitUntilCompleted");
        constexpr std::uint64_t status_error = 5;  // MTLCommandBufferStatusError
        std::string failure;
        if (send<std::uint64_t>(done, "status") == status_error) failure = describe(send<void*>(done, "error"));
        release(done);
        release_uniform_buffers();
        if (!failure.empty()) throw device_error("metal: a command buffer failed: " + failure);
    }

protected:
    // Calls encode(work, command_buffer) with the command buffer a dispatch
    // goes into: this backend's open one (opened if none is).
    virtual void encode_on_command_buffer(void* work, void (*encode)(void* work, void* command_buffer)) {
        autorelease_pool const pool(*this);
        if (!command_buffer_) {
            command_buffer_ = send<void*>(queue_, "commandBuffer");
            if (!command_buffer_) throw device_error("metal: commandBuffer failed");
            send<void*>(command_buffer_, "retain");
        }
        encode(work, command_buffer_);
    }
    // Uniform buffers (dispatches with more than 4 KB of uniforms) wait for
    // the work that reads them; release them after it has completed.
    bool holds_uniform_buffers() const noexcept { return !uniform_buffers_.empty(); }
    void release_uniform_buffers() {
        for (void* b : uniform_buffers_) release(b);
        uniform_buffers_.clear();
    }
    // A symbol of a library loaded in the process (libSystem's libdispatch).
    static void* loaded_symbol(char const* name) {
        void* const s = ::dlsym(RTLD_DEFAULT, name);
        if (!s)
            throw device_error(std::string("metal: Metal is not available on this system (no symbol ") + name + ")");
        return s;
    }

private:
    // One dispatch's arguments, encoded by encode() into a command buffer.
    struct dispatch_work {
        objc_metal_backend const& b;
        void* pipeline;
        std::span<void* const> buffers;
        std::span<std::uint64_t const> offsets;
        std::span<std::byte const> uniforms;
        void* uniform_buffer;
        std::uint64_t threads;

        void encode(void* command_buffer) const {
            autorelease_pool const pool(b);
            void* const encoder = b.send<void*>(command_buffer, "computeCommandEncoder");
            if (!encoder) throw device_error("metal: computeCommandEncoder failed");
            b.send<void, void*>(encoder, "setComputePipelineState:", pipeline);
            std::uint64_t index = 0;
            for (; index < buffers.size(); ++index)
                b.send<void, void*, std::uint64_t, std::uint64_t>(encoder, "setBuffer:offset:atIndex:", buffers[index],
                                                                  offsets[index], index);
            if (uniform_buffer)
                b.send<void, void*, std::uint64_t, std::uint64_t>(encoder, "setBuffer:offset:atIndex:", uniform_buffer,
                                                                  0, index);
            else
                b.send<void, void const*, std::uint64_t, std::uint64_t>(
                    encoder, "setBytes:length:atIndex:", uniforms.data(), uniforms.size(), index);
            size3 const groups{(threads + threadgroup_size - 1) / threadgroup_size, 1, 1},
                per_group{threadgroup_size, 1, 1};
            b.send<void, size3, size3>(encoder, "dispatchThreadgroups:threadsPerThreadgroup:", groups, per_group);
            b.send<void>(encoder, "endEncoding");
        }
    };

protected:
#if defined(__aarch64__) || defined(__arm64__)
    using objc_bool = bool;  // BOOL
#else
    using objc_bool = signed char;
#endif
    struct size3 {  // MTLSize
        std::uint64_t width, height, depth;
    };
    class autorelease_pool {
    public:
        explicit autorelease_pool(objc_metal_backend const& b) : b_(b), token_(b.pool_push_()) {}
        ~autorelease_pool() { b_.pool_pop_(token_); }
        autorelease_pool(autorelease_pool const&) = delete;
        autorelease_pool& operator=(autorelease_pool const&) = delete;

    private:
        objc_metal_backend const& b_;
        void* token_;
    };

    static void* open_library(char const* path, char const* what) {
        void* const handle = ::dlopen(path, RTLD_LAZY | RTLD_LOCAL);
        if (!handle)
            throw device_error(std::string("metal: Metal is not available on this system (cannot load ") + what +
                               " from " + path + ")");
        return handle;
    }
    static void* symbol(void* library, char const* name) {
        void* const s = ::dlsym(library, name);
        if (!s)
            throw device_error(std::string("metal: Metal is not available on this system (no symbol ") + name + ")");
        return s;
    }

    // [receiver selector:args...] with the method's C signature.
    template <typename R, typename... A>
    R send(void* receiver, char const* selector, A... args) const {
        using method = R (*)(void*, void*, A...);
        return reinterpret_cast<method>(msg_send_)(receiver, register_selector_(selector), args...);
    }
    void release(void* object) const {
        if (object) send<void>(object, "release");
    }
    // An autoreleased NSString of UTF-8 text.
    void* ns_string(std::string const& text) const {
        return send<void*, char const*>(get_class_("NSString"), "stringWithUTF8String:", text.c_str());
    }
    std::string utf8(void* ns_string_object) const {
        if (!ns_string_object) return {};
        char const* const s = send<char const*>(ns_string_object, "UTF8String");
        return s ? s : "";
    }
    std::string describe(void* ns_error) const {
        return ns_error ? utf8(send<void*>(ns_error, "localizedDescription")) : "(no error object)";
    }

private:
    void* objc_ = nullptr;
    void* foundation_ = nullptr;
    void* metal_ = nullptr;
    void* msg_send_ = nullptr;
    void* (*get_class_)(char const*) = nullptr;
    void* (*register_selector_)(char const*) = nullptr;
    void* (*pool_push_)() = nullptr;
    void (*pool_pop_)(void*) = nullptr;
    void* device_ = nullptr;
    void* queue_ = nullptr;
    void* command_buffer_ = nullptr;
    std::vector<void*> uniform_buffers_;
};

inline std::unique_ptr<metal_backend> make_system_metal_backend() { return std::make_unique<objc_metal_backend>(); }

}  // namespace switchyard::detail
