// lazy(x): an elementwise chain recorded as a type and run once.
//
//     auto chain = sy::lazy(x).relu().mul(2.0f).add(y);   // nothing runs yet
//     chain.compute(out);                                  // one fused kernel into out
//     sy::lazy_result r = chain.compute();                 // or into memory r owns (r.ref())
//     std::vector<float> h = chain.to_host<float>();       // or: run and read back
//
// x, y and out are strided_refs of one shape, dtype and device (any strides:
// the chain walks them in their shared iteration order). Steps: relu, add,
// sub, mul, div (with a host scalar or an array), and map(f) for a stateless
// function written for every device, such as [](auto v) { return sy::tanh(v); }.
//
// The chain's steps are a compile-time list, so on CPU and CUDA compute()
// is one for_each whose kernel applies every step in registers: one read of
// each input and one write, whatever the chain's length. On WebGPU the same
// kernel is traced into one fused shader, recorded into the device's open
// encoder (nothing is submitted until sync() or a readback). Where one
// shader cannot hold the whole chain (more array operands than the stage's
// storage-buffer limit), or when fusion::per_step is asked for, the chain
// runs as several dispatches that pass the intermediate values through two
// ping-pong buffers, reused for any number of steps.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "switchyard/core.h"
#include "switchyard/device_array.h"
#include "switchyard/for_each.h"
#include "switchyard/kernel_types.h"
#include "switchyard/lazy/ops.h"
#include "switchyard/view/flat.h"
#include "switchyard/view/iteration_order.h"
#include "switchyard/view/strided_ref.h"
#if defined(__CUDACC__)
#include "switchyard/device/cuda.h"
#include "switchyard/device/cuda/current_stream.h"
#endif

namespace switchyard {

// How a lazy chain runs on shader devices: all steps in as few kernels as the
// device's binding limit allows, or one kernel per step (for comparisons).
enum class fusion : std::uint8_t { full, per_step };

namespace detail {

// The bound steps of a chain as a nested list, so that a kernel applies them
// with plain member calls on every device (std::tuple is not __device__).
template <typename... S>
struct step_list {
    template <typename X>
    SWITCHYARD_HOST_DEVICE X apply(X x, std::int64_t) const {
        return x;
    }
    template <typename X>
    X apply_range(X x, std::int64_t, std::size_t, std::size_t, std::size_t) const {
        return x;
    }
};
template <typename S, typename... R>
struct step_list<S, R...> {
    S head;
    step_list<R...> tail;
    template <typename X>
    SWITCHYARD_HOST_DEVICE X apply(X x, std::int64_t i) const {
        return tail.apply(head.apply(x, i), i);
    }
    // Steps k..: only those in [begin, end), for one segment of a split chain.
    template <typename X>
    X apply_range(X x, std::int64_t i, std::size_t k, std::size_t begin, std::size_t end) const {
        X const y = k >= begin && k < end ? head.apply(x, i) : x;
        return tail.apply_range(y, i, k + 1, begin, end);
    }
};

inline step_list<> make_step_list() { return {}; }
template <typename S, typename... R>
step_list<S, R...> make_step_list(S const& s, R const&... rest) {
    return {s, make_step_list(rest...)};
}

}  // namespace detail

// What lazy_chain::compute() returns: the chain's values in row-major memory
// it owns on the chain's device, freed with it (device_array.h). ref() views
// them (to start another chain, or for your own kernels); to_host() reads
// them back.
using lazy_result = device_array;

template <typename... Steps>
class lazy_chain {
public:
    static constexpr std::size_t steps = sizeof...(Steps);
    static constexpr std::size_t array_operands = (std::size_t{Steps::arrays} + ... + 0);

    lazy_chain(strided_ref const& source, std::tuple<Steps...> chain) : source_(source), chain_(std::move(chain)) {}

    strided_ref const& source() const noexcept { return source_; }

