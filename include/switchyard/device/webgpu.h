// webgpu_device: the device contract (device.h) on the webgpu.h C API, plus
// what shader work needs: compute pipelines, dispatches recorded into one
// open command encoder, and counters (webgpu/counters.h).
//
//     switchyard::webgpu_device dev;              // first adapter; lavapipe is fine
//     void* x = dev.alloc(n * 4);                 // a WGPUBuffer, as void*
//     dev.copy_from_host(x, host, n * 4);
//     ... dispatches record into the open encoder, nothing is submitted ...
//     dev.copy_to_host(host, x, n * 4);           // one submit, then waits
//
// Buffers: sizes round up to 4 bytes; freed buffers go to a size-class pool
// (powers of two from 256 bytes) and are reused until
// release_cached_buffers(). Batching: work is recorded
// into one command encoder and submitted once, by sync() or a readback; an
// upload submits recorded work first only if there is some, to keep the
// queue's order. Errors: validation and out-of-memory errors, and device
// loss, become device_error with the implementation's message, thrown by the
// call that caused them (or by the next call, for asynchronous ones).
// Limits: a buffer above maxBufferSize is refused at alloc; binding one above
// maxStorageBufferBindingSize is refused at dispatch (bind_check).
//
// Built against wgpu-native (cmake/FindWebGPU.cmake finds the `wgpu` wheel's
// copy) or Dawn. Not thread-safe: one thread uses a device at a time.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "switchyard/device/device.h"
#include "switchyard/device/webgpu/api.h"
#include "switchyard/device/webgpu/counters.h"
#include "switchyard/device/size_class_pool.h"

namespace switchyard {

// One storage-buffer binding of a dispatch: a buffer from alloc and the
// bytes of it the shader may see (from offset 0).
struct webgpu_binding {
    void* buffer = nullptr;
    std::uint64_t bytes = 0;
};

class webgpu_device {
public:
    webgpu_device() : s_(std::make_unique<state>()) {
        live()->instance = wgpuCreateInstance(nullptr);
        if (!live()->instance) throw device_error("webgpu: wgpuCreateInstance failed (no WebGPU implementation?)");
        request_adapter();
        request_device();
    }
    webgpu_device(webgpu_device&&) noexcept = default;
    webgpu_device& operator=(webgpu_device&&) noexcept = default;
    ~webgpu_device() = default;

    // ------------------------------------------------------ device contract --

    void* alloc(std::size_t bytes) {
        check("alloc");
        if (bytes == 0) return nullptr;
        if (bytes > live()->limits.maxBufferSize)
            throw device_error("webgpu: cannot allocate " + std::to_string(bytes) +
                               " bytes: the adapter's maxBufferSize is " +
                               std::to_string(live()->limits.maxBufferSize) + " bytes");
        std::uint64_t const capacity = pool_type::capacity_for(bytes, live()->limits.maxBufferSize);
        WGPUBuffer buffer = live()->storage_pool.take(capacity);
        if (!buffer) {
            buffer = create_buffer(
                capacity, WGPUBufferUsage_Storage | WGPUBufferUsage_CopySrc | WGPUBufferUsage_CopyDst, "alloc");
        }
        live()->buffers[buffer] = capacity;
        auto& c = live()->counters;
        c.live_bytes += capacity;
        if (c.live_bytes > c.peak_live_bytes) c.peak_live_bytes = c.live_bytes;
        ++live()->live_buffers;
        if (live()->live_buffers > live()->peak_live_buffers) live()->peak_live_buffers = live()->live_buffers;
        return buffer;
    }

    void free(void* p) {
        if (!p) return;
        auto const it = live()->buffers.find(static_cast<WGPUBuffer>(p));
        if (it == live()->buffers.end()) throw device_error("webgpu: free of a pointer this device did not allocate");
        std::uint64_t const capacity = it->second;
        live()->buffers.erase(it);
        live()->counters.live_bytes -= capacity;
        --live()->live_buffers;
        // Recorded work may still use the buffer: the pool hands it out again
        // only to later recordings, which the queue orders after this one.
        if (!live()->storage_pool.give(static_cast<WGPUBuffer>(p), capacity))
            wgpuBufferRelease(static_cast<WGPUBuffer>(p));
    }

