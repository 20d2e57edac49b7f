// lazy(x): an elementwise chain recorded as a type and run once.
//
//     auto chain = sy::lazy(x).relu().mul(2.0f).add(y);   // nothing runs yet
//     chain.compute(out);                                  // one fused kernel into out
//     sy::lazy_result r = chain.compute();                 // or into memory r owns (r.ref())
//     std::vector<float> h = chain.to_host<float>();       // or: run and read back
//     float s = chain.sum().item<float>();                 // or end in a reduction (lazy_reduction below)
//
// x and out are strided_refs of one shape, dtype and device, with any
// strides; array operands (y) have the dtype and device and broadcast to that
// shape by PyTorch's rules (a bias row: y of shape [cols]). Steps: relu, add,
// sub, mul, div (with a host scalar or an array), and map(f) for a stateless
// function written for every device, such as [](auto v) { return sy::tanh(v); }.
//
// The chain's steps are a compile-time list and its kernel a function of
// explicit operands: compute() is one transform (transform.h) whose inputs
// are x and the arrays, applying every step in registers: one read of each
// operand and one write, whatever the chain's length, with each operand read
// by its own layout on every device (CUDA's 16-byte loads, WebGPU's vec4).
// On WebGPU and Metal the kernel is traced into one shader, recorded into
// the device's open encoder or command buffer (nothing is submitted until
// sync() or a readback).
//
// One kernel reads at most 14 arrays (transform's 16 operands, less x and
// out). A chain with more runs as several kernels, each as many whole steps
// as fit; on WebGPU a kernel reads at most what the device binds in one
// stage less two (14 arrays when it binds 16 or more, else 6: WebGPU
// guarantees 8); Metal's 31 buffers per stage (one of them the uniforms)
// allow the 14. fusion::per_step runs one kernel per step, on every device
// (for comparisons). Between kernels the values pass through at most two
// ping-pong buffers (device_array) in the chain's dtype, reused for any
// number of steps: so f16 and bf16 results of a split chain are rounded at
// each cut, where one fused kernel rounds once.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "switchyard/core.h"
#include "switchyard/core/slots.h"
#include "switchyard/device_array.h"
#include "switchyard/kernel_types.h"
#include "switchyard/lazy/ops.h"
#include "switchyard/reduce.h"
#include "switchyard/shader/trace.h"
#include "switchyard/transform.h"
#include "switchyard/view/elementwise_layout.h"
#include "switchyard/view/overlap.h"
#include "switchyard/view/strided_ref.h"
#if defined(__CUDACC__)
#include "switchyard/device/cuda.h"
#endif