    auto relu() const { return then(lazy_ops::relu{}); }
    auto add(double s) const { return then(lazy_ops::with_scalar<lazy_ops::arith::add>{s}); }
    auto sub(double s) const { return then(lazy_ops::with_scalar<lazy_ops::arith::sub>{s}); }
    auto mul(double s) const { return then(lazy_ops::with_scalar<lazy_ops::arith::mul>{s}); }
    auto div(double s) const { return then(lazy_ops::with_scalar<lazy_ops::arith::div>{s}); }
    auto add(strided_ref const& y) const { return then(lazy_ops::with_array<lazy_ops::arith::add>{y}); }
    auto sub(strided_ref const& y) const { return then(lazy_ops::with_array<lazy_ops::arith::sub>{y}); }
    auto mul(strided_ref const& y) const { return then(lazy_ops::with_array<lazy_ops::arith::mul>{y}); }
    auto div(strided_ref const& y) const { return then(lazy_ops::with_array<lazy_ops::arith::div>{y}); }
    template <typename F>
    auto map(F f) const {
        static_assert(std::is_empty_v<F>,
                      "lazy_chain::map: the function must be stateless (a lambda without "
                      "captures); pass numbers through add/sub/mul/div");
        return then(lazy_ops::map<F>{f});
    }

    // Runs the chain into `out` (same shape, dtype and device as the input).
    void compute(strided_ref const& out, fusion mode = fusion::full) const {
        std::array<strided_ref, 2 + array_operands> const refs = operand_refs(out);
        for (auto const& r : refs) check_operand(r);
        iteration_order const order = std::apply([](auto const&... r) { return iteration_order_of(r...); }, refs);
        static auto const table = dispatch_table_from_op<runner>("lazy chain");
        table.select(dispatch_set{source_.device, source_.type,
                                  order.dense ? contiguity::contiguous : contiguity::strided})(*this, out, order, mode);
    }

    // Runs the chain into new memory on its device (lazy_result owns it).
    lazy_result compute(fusion mode = fusion::full) const {
        lazy_result result = new_result();
        compute(result.ref(), mode);
        return result;
    }

    // Runs the chain and copies the result, in row-major order, to `host`.
    template <typename T>
    void to_host(std::span<T> host, fusion mode = fusion::full) const {
        std::int64_t const n = source_.numel();
        if (dtype_of_v<T> != source_.type)
            throw std::invalid_argument(std::string("lazy chain: to_host into ") +
                                        std::string(to_string(dtype_of_v<T>)) + " elements, but the chain's dtype is " +
                                        std::string(to_string(source_.type)));
        if (static_cast<std::int64_t>(host.size()) != n)
            throw std::invalid_argument("lazy chain: to_host into " + std::to_string(host.size()) +
                                        " elements, but the chain has " + std::to_string(n));
        if (source_.device == device_kind::cpu)
            compute(strided_ref::contiguous_like(host.data(), source_, "lazy result"), mode);  // straight into host
        else
            compute(mode).to_host(host);
    }
    template <typename T>
    std::vector<T> to_host(fusion mode = fusion::full) const {
        std::vector<T> host(static_cast<std::size_t>(source_.numel()));
        to_host(std::span<T>(host), mode);
        return host;
    }

private:
    template <typename... Other>
    friend class lazy_chain;

    // Memory for compute()'s result on the devices this translation unit
    // runs chains on.
    lazy_result new_result() const {
        switch (source_.device) {
            case device_kind::cpu: return make_device_array<device_kind::cpu>(source_, "lazy result");
#if defined(__CUDACC__)
            case device_kind::cuda: return make_device_array<device_kind::cuda>(source_, "lazy result");
#endif
#if defined(SWITCHYARD_HAS_WEBGPU_FOR_EACH)
            case device_kind::webgpu: return make_device_array<device_kind::webgpu>(source_, "lazy result");
#endif
            default:
                throw std::invalid_argument(std::string("lazy chain: no memory for results on device ") +
                                            std::string(to_string(source_.device)) + " in this build");
        }
    }

    template <typename S>
    lazy_chain<Steps..., S> then(S step) const {
        return {source_, std::tuple_cat(chain_, std::tuple<S>{step})};
    }

