// any_device: any device behind one runtime type (the "virtual only at the
// boundary" half of the design: kernels use concrete devices statically;
// code that picks a device at run time holds an any_device).
//
//     any_device d = cpu_device{};
//     void* p = d.alloc(1024); d.free(p);
//
// Copies share the underlying device object.
#pragma once

#include <cstddef>
#include <memory>
#include <string_view>
#include <type_traits>
#include <utility>

#include "switchyard/device/device.h"

namespace switchyard {

class any_device {
public:
    template <device D>
    requires(!std::is_same_v<std::remove_cvref_t<D>, any_device>) any_device(D d)
        : impl_(std::make_shared<model<D>>(std::move(d))) {}

    void* alloc(std::size_t bytes) { return impl_->alloc(bytes); }
    void free(void* p) { impl_->free(p); }
    void copy_from_host(void* dst, void const* src, std::size_t bytes) { impl_->copy_from_host(dst, src, bytes); }
    void copy_to_host(void* dst, void const* src, std::size_t bytes) { impl_->copy_to_host(dst, src, bytes); }
    void sync() { impl_->sync(); }
    std::string_view name() const { return impl_->name(); }

    // The concrete device, or nullptr if it is not a D.
    template <device D>
    D* get() noexcept {
        auto* m = dynamic_cast<model<D>*>(impl_.get());
        return m ? &m->device : nullptr;
    }

private:
    struct interface {
        virtual ~interface() = default;
        virtual void* alloc(std::size_t) = 0;
        virtual void free(void*) = 0;
        virtual void copy_from_host(void*, void const*, std::size_t) = 0;
        virtual void copy_to_host(void*, void const*, std::size_t) = 0;
        virtual void sync() = 0;
        virtual std::string_view name() const = 0;
    };
    template <typename D>
    struct model final : interface {
        explicit model(D d) : device(std::move(d)) {}
        void* alloc(std::size_t n) override { return device.alloc(n); }
        void free(void* p) override { device.free(p); }
        void copy_from_host(void* d, void const* s, std::size_t n) override { device.copy_from_host(d, s, n); }
        void copy_to_host(void* d, void const* s, std::size_t n) override { device.copy_to_host(d, s, n); }
        void sync() override { device.sync(); }
        std::string_view name() const override { return device.name(); }
        D device;
    };

    std::shared_ptr<interface> impl_;
};

static_assert(device<any_device>);

// A device used through a reference, for devices that are not copied (a
// webgpu_device owns its queue): any_device(device_ref(dev)). dev must
// outlive it.
template <device D>
class device_ref {
public:
    explicit device_ref(D& d) noexcept : d_(&d) {}
    void* alloc(std::size_t bytes) { return d_->alloc(bytes); }
    void free(void* p) { d_->free(p); }
    void copy_from_host(void* dst, void const* src, std::size_t bytes) { d_->copy_from_host(dst, src, bytes); }
    void copy_to_host(void* dst, void const* src, std::size_t bytes) { d_->copy_to_host(dst, src, bytes); }
    void sync() { d_->sync(); }
    std::string_view name() const { return d_->name(); }

private:
    D* d_;
};

}  // namespace switchyard