namespace switchyard {

// How a lazy chain runs: all steps in as few kernels as the device allows,
// or one kernel per step (for comparisons).
enum class fusion : std::uint8_t { full, per_step };

namespace detail {

// Step I of a chain applied to x when I is in [Begin, End); values holds the
// arrays the kernel reads, from array operand Base on. A free function of the
// step alone, so its name does not grow with the chain.
template <std::size_t I, std::size_t Begin, std::size_t End, std::size_t Base, typename S, typename X>
SWITCHYARD_HOST_DEVICE X apply_step(S const& step, X x, X const* values) {
    if constexpr (I >= Begin && I < End)
        return step.template apply<Base>(x, values);
    else
        return x;
}

// Steps I... of a list applied in order.
template <std::size_t Begin, std::size_t End, std::size_t Base, typename List, typename X, std::size_t... I>
SWITCHYARD_HOST_DEVICE X apply_steps(List const& list, X x, X const* values, std::index_sequence<I...>) {
    ((x = apply_step<I, Begin, End, Base>(slot_value<I>(list), x, values)), ...);
    (void)values;
    return x;
}

// The steps of a chain as one flat type (core/slots.h), so that a kernel
// applies them with plain member calls on every device. Flat rather than
// recursive: a nested list (or std::tuple's recursive bases) makes the type
// names of an N-step chain, and their debug information, grow as N^2 or N^3.
// Step K is slot_value<K>(list).
template <typename... S>
struct step_list : slot_list<std::index_sequence_for<S...>, S...> {
    template <std::size_t Begin, std::size_t End, std::size_t Base, typename X>
    SWITCHYARD_HOST_DEVICE X apply(X x, X const* values) const {
        return apply_steps<Begin, End, Base>(*this, x, values, std::index_sequence_for<S...>{});
    }
};

template <typename... S>
step_list<S...> make_step_list(S const&... s) {
    return step_list<S...>{{{s}...}};
}

// The kernel of steps [Begin, End): a function of the chain's value and the
// values of the arrays those steps read (array operands Base, Base + 1, ...).
template <typename List, std::size_t Begin, std::size_t End, std::size_t Base>
struct chain_segment {
    List steps;
    template <typename X, typename... A>
    SWITCHYARD_HOST_DEVICE X operator()(X x, A... a) const {
        if constexpr (sizeof...(A) == 0) {
            return steps.template apply<Begin, End, Base>(x, static_cast<X const*>(nullptr));
        } else {
            X const values[] = {a...};
            return steps.template apply<Begin, End, Base>(x, values);
        }
    }
};

}  // namespace detail

// What lazy_chain::compute() returns: the chain's values in row-major memory
// it owns on the chain's device, freed with it (device_array.h). ref() views
// them (to start another chain, or for your own kernels); to_host() reads
// them back.
using lazy_result = device_array;

template <typename Chain, typename Combine>
class lazy_reduction;

template <typename... Steps>
class lazy_chain {
public:
    static constexpr std::size_t steps = sizeof...(Steps);
    static constexpr std::size_t array_operands = (std::size_t{Steps::arrays} + ... + 0);

    lazy_chain(strided_ref const& source, detail::step_list<Steps...> const& chain,
               std::array<strided_ref, array_operands> const& arrays)
        : source_(source), chain_(chain), arrays_(arrays) {}

    strided_ref const& source() const noexcept { return source_; }

    auto relu() const { return then(lazy_ops::relu{}); }
    auto add(double s) const { return then(lazy_ops::with_scalar<lazy_ops::arith::add>{s}); }
    auto sub(double s) const { return then(lazy_ops::with_scalar<lazy_ops::arith::sub>{s}); }
    auto mul(double s) const { return then(lazy_ops::with_scalar<lazy_ops::arith::mul>{s}); }
    auto div(double s) const { return then(lazy_ops::with_scalar<lazy_ops::arith::div>{s}); }
    auto add(strided_ref const& y) const { return then_array<lazy_ops::arith::add>(y); }
    auto sub(strided_ref const& y) const { return then_array<lazy_ops::arith::sub>(y); }
    auto mul(strided_ref const& y) const { return then_array<lazy_ops::arith::mul>(y); }
    auto div(strided_ref const& y) const { return then_array<lazy_ops::arith::div>(y); }
    template <typename F>
    auto map(F f) const {
        static_assert(std::is_empty_v<F>,
                      "lazy_chain::map: the function must be stateless (a lambda without "
                      "captures); pass numbers through add/sub/mul/div");
        return then(lazy_ops::map<F>{f});
    }

    // Ends the chain in a reduction over `over` (lazy_reduction, below): the
    // chain's values are the reduction's map, computed in registers and
    // never stored. sum() is reduce(switchyard::sum, ...).
    template <typename Combine>
    lazy_reduction<lazy_chain, Combine> reduce(Combine const& combine, dims const& over = all_dims,
                                               bool keepdim = false) const {
        static_assert(!is_indexed_combine_v<Combine>,
                      "lazy_chain::reduce: argmin and argmax are not built for lazy chains (their result is int64, "
                      "not the chain's dtype); compute the chain, then call sy::reduce with sy::argmax");
        return {*this, combine, over, keepdim};
    }
    auto sum(dims const& over = all_dims, bool keepdim = false) const { return reduce(switchyard::sum, over, keepdim); }