    std::array<strided_ref, 2 + array_operands> operand_refs(strided_ref const& out) const {
        std::array<strided_ref, 2 + array_operands> refs{};
        refs[0] = out;
        refs[1] = source_;
        std::size_t k = 2;
        std::apply(
            [&](auto const&... s) {
                auto add_ref = [&](auto const& step) {
                    if constexpr (std::decay_t<decltype(step)>::arrays > 0) refs[k++] = step.ref();
                };
                (add_ref(s), ...);
            },
            chain_);
        return refs;
    }

    void check_operand(strided_ref const& r) const {
        if (r.device != source_.device || r.device_index != source_.device_index)
            throw std::invalid_argument(
                std::string("lazy chain: '") + r.name + "' is on " + std::string(to_string(r.device)) + ":" +
                std::to_string(r.device_index) + " but the chain's input '" + source_.name + "' is on " +
                std::string(to_string(source_.device)) + ":" + std::to_string(source_.device_index));
        if (r.type != source_.type)
            throw std::invalid_argument(std::string("lazy chain: '") + r.name + "' has dtype " +
                                        std::string(to_string(r.type)) + " but the chain's input '" + source_.name +
                                        "' has " + std::string(to_string(source_.type)));
    }

    template <typename Tag>
    auto bound_steps(iteration_order const& order) const {
        return std::apply([&](auto const&... s) { return detail::make_step_list(s.template bind<Tag>(order)...); },
                          chain_);
    }

public:
    // How compute() runs, through a dispatch table. Public only because nvcc
    // requires an extended __host__ __device__ lambda's enclosing function to be.

    // The dispatch table's op: one instantiation per (device, dtype, contiguity).
    struct runner {
        template <typename Tag>
        static void op(Tag tag, lazy_chain const& chain, strided_ref const& out, iteration_order const& order,
                       fusion mode) {
            if constexpr (detail::tag_on_shader_device<Tag>)
                chain.run_split(tag, out, order, mode);
            else
                chain.run_fused(tag, out, order);
        }

        using space = axes<axis<device_kind::cpu, device_kind::cuda, device_kind::webgpu>, float_dtype_axis,
                           full_contiguity_axis>;
        using cpu_points = axes<axis<device_kind::cpu>, float_dtype_axis, full_contiguity_axis>;
        using cuda_points = axes<axis<device_kind::cuda>, float_dtype_axis, full_contiguity_axis>;
        using webgpu_points = axes<axis<device_kind::webgpu>, axis<dtype::f16, dtype::f32>, full_contiguity_axis>;
#if defined(__CUDACC__) && defined(SWITCHYARD_HAS_WEBGPU_FOR_EACH)
        using subspaces = coverage<cpu_points, cuda_points, webgpu_points>;
#elif defined(__CUDACC__)
        using subspaces = coverage<cpu_points, cuda_points>;
#elif defined(SWITCHYARD_HAS_WEBGPU_FOR_EACH)
        using subspaces = coverage<cpu_points, webgpu_points>;
#else
        using subspaces = coverage<cpu_points>;
#endif
        using dispatcher =
            dispatch_table<space, void(lazy_chain const&, strided_ref const&, iteration_order const&, fusion)>;
    };

    // CPU and CUDA: every step in one kernel.
    template <typename Tag>
    void run_fused(Tag tag, strided_ref const& out, iteration_order const& order) const {
        constexpr auto device = tag_get<device_kind>(Tag{});
        constexpr auto type = tag_get<dtype>(Tag{});
        constexpr auto contig = tag_get<contiguity>(Tag{});
        using storage = storage_t<Tag>;
        using compute = compute_t<Tag>;
        flat_in<device, type, contig> const in(source_, order);
        flat_out<device, type, contig> const result(out, order);
        auto const steps = bound_steps<Tag>(order);
        for_each(tag, result.size(), [=] SWITCHYARD_HOST_DEVICE(Tag, std::int64_t i) {
            result[i] = static_cast<storage>(steps.apply(static_cast<compute>(in[i]), i));
        });
    }