    void copy_from_host(void* device_dst, void const* host_src, std::size_t bytes) {
        check("copy_from_host");
        if (bytes == 0) return;
        std::uint64_t const capacity = capacity_of(device_dst, "copy_from_host");
        if (bytes > capacity)
            throw device_error("webgpu: copy_from_host of " + std::to_string(bytes) + " bytes into a buffer of " +
                               std::to_string(capacity));
        if (live()->encoder) submit();  // recorded work reads what was there before
        std::size_t const whole = bytes & ~std::size_t{3};
        if (whole) wgpuQueueWriteBuffer(live()->queue, static_cast<WGPUBuffer>(device_dst), 0, host_src, whole);
        if (whole != bytes) {  // writes are multiples of 4 bytes: pad the last word
            unsigned char last[4] = {};
            std::memcpy(last, static_cast<unsigned char const*>(host_src) + whole, bytes - whole);
            wgpuQueueWriteBuffer(live()->queue, static_cast<WGPUBuffer>(device_dst), whole, last, 4);
        }
        ++live()->counters.uploads;
        check("copy_from_host");
    }

    void copy_to_host(void* host_dst, void const* device_src, std::size_t bytes) {
        check("copy_to_host");
        if (bytes == 0) return;
        auto const src = static_cast<WGPUBuffer>(const_cast<void*>(device_src));
        std::uint64_t const capacity = capacity_of(src, "copy_to_host");
        if (bytes > capacity)
            throw device_error("webgpu: copy_to_host of " + std::to_string(bytes) + " bytes from a buffer of " +
                               std::to_string(capacity));
        std::uint64_t const padded = (bytes + 3) & ~std::uint64_t{3};
        std::uint64_t const staging_capacity = pool_type::capacity_for(padded, live()->limits.maxBufferSize);
        WGPUBuffer staging = live()->staging_pool.take(staging_capacity);
        if (!staging)
            staging =
                create_buffer(staging_capacity, WGPUBufferUsage_MapRead | WGPUBufferUsage_CopyDst, "copy_to_host");
        wgpuCommandEncoderCopyBufferToBuffer(encoder(), src, 0, staging, 0, padded);
        submit();
        struct mapping {
            bool done = false;
            WGPUMapAsyncStatus status{};
            std::string message;
        } m;
        WGPUBufferMapCallbackInfo info{};
        info.mode = WGPUCallbackMode_AllowProcessEvents;
        info.callback = [](WGPUMapAsyncStatus status, WGPUStringView message, void* ud, void*) {
            auto* mm = static_cast<mapping*>(ud);
            mm->status = status;
            mm->message = detail::webgpu_string(message);
            mm->done = true;
        };
        info.userdata1 = &m;
        wgpuBufferMapAsync(staging, WGPUMapMode_Read, 0, padded, info);
        detail::webgpu_wait(live()->instance, live()->device, [&] { return m.done || live()->lost; });
        check("copy_to_host");
        if (m.status != WGPUMapAsyncStatus_Success) {
            wgpuBufferRelease(staging);
            throw device_error("webgpu: copy_to_host: mapping the staging buffer failed: " + m.message);
        }
        void const* mapped = wgpuBufferGetConstMappedRange(staging, 0, padded);
        std::memcpy(host_dst, mapped, bytes);
        wgpuBufferUnmap(staging);
        if (!live()->staging_pool.give(staging, staging_capacity)) wgpuBufferRelease(staging);
        ++live()->counters.readbacks;
    }