    // Runs the chain into `out` (the input's shape, dtype and device).
    void compute(strided_ref const& out, fusion mode = fusion::full) const {
        check_operand(out);
        if (!detail::same_shape(out, source_))
            throw std::invalid_argument("lazy chain: output " + detail::ref_label(out.name) + " has shape " +
                                        detail::shape_string(out) + " but the chain's input " +
                                        detail::ref_label(source_.name) + " has " + detail::shape_string(source_));
        for (strided_ref const& a : arrays_) {
            check_operand(a);
            (void)detail::broadcast_to("lazy chain", a, source_);
        }
        // As transform's rule, before any kernel runs (a split chain's later
        // kernels would not see it): out is exactly an operand or shares no
        // memory with it.
        auto const check_overlap = [&](strided_ref const& r) {
            if (!in_place_or_disjoint(out, r))
                throw std::invalid_argument("lazy chain: output " + detail::ref_label(out.name) +
                                            " shares memory with " + detail::ref_label(r.name) +
                                            " without being exactly that array (in place)");
        };
        check_overlap(source_);
        for (strided_ref const& a : arrays_) check_overlap(a);
        static auto const table = dispatch_table_from_op<runner>("lazy chain");
        table.select(dispatch_set{source_.device, source_.type})(*this, out, mode);
    }