    // Shader devices: segments of steps, each one traced kernel, as long as
    // the device's binding limit allows (fusion::full) or one step each.
    template <typename Tag>
    void run_split(Tag tag, strided_ref const& out, iteration_order const& order, fusion mode) const {
#if defined(SWITCHYARD_HAS_WEBGPU_FOR_EACH)
        constexpr auto device_tag = tag_get<device_kind>(Tag{});
        constexpr auto type = tag_get<dtype>(Tag{});
        constexpr auto contig = tag_get<contiguity>(Tag{});
        using storage = storage_t<Tag>;
        using compute = compute_t<Tag>;
        using in_view = flat_in<device_tag, type, contig>;
        using out_view = flat_out<device_tag, type, contig>;
        webgpu_device& device = current_webgpu_device();
        std::int64_t const n = source_.numel();
        if (n == 0) return;
        auto const bound = bound_steps<Tag>(order);

        // Segments: each binds its input, its output and its steps' arrays.
        std::size_t const max_bindings = device.limits().maxStorageBuffersPerShaderStage;
        constexpr std::array<int, steps_or_one()> arrays_per_step = {Steps::arrays...};
        std::vector<std::size_t> cuts{0};  // segment k is steps [cuts[k], cuts[k + 1])
        std::size_t bindings = 2;
        for (std::size_t k = 0; k < steps; ++k) {
            std::size_t const need = static_cast<std::size_t>(arrays_per_step[k]);
            bool const full = mode == fusion::per_step ? k > cuts.back() : bindings + need > max_bindings;
            if (full) {
                cuts.push_back(k);
                bindings = 2;
            }
            bindings += need;
        }
        cuts.push_back(steps);
        std::size_t const segments = cuts.size() - 1;

        // Ping-pong: segment s writes where(s) (-1 = out, 0/1 = a temporary)
        // and the next segment reads it. When out may be overwritten early
        // (dense in the iteration order, aliasing no input) it is one of the
        // two buffers, so a chain of any length needs one temporary.
        std::array<strided_ref, 2 + array_operands> const refs = operand_refs(out);
        bool aliased = false;
        for (std::size_t k = 1; k < refs.size(); ++k) aliased = aliased || refs[k].data == out.data;
        bool const out_is_pingpong = !aliased && order.permute(out).is_contiguous();
        std::size_t const last = segments - 1;
        auto where = [&](std::size_t s) -> int {
            if (s == last) return -1;
            if (out_is_pingpong) return (last - s) % 2 == 0 ? -1 : 0;
            return static_cast<int>(s % 2);
        };
        std::size_t const bytes = static_cast<std::size_t>(n) * dtype_size(source_.type);
        void* temporary[2] = {nullptr, nullptr};
        struct release {
            webgpu_device& device;
            void* (&buffers)[2];
            ~release() {
                for (void* b : buffers) device.free(b);
            }
        } const released{device, temporary};
        for (std::size_t s = 0; s < last; ++s) {
            int const k = where(s);
            if (k >= 0 && !temporary[k]) temporary[k] = device.alloc(bytes);
        }
        std::int64_t const one = 1;
        auto temporary_ref = [&](int k) {
            return strided_ref::make(temporary[k], source_.type, source_.device, &n, &one, 1, "lazy intermediate",
                                     source_.device_index);
        };
        for (std::size_t s = 0; s < segments; ++s) {
            int const from = s == 0 ? -2 : where(s - 1), to = where(s);
            in_view const in = from == -2   ? in_view(source_, order)
                               : from == -1 ? in_view(out, order)
                                            : in_view(temporary_ref(from));
            out_view const result = to == -1 ? out_view(out, order) : out_view(temporary_ref(to));
            std::size_t const begin = cuts[s], end = cuts[s + 1];
            for_each(tag, n, [=](Tag, std::int64_t i) {
                result[i] = static_cast<storage>(bound.apply_range(static_cast<compute>(in[i]), i, 0, begin, end));
            });
        }
#else
        (void)tag, (void)out, (void)order, (void)mode;
#endif
    }

private:
    static constexpr std::size_t steps_or_one() { return steps > 0 ? steps : 1; }

    strided_ref source_;
    std::tuple<Steps...> chain_;
};

// The start of a chain over x.
inline lazy_chain<> lazy(strided_ref const& x) { return lazy_chain<>(x, std::tuple<>{}); }

}  // namespace switchyard