    // Copies `bytes` (a multiple of 4) from the start of one buffer to the
    // start of another, recorded into the open encoder like a dispatch:
    // nothing runs until sync() or a readback.
    void copy(void* device_dst, void const* device_src, std::size_t bytes) {
        check("copy");
        if (bytes == 0) return;
        auto const src = static_cast<WGPUBuffer>(const_cast<void*>(device_src));
        auto const dst = static_cast<WGPUBuffer>(device_dst);
        if (bytes % 4 != 0)
            throw device_error("webgpu: copy of " + std::to_string(bytes) +
                               " bytes; buffer copies move multiples of 4");
        if (bytes > capacity_of(src, "copy") || bytes > capacity_of(dst, "copy"))
            throw device_error("webgpu: copy of " + std::to_string(bytes) + " bytes exceeds a buffer of " +
                               std::to_string(std::min(capacity_of(src, "copy"), capacity_of(dst, "copy"))));
        wgpuCommandEncoderCopyBufferToBuffer(encoder(), src, 0, dst, 0, bytes);
    }

    // Submits recorded work, if any, and waits until the queue is idle.
    void sync() {
        check("sync");
        if (live()->encoder) submit();
        bool done = false;
        WGPUQueueWorkDoneCallbackInfo info{};
        info.mode = WGPUCallbackMode_AllowProcessEvents;
        info.callback = [](WGPUQueueWorkDoneStatus, WGPUStringView, void* ud, void*) {
            *static_cast<bool*>(ud) = true;
        };
        info.userdata1 = &done;
        wgpuQueueOnSubmittedWorkDone(live()->queue, info);
        detail::webgpu_wait(live()->instance, live()->device, [&] { return done || live()->lost; });
        check("sync");
    }

    std::string_view name() const noexcept { return "webgpu"; }

    // Releases the buffers kept for reuse (freed storage buffers, readback
    // staging and uniform buffers), as torch.cuda.empty_cache() does: later
    // allocations create new buffers. Live buffers are untouched, and
    // recorded work keeps the buffers it uses alive (WebGPU counts references).
    void release_cached_buffers() {
        auto release = [](WGPUBuffer b) { wgpuBufferRelease(b); };
        live()->storage_pool.clear(release);
        live()->staging_pool.clear(release);
        live()->uniform_pool.clear(release);
    }
    // Bytes held by those buffers.
    std::uint64_t cached_buffer_bytes() const {
        return live()->storage_pool.free_bytes() + live()->staging_pool.free_bytes() +
               live()->uniform_pool.free_bytes();
    }

    // ------------------------------------------------------- shader support --

    // The adapter's description ("llvmpipe (LLVM 15.0.6, 256 bits)", ...).
    std::string const& adapter_name() const { return live()->adapter_name; }
    WGPULimits const& limits() const { return live()->limits; }
    bool has_f16() const { return live()->has_f16; }
    WGPUDevice native_device() const { return live()->device; }

    webgpu_counters counters() const { return live()->counters; }
    std::uint64_t live_buffers() const { return live()->live_buffers; }
    std::uint64_t peak_live_buffers() const { return live()->peak_live_buffers; }
    // Starts the peak figures again from what is live now.
    void reset_counters() {
        state& s = *live();
        std::uint64_t const bytes = s.counters.live_bytes;
        s.counters = webgpu_counters{};
        s.counters.live_bytes = s.counters.peak_live_bytes = bytes;
        s.peak_live_buffers = s.live_buffers;
    }