    // Runs the chain into new memory on its device (lazy_result owns it).
    lazy_result compute(fusion mode = fusion::full) const {
        lazy_result result = new_result(source_);
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
    template <typename Chain, typename Combine>
    friend class lazy_reduction;

    // Memory shaped like `like` for a result, on the devices this
    // translation unit runs chains on.
    lazy_result new_result(strided_ref const& like) const {
        switch (source_.device) {
            case device_kind::cpu: return make_device_array<device_kind::cpu>(like, "lazy result");
#if defined(__CUDACC__)
            case device_kind::cuda: return make_device_array<device_kind::cuda>(like, "lazy result");
#endif
#if defined(SWITCHYARD_HAS_WEBGPU_FOR_EACH)
            case device_kind::webgpu: return make_device_array<device_kind::webgpu>(like, "lazy result");
#endif
#if defined(SWITCHYARD_HAS_METAL_FOR_EACH)
            case device_kind::metal: return make_device_array<device_kind::metal>(like, "lazy result");
#endif
            default:
                throw std::invalid_argument(std::string("lazy chain: no memory for results on device ") +
                                            std::string(to_string(source_.device)) + " in this build");
        }
    }

    // The steps so far and `step` after them.
    template <typename S>
    detail::step_list<Steps..., S> with_step(S const& step) const {
        return [&]<std::size_t... I>(std::index_sequence<I...>) {
            return detail::make_step_list(detail::slot_value<I>(chain_)..., step);
        }
        (std::index_sequence_for<Steps...>{});
    }

    template <typename S>
    lazy_chain<Steps..., S> then(S step) const {
        return {source_, with_step(step), arrays_};
    }

    template <lazy_ops::arith A>
    auto then_array(strided_ref const& y) const {
        std::array<strided_ref, array_operands + 1> arrays{};
        std::copy(arrays_.begin(), arrays_.end(), arrays.begin());
        arrays[array_operands] = y;
        using step = lazy_ops::with_array<A, array_operands>;
        return lazy_chain<Steps..., step>(source_, with_step(step{}), arrays);
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

    // Segments of steps: [cuts[s], cuts[s + 1]) for s < count, each reading
    // at most `capacity` arrays.
    static constexpr std::size_t wide_capacity = max_operands - 2;
    static constexpr std::size_t narrow_capacity = 6;
    struct segment_plan {
        std::size_t count = 0;
        std::array<std::size_t, steps + 2> cuts{};
    };
    // Arrays each step reads (one more entry, so that a chain of no steps has one).
    static constexpr std::array<std::size_t, steps + 1> arrays_of = {std::size_t{Steps::arrays}..., 0};
    static constexpr segment_plan make_plan(std::size_t capacity) {
        segment_plan plan;
        std::size_t used = 0;
        for (std::size_t k = 0; k < steps; ++k) {
            if (used + arrays_of[k] > capacity) {
                plan.cuts[++plan.count] = k;
                used = 0;
            }
            used += arrays_of[k];
        }
        plan.cuts[++plan.count] = steps;
        return plan;
    }
    // The most arrays one segment of make_plan(capacity) reads.
    static constexpr std::size_t widest_segment(std::size_t capacity) {
        segment_plan const plan = make_plan(capacity);
        std::size_t widest = 0;
        for (std::size_t s = 0; s < plan.count; ++s) {
            std::size_t const n = arrays_before(plan.cuts[s + 1]) - arrays_before(plan.cuts[s]);
            if (n > widest) widest = n;
        }
        return widest;
    }
    // Array operands read by steps before step k.
    static constexpr std::size_t arrays_before(std::size_t k) {
        std::size_t n = 0;
        for (std::size_t j = 0; j < k; ++j) n += arrays_of[j];
        return n;
    }

    // Arrays one kernel may read on the tag's device.
    template <typename Tag>
    static std::size_t array_capacity() {
        std::size_t operands = max_operands;
#if defined(SWITCHYARD_HAS_WEBGPU_FOR_EACH)
        if constexpr (tag_device_v<Tag> == device_kind::webgpu) {
            std::size_t const bound = current_webgpu_device().limits().maxStorageBuffersPerShaderStage;
            if (bound < operands) operands = bound;
        }
#endif
#if defined(SWITCHYARD_HAS_METAL_FOR_EACH)
        if constexpr (tag_device_v<Tag> == device_kind::metal) {
            // The stage's buffers less the uniforms' (views' sizes and host scalars).
            std::size_t const bound = metal_device::max_buffers_per_stage - 1;
            if (bound < operands) operands = bound;
        }
#endif
        return operands > 2 ? operands - 2 : 0;
    }

    template <typename Tag>
    auto bound_steps() const {
        return [&]<std::size_t... I>(std::index_sequence<I...>) {
            return detail::make_step_list(detail::slot_value<I>(chain_).template bind<Tag>()...);
        }
        (std::index_sequence_for<Steps...>{});
    }

public:
    // How compute() runs, through a dispatch table. Public only because nvcc
    // requires an extended __host__ __device__ lambda's enclosing function to be.

    // The dispatch table's op: one instantiation per (device, dtype).
    struct runner {
        template <typename Tag>
        static void op(Tag tag, lazy_chain const& chain, strided_ref const& out, fusion mode) {
            chain.run(tag, out, mode);
        }

        using space = axes<full_device_axis, float_dtype_axis>;
        using subspaces = transform_coverage<float_dtype_axis>;  // a chain runs on transform
        using dispatcher = dispatch_table<space, void(lazy_chain const&, strided_ref const&, fusion)>;
    };

    template <typename Tag>
    void run(Tag tag, strided_ref const& out, fusion mode) const {
        if (mode == fusion::per_step && steps > 0) return run_steps(tag, out, std::make_index_sequence<steps>{});
        if constexpr (!detail::tag_on_shader_device<Tag>) {
            run_segments<wide_capacity>(tag, out);
        } else {
            std::size_t const capacity = array_capacity<Tag>();
            if (widest_segment(wide_capacity) <= capacity)
                run_segments<wide_capacity>(tag, out);
            else if (widest_segment(narrow_capacity) <= capacity)
                run_segments<narrow_capacity>(tag, out);
            else if (steps > 0 && capacity >= 1)
                run_steps(tag, out, std::make_index_sequence<steps>{});
            else
                throw std::invalid_argument(
                    "lazy chain: the device binds too few storage buffers in one shader "
                    "for a step with an array operand (3 are needed)");
        }
    }

private:
    // The chain reduced into `out`: one transform_reduce whose map is the
    // whole chain when its arrays fit one kernel, else the chain's values
    // first (in a temporary) and then their reduction.
    template <typename Tag, typename Combine>
    void reduce_into(Tag tag, strided_ref const& out, dims const& over, Combine const& combine) const {
        for (strided_ref const& a : arrays_) {
            check_operand(a);
            (void)detail::broadcast_to("lazy reduction", a, source_);
        }
        if constexpr (array_operands + 2 <= max_operands) {
            if (!detail::tag_on_shader_device<Tag> || array_operands <= array_capacity<Tag>()) {
                auto const bound = bound_steps<Tag>();
                detail::chain_segment<decltype(bound), 0, steps, 0> const kernel{bound};
                [&]<std::size_t... K>(std::index_sequence<K...>) {
                    switchyard::transform_reduce(tag, out, over, combine, kernel, source_, arrays_[K]...);
                }
                (std::make_index_sequence<array_operands>{});
                return;
            }
        }
        lazy_result const values = new_result(source_);
        run(tag, values.ref(), fusion::full);
        switchyard::reduce(tag, out, over, combine, values.ref());
    }

    // Runs `count` kernels through the ping-pong buffers: run_one(s, in,
    // target) runs kernel s from `in` into `target`. Kernel s writes where(s)
    // (-1 = out, 0/1 = a temporary) and the next one reads it. When out
    // shares no memory with the chain's operands it is one of the two
    // buffers, so a chain of any length needs one temporary.
    template <typename Tag, typename Run>
    void through_buffers(Tag, std::size_t count, strided_ref const& out, Run const& run_one) const {
        bool out_is_pingpong = memory_overlap_of(out, source_) == memory_overlap::none;
        for (strided_ref const& a : arrays_)
            out_is_pingpong = out_is_pingpong && memory_overlap_of(out, a) == memory_overlap::none;
        std::size_t const last = count - 1;
        auto const where = [&](std::size_t s) -> int {
            if (s == last) return -1;
            if (out_is_pingpong) return (last - s) % 2 == 0 ? -1 : 0;
            return static_cast<int>(s % 2);
        };
        std::optional<device_array> temporary[2];
        auto const buffer = [&](int k) -> strided_ref {
            if (k < 0) return out;
            if (!temporary[k]) temporary[k].emplace(make_device_array<tag_device_v<Tag>>(source_, "lazy intermediate"));
            return temporary[k]->ref();
        };
        for (std::size_t s = 0; s < count; ++s) {
            strided_ref const in = s == 0 ? source_ : buffer(where(s - 1));
            run_one(s, in, buffer(where(s)));
        }
    }

    template <std::size_t Capacity, typename Tag>
    void run_segments(Tag tag, strided_ref const& out) const {
        static constexpr segment_plan plan = make_plan(Capacity);
        auto const bound = bound_steps<Tag>();
        through_buffers(tag, plan.count, out, [&](std::size_t s, strided_ref const& in, strided_ref const& target) {
            [&]<std::size_t... S>(std::index_sequence<S...>) {
                ((s == S ? run_segment<plan.cuts[S], plan.cuts[S + 1]>(tag, bound, in, target) : void()), ...);
            }
            (std::make_index_sequence<plan.count>{});
        });
    }

    template <std::size_t Begin, std::size_t End, typename Tag, typename List>
    void run_segment(Tag tag, List const& bound, strided_ref const& in, strided_ref const& target) const {
        constexpr std::size_t first = arrays_before(Begin), count = arrays_before(End) - first;
        detail::chain_segment<List, Begin, End, first> const kernel{bound};
        [&]<std::size_t... K>(std::index_sequence<K...>) {
            switchyard::transform(tag, target, kernel, in, arrays_[first + K]...);
        }
        (std::make_index_sequence<count>{});
    }

    // One kernel per step. A step's kernel depends on the step's type only
    // (an array step reads its array as operand 0), so a chain of a hundred
    // steps of four kinds compiles four kernels, not a hundred.
    template <typename Tag, std::size_t... K>
    void run_steps(Tag tag, strided_ref const& out, std::index_sequence<K...>) const {
        auto const bound = bound_steps<Tag>();
        through_buffers(tag, steps, out, [&](std::size_t s, strided_ref const& in, strided_ref const& target) {
            ((s == K ? run_step<K>(tag, detail::slot_value<K>(bound).rebased(), in, target) : void()), ...);
        });
    }

    template <std::size_t K, typename Tag, typename Step>
    void run_step(Tag tag, Step const& step, strided_ref const& in, strided_ref const& target) const {
        detail::chain_segment<detail::step_list<Step>, 0, 1, 0> const kernel{detail::make_step_list(step)};
        if constexpr (Step::arrays == 0)
            switchyard::transform(tag, target, kernel, in);
        else
            switchyard::transform(tag, target, kernel, in, arrays_[arrays_before(K)]);
    }

    strided_ref source_;
    detail::step_list<Steps...> chain_;
    std::array<strided_ref, array_operands> arrays_;
};

// The start of a chain over x.
inline lazy_chain<> lazy(strided_ref const& x) { return lazy_chain<>(x, {}, {}); }

// A lazy chain ending in a reduction: chain.sum(), chain.reduce(combine,
// dims, keepdim), dot(x, y). Nothing runs until compute() or to_host():
//
//     float s = sy::lazy(x).mul(y).sum().item<float>();     // one fused kernel
//     sy::lazy_result rows = sy::lazy(x).relu().sum(sy::dims{-1}).compute();
//
// The reduction is transform_reduce (reduce.h) with the chain as its map:
// one read of x and each array, the chain's values in registers, on every
// device, with the reduction's fixed order. Its output has the chain's
// shape reduced over the dims (kept at size 1 with keepdim), its dtype and
// device.
template <typename Chain, typename Combine>
class lazy_reduction {
public:
    lazy_reduction(Chain const& chain, Combine const& combine, dims const& over, bool keepdim)
        : chain_(chain), combine_(combine), over_(over), keepdim_(keepdim) {}

    // The result's shape, without data.
    strided_ref shape() const { return detail::reduced_shape("lazy reduction", chain_.source(), over_, keepdim_); }

    void compute(strided_ref const& out) const {
        chain_.check_operand(out);
        static auto const table = dispatch_table_from_op<runner>("lazy reduction");
        table.select(dispatch_set{out.device, out.type})(*this, out);
    }
    lazy_result compute() const {
        lazy_result result = chain_.new_result(shape());
        compute(result.ref());
        return result;
    }
    template <typename T>
    std::vector<T> to_host() const {
        return compute().template to_host<T>();
    }
    // The one value of a reduction to a single element (all dims).
    template <typename T>
    T item() const {
        std::vector<T> const v = to_host<T>();
        if (v.size() != 1)
            throw std::invalid_argument("lazy reduction: item() of a result with " + std::to_string(v.size()) +
                                        " elements; reduce all dimensions, or read them with to_host()");
        return v[0];
    }

    // The dispatch table's op; public for nvcc, as lazy_chain::runner.
    struct runner {
        template <typename Tag>
        static void op(Tag tag, lazy_reduction const& r, strided_ref const& out) {
            r.chain_.reduce_into(tag, out, r.over_, r.combine_);
        }
        using space = typename Chain::runner::space;
        using subspaces = detail::coverage_where<detail::reduction_runs_on, float_dtype_axis>;
        using dispatcher = dispatch_table<space, void(lazy_reduction const&, strided_ref const&)>;
    };

private:
    Chain chain_;
    Combine combine_;
    dims over_;
    bool keepdim_;
};

// x . y: the sum of x * y over every element (y broadcasts to x's shape), as
// one fused reduction: dot(x, y).item<float>().
inline auto dot(strided_ref const& x, strided_ref const& y) { return lazy(x).mul(y).sum(); }

}  // namespace switchyard