    // A compute pipeline from WGSL source, with its bind group layout taken
    // from the shader (group 0). Compilation errors throw with the
    // implementation's message, which quotes the offending line.
    WGPUComputePipeline create_compute_pipeline(std::string const& wgsl, std::string_view entry = "main") {
        check("create_compute_pipeline");
        WGPUShaderSourceWGSL source{};
        source.chain.sType = WGPUSType_ShaderSourceWGSL;
        source.code = detail::webgpu_string(wgsl);
        WGPUShaderModuleDescriptor module_desc{};
        module_desc.nextInChain = &source.chain;
        WGPUShaderModule module = wgpuDeviceCreateShaderModule(live()->device, &module_desc);
        WGPUComputePipeline pipeline = nullptr;
        if (!error_pending()) {  // a module that failed to compile makes no pipeline
            WGPUComputePipelineDescriptor desc{};
            desc.compute.module = module;
            desc.compute.entryPoint = detail::webgpu_string(entry);
            pipeline = wgpuDeviceCreateComputePipeline(live()->device, &desc);
            if (pipeline) live()->pipelines.push_back(pipeline);  // released with the device, even if invalid
        }
        if (module) wgpuShaderModuleRelease(module);
        check("create_compute_pipeline");
        return pipeline;
    }

    // The pipeline for `wgsl`, compiled on first request and kept for the
    // device's lifetime: the same source never compiles twice.
    WGPUComputePipeline cached_pipeline(std::string const& wgsl, std::string_view entry = "main") {
        std::string key(entry);
        key += '\n';
        key += wgsl;
        auto const it = live()->pipeline_cache.find(key);
        if (it != live()->pipeline_cache.end()) return it->second;
        WGPUComputePipeline const pipeline = create_compute_pipeline(wgsl, entry);
        live()->pipeline_cache.emplace(std::move(key), pipeline);
        return pipeline;
    }
    std::size_t cached_pipelines() const { return live()->pipeline_cache.size(); }

    // Whether p is a live buffer from this device's alloc.
    bool owns(void const* p) const noexcept {
        return s_ && s_->buffers.count(static_cast<WGPUBuffer>(const_cast<void*>(p))) != 0;
    }

    // Refuses a binding above the adapter's limits, naming what was asked.
    void bind_check(std::span<webgpu_binding const> storage) const {
        if (storage.size() > live()->limits.maxStorageBuffersPerShaderStage)
            throw device_error("webgpu: a dispatch binds " + std::to_string(storage.size()) +
                               " storage buffers; the adapter allows " +
                               std::to_string(live()->limits.maxStorageBuffersPerShaderStage) + " per shader stage");
        for (auto const& b : storage) {
            if (b.bytes > live()->limits.maxStorageBufferBindingSize)
                throw device_error("webgpu: binding " + std::to_string(b.bytes) +
                                   " bytes exceeds the adapter's maxStorageBufferBindingSize of " +
                                   std::to_string(live()->limits.maxStorageBufferBindingSize) + " bytes");
        }
    }

    // Records a dispatch of `pipeline` over `groups` workgroups into the open
    // encoder: bindings 0..k-1 are the storage buffers, binding k (if
    // uniform_bytes is not empty) a uniform buffer holding those bytes.
    // Workgroups beyond maxComputeWorkgroupsPerDimension spill into y; the
    // shader folds (x, y) back into one workgroup index.
    void dispatch(WGPUComputePipeline pipeline, std::span<webgpu_binding const> storage,
                  std::span<std::byte const> uniform_bytes, std::uint64_t groups) {
        check("dispatch");
        bind_check(storage);
        if (groups == 0) return;
        std::uint64_t const max_x = live()->limits.maxComputeWorkgroupsPerDimension;
        std::uint64_t const x = groups < max_x ? groups : max_x;
        std::uint64_t const y = (groups + x - 1) / x;
        if (y > max_x)
            throw device_error("webgpu: dispatch of " + std::to_string(groups) + " workgroups exceeds " +
                               std::to_string(max_x) + " x " + std::to_string(max_x));
        std::vector<WGPUBindGroupEntry> entries;
        for (std::size_t i = 0; i < storage.size(); ++i) {
            WGPUBindGroupEntry e{};
            e.binding = static_cast<std::uint32_t>(i);
            e.buffer = static_cast<WGPUBuffer>(storage[i].buffer);
            e.size = (storage[i].bytes + 3) & ~std::uint64_t{3};
            entries.push_back(e);
        }
        WGPUBuffer uniform = nullptr;
        std::uint64_t uniform_capacity = 0;
        if (!uniform_bytes.empty()) {
            std::uint64_t const bytes = (uniform_bytes.size() + 15) & ~std::uint64_t{15};
            if (bytes > live()->limits.maxUniformBufferBindingSize)
                throw device_error("webgpu: a dispatch's uniform block is " + std::to_string(bytes) +
                                   " bytes; the adapter's maxUniformBufferBindingSize is " +
                                   std::to_string(live()->limits.maxUniformBufferBindingSize));
            uniform_capacity = pool_type::capacity_for(bytes, live()->limits.maxBufferSize);
            uniform = live()->uniform_pool.take(uniform_capacity);
            if (!uniform)
                uniform =
                    create_buffer(uniform_capacity, WGPUBufferUsage_Uniform | WGPUBufferUsage_CopyDst, "dispatch");
            // Uniforms are written through the queue, which runs the write
            // before any submit that follows: each dispatch gets its own
            // buffer, returned to the pool once the encoder is submitted.
            std::vector<std::byte> padded(bytes);
            std::memcpy(padded.data(), uniform_bytes.data(), uniform_bytes.size());
            wgpuQueueWriteBuffer(live()->queue, uniform, 0, padded.data(), bytes);
            live()->pending_uniforms.push_back({uniform, uniform_capacity});
            WGPUBindGroupEntry e{};
            e.binding = static_cast<std::uint32_t>(storage.size());
            e.buffer = uniform;
            e.size = bytes;
            entries.push_back(e);
        }
        WGPUBindGroupLayout layout = wgpuComputePipelineGetBindGroupLayout(pipeline, 0);
        WGPUBindGroupDescriptor bg_desc{};
        bg_desc.layout = layout;
        bg_desc.entryCount = entries.size();
        bg_desc.entries = entries.data();
        WGPUBindGroup group = wgpuDeviceCreateBindGroup(live()->device, &bg_desc);
        wgpuBindGroupLayoutRelease(layout);
        if (error_pending()) {
            if (group) wgpuBindGroupRelease(group);
            check("dispatch (bind group)");
        }

        WGPUComputePassEncoder pass = wgpuCommandEncoderBeginComputePass(encoder(), nullptr);
        wgpuComputePassEncoderSetPipeline(pass, pipeline);
        wgpuComputePassEncoderSetBindGroup(pass, 0, group, 0, nullptr);
        wgpuComputePassEncoderDispatchWorkgroups(pass, static_cast<std::uint32_t>(x), static_cast<std::uint32_t>(y), 1);
        wgpuComputePassEncoderEnd(pass);
        wgpuComputePassEncoderRelease(pass);
        wgpuBindGroupRelease(group);
        ++live()->counters.dispatches;
        check("dispatch");
    }

    // Submits the recorded work, if any, without waiting.
    void flush() {
        check("flush");
        if (live()->encoder) submit();
    }

private:
    using pool_type = detail::size_class_pool<WGPUBuffer>;

    struct pending_uniform {
        WGPUBuffer buffer;
        std::uint64_t capacity;
    };

    struct state {
        WGPUInstance instance = nullptr;
        WGPUAdapter adapter = nullptr;
        WGPUDevice device = nullptr;
        WGPUQueue queue = nullptr;
        WGPUCommandEncoder encoder = nullptr;
        WGPULimits limits{};
        bool has_f16 = false;
        std::string adapter_name;
        std::mutex error_mutex;  // callbacks may fire on other threads
        std::string error;
        bool lost = false;
        webgpu_counters counters;
        std::uint64_t live_buffers = 0, peak_live_buffers = 0;
        std::unordered_map<WGPUBuffer, std::uint64_t> buffers;  // live: capacity
        pool_type storage_pool, staging_pool, uniform_pool;
        std::vector<pending_uniform> pending_uniforms;
        std::vector<WGPUComputePipeline> pipelines;
        std::unordered_map<std::string, WGPUComputePipeline> pipeline_cache;  // owned by `pipelines`

        ~state() {
            if (encoder) wgpuCommandEncoderRelease(encoder);
            auto release = [](WGPUBuffer b) { wgpuBufferRelease(b); };
            storage_pool.clear(release);
            staging_pool.clear(release);
            uniform_pool.clear(release);
            for (auto& u : pending_uniforms) wgpuBufferRelease(u.buffer);
            for (auto& [b, capacity] : buffers) wgpuBufferRelease(b);
            for (auto p : pipelines) wgpuComputePipelineRelease(p);
            if (queue) wgpuQueueRelease(queue);
            if (device) wgpuDeviceRelease(device);
            if (adapter) wgpuAdapterRelease(adapter);
            if (instance) wgpuInstanceRelease(instance);
        }
    };

    void request_adapter() {
        struct result {
            bool done = false;
            WGPUAdapter adapter = nullptr;
            std::string message;
        } r;
        WGPURequestAdapterOptions options{};
        options.powerPreference = WGPUPowerPreference_HighPerformance;
        WGPURequestAdapterCallbackInfo info{};
        info.mode = WGPUCallbackMode_AllowProcessEvents;
        info.callback = [](WGPURequestAdapterStatus status, WGPUAdapter adapter, WGPUStringView message, void* ud,
                           void*) {
            auto* rr = static_cast<result*>(ud);
            if (status == WGPURequestAdapterStatus_Success) rr->adapter = adapter;
            rr->message = detail::webgpu_string(message);
            rr->done = true;
        };
        info.userdata1 = &r;
        wgpuInstanceRequestAdapter(live()->instance, &options, info);
        detail::webgpu_wait(live()->instance, nullptr, [&] { return r.done; });
        if (!r.adapter)
            throw device_error("webgpu: no adapter found" + (r.message.empty() ? std::string() : ": " + r.message) +
                               " (for a software adapter on Linux, install Mesa's lavapipe: mesa-vulkan-drivers)");
        live()->adapter = r.adapter;
        wgpuAdapterGetLimits(live()->adapter, &live()->limits);
        live()->has_f16 = wgpuAdapterHasFeature(live()->adapter, WGPUFeatureName_ShaderF16);
        WGPUAdapterInfo adapter_info{};
        if (wgpuAdapterGetInfo(live()->adapter, &adapter_info) == WGPUStatus_Success) {
            live()->adapter_name = detail::webgpu_string(adapter_info.device);
            wgpuAdapterInfoFreeMembers(adapter_info);
        }
    }

    void request_device() {
        struct result {
            bool done = false;
            WGPUDevice device = nullptr;
            std::string message;
        } r;
        WGPUFeatureName const f16 = WGPUFeatureName_ShaderF16;
        WGPUDeviceDescriptor desc{};
        desc.requiredFeatureCount = live()->has_f16 ? 1 : 0;
        desc.requiredFeatures = &f16;
        desc.requiredLimits = &live()->limits;  // everything the adapter offers
        desc.uncapturedErrorCallbackInfo.callback = [](WGPUDevice const*, WGPUErrorType type, WGPUStringView message,
                                                       void* ud, void*) {
            auto* st = static_cast<state*>(ud);
            std::lock_guard lock(st->error_mutex);
            if (st->error.empty()) {
                char const* kind = type == WGPUErrorType_Validation    ? "validation error"
                                   : type == WGPUErrorType_OutOfMemory ? "out of memory"
                                                                       : "internal error";
                st->error = std::string(kind) + ": " + detail::webgpu_string(message);
            }
        };
        desc.uncapturedErrorCallbackInfo.userdata1 = s_.get();
        desc.deviceLostCallbackInfo.mode = WGPUCallbackMode_AllowProcessEvents;
        desc.deviceLostCallbackInfo.callback = [](WGPUDevice const*, WGPUDeviceLostReason reason,
                                                  WGPUStringView message, void* ud, void*) {
            auto* st = static_cast<state*>(ud);
            if (reason == WGPUDeviceLostReason_Destroyed || reason == WGPUDeviceLostReason_CallbackCancelled) return;
            std::lock_guard lock(st->error_mutex);
            st->lost = true;
            st->error = "device lost: " + detail::webgpu_string(message);
        };
        desc.deviceLostCallbackInfo.userdata1 = s_.get();
        WGPURequestDeviceCallbackInfo info{};
        info.mode = WGPUCallbackMode_AllowProcessEvents;
        info.callback = [](WGPURequestDeviceStatus status, WGPUDevice device, WGPUStringView message, void* ud, void*) {
            auto* rr = static_cast<result*>(ud);
            if (status == WGPURequestDeviceStatus_Success) rr->device = device;
            rr->message = detail::webgpu_string(message);
            rr->done = true;
        };
        info.userdata1 = &r;
        wgpuAdapterRequestDevice(live()->adapter, &desc, info);
        detail::webgpu_wait(live()->instance, nullptr, [&] { return r.done; });
        if (!r.device) throw device_error("webgpu: requesting a device failed: " + r.message);
        live()->device = r.device;
        live()->queue = wgpuDeviceGetQueue(live()->device);
    }

    bool error_pending() {
        std::lock_guard lock(live()->error_mutex);
        return !live()->error.empty();
    }

    // Throws the first error reported since the last check.
    void check(char const* call) {
        std::string error;
        {
            std::lock_guard lock(live()->error_mutex);
            if (live()->error.empty()) return;
            error.swap(live()->error);
            if (live()->lost) live()->error = error;  // a lost device stays lost
        }
        throw device_error(std::string("webgpu: ") + call + ": " + error);
    }

    std::uint64_t capacity_of(void* p, char const* call) const {
        auto const it = live()->buffers.find(static_cast<WGPUBuffer>(p));
        if (it == live()->buffers.end())
            throw device_error(std::string("webgpu: ") + call + ": not a live buffer of this device");
        return it->second;
    }

    WGPUBuffer create_buffer(std::uint64_t bytes, WGPUBufferUsage usage, char const* call) {
        WGPUBufferDescriptor desc{};
        desc.usage = usage;
        desc.size = bytes;
        WGPUBuffer buffer = wgpuDeviceCreateBuffer(live()->device, &desc);
        if (error_pending()) {
            if (buffer) wgpuBufferRelease(buffer);
            check(call);
        }
        if (!buffer)
            throw device_error(std::string("webgpu: ") + call + ": creating a buffer of " + std::to_string(bytes) +
                               " bytes failed");
        ++live()->counters.buffers_created;
        return buffer;
    }

    WGPUCommandEncoder encoder() {
        if (!live()->encoder) live()->encoder = wgpuDeviceCreateCommandEncoder(live()->device, nullptr);
        return live()->encoder;
    }

    void submit() {
        WGPUCommandBuffer commands = wgpuCommandEncoderFinish(encoder(), nullptr);
        wgpuCommandEncoderRelease(live()->encoder);
        live()->encoder = nullptr;
        wgpuQueueSubmit(live()->queue, 1, &commands);
        wgpuCommandBufferRelease(commands);
        ++live()->counters.submits;
        // This submit's uniform writes are ordered before any later one.
        for (auto& u : live()->pending_uniforms)
            if (!live()->uniform_pool.give(u.buffer, u.capacity)) wgpuBufferRelease(u.buffer);
        live()->pending_uniforms.clear();
        check("submit");
    }

    // The device's state. A moved-from device has none: every call on it is
    // this error rather than a null dereference.
    state* live() const {
        if (!s_) throw device_error("webgpu: this webgpu_device was moved from; use the device it was moved to");
        return s_.get();
    }

    std::unique_ptr<state> s_;
};

static_assert(device<webgpu_device>);

}  // namespace switchyard
