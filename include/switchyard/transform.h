// transform(tag, out, f, in...): the elementwise entry point with explicit
// operands. f is a scalar function of compute-type values, one per input,
// returning the output's value (or results{...}, one per output):
//
//     using C = sy::compute_t<Tag>;            // float for f16 and bf16
//     sy::transform(tag, out, [=] SWITCHYARD_HOST_DEVICE (C x, C y) {
//         return x * sy::sigmoid(y);
//     }, x, y);
//
//     sy::transform(tag, sy::outputs(lo, hi), [=] SWITCHYARD_HOST_DEVICE (C x) {
//         return sy::results{x - C(1), x + C(1)};
//     }, x);
//
// Operands are strided_refs (or anything with a strided_source, such as a
// torch::Tensor), each with its own sizes and strides. Every operand has the
// tag's device and dtype; the library loads storage values, converts them
// to compute_t<Tag>, calls f, and converts and stores the results. Inputs
// broadcast to the outputs' shape by PyTorch's rules, and each operand is
// read by its own layout (contiguous, broadcast or strided:
// view/elementwise_layout.h), so an op has no device-, layout- or
// rank-specific code and no index. Up to max_operands (16) operands.
//
// Devices: the CPU runs blocks of converted values through a vectorized loop
// (device/cpu/transform.h); CUDA, when this file is compiled by nvcc, uses
// 16-byte loads and stores wherever the operands allow
// (device/cuda/transform.h); WebGPU and Metal trace f once and run it as
// WGSL or MSL, vec4 where every operand is contiguous (shader/transform.h,
// device/webgpu/transform.h, device/metal/transform.h). f must be
// SWITCHYARD_HOST_DEVICE for CUDA and written with switchyard's math and
// select (no `if` on values) to run on shader devices.
//
// Hoisting: an input passed as sy::mapped(gate, g) is read as g(gate), its
// value rounded to the operand's dtype (what PyTorch's x * torch.sigmoid(gate)
// computes). When that input is broadcast (it has fewer elements than the
// output) or the device is a shader device, g runs once per element of the
// input itself, into device memory of the input's shape (device_array.h), and
// f reads that; otherwise g runs inside f's kernel, fused. So work that
// depends only on a broadcast operand is done once, not once per output
// element:
//
//     auto const gate_sigmoid = [] SWITCHYARD_HOST_DEVICE(C g) { return sy::sigmoid(g); };
//     sy::transform(tag, out, [] SWITCHYARD_HOST_DEVICE(C x, C s) { return x * s; },
//                   x, sy::mapped(gate, gate_sigmoid));
//
// An op with mapped inputs compiles its kernel twice (fused and hoisted).
//
// Errors (std::invalid_argument, naming the operand): an operand on another
// device or of another dtype than the tag's, shapes that do not broadcast,
// outputs that are broadcast or overlap an input other than exactly in place.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

#include "switchyard/core/axes.h"
#include "switchyard/core/dtype.h"
#include "switchyard/core/enums.h"
#include "switchyard/core/results.h"
#include "switchyard/core/tag.h"
#include "switchyard/core/tag_device.h"
#include "switchyard/device_array.h"
#include "switchyard/device/cpu/transform.h"
#include "switchyard/kernel_types.h"
#include "switchyard/shader/trace.h"
#include "switchyard/view/elementwise_layout.h"
#include "switchyard/view/strided_ref.h"
#if defined(__CUDACC__)
#include "switchyard/device/cuda/transform.h"
#endif
#if defined(SWITCHYARD_WITH_WEBGPU)
#include "switchyard/device/webgpu/transform.h"
#endif
#if defined(SWITCHYARD_WITH_METAL)
#include "switchyard/device/metal/transform.h"
#endif

namespace switchyard {

// The outputs of a transform with several of them: outputs(lo, hi).
template <std::size_t N>
struct output_list {
    strided_ref refs[N];
};

namespace detail {

template <typename T>
strided_ref operand_ref(T const& operand, char const* name) {
    if constexpr (std::is_same_v<T, strided_ref>) {
        return operand;
    } else {
        static_assert(strided_source_type<T>,
                      "transform: an operand must be a strided_ref or a type with a strided_source (such as "
                      "torch::Tensor with switchyard/torch.h)");
        return strided_source<T>::ref(operand, name);
    }
}

// C, once per input (a pack expansion's element type).
template <typename C, typename>
using per_input = C;

// r is on the tag's device, and on first's device index.
template <typename Tag>
void check_operand_device(strided_ref const& r, strided_ref const& first, char const* role, char const* op) {
    constexpr device_kind device = tag_device_v<Tag>;
    if (r.device != device)
        throw std::invalid_argument(std::string(op) + ": " + role + " " + ref_label(r.name) + " is on " +
                                    std::string(to_string(r.device)) + " but the tag names device " +
                                    std::string(to_string(device)));
    if (r.device_index != first.device_index)
        throw std::invalid_argument(std::string(op) + ": " + role + " " + ref_label(r.name) + " is on " +
                                    std::string(to_string(r.device)) + ":" + std::to_string(r.device_index) + " but " +
                                    ref_label(first.name) + " is on " + std::string(to_string(r.device)) + ":" +
                                    std::to_string(first.device_index));
}

// r is on the tag's device and has the tag's dtype.
template <typename Tag>
void check_operand(strided_ref const& r, strided_ref const& first, char const* role, char const* op = "transform") {
    constexpr dtype type = core_dtype_v<tag_dtype<Tag>::value>;
    check_operand_device<Tag>(r, first, role, op);
    if (r.type != type)
        throw std::invalid_argument(std::string(op) + ": " + role + " " + ref_label(r.name) + " has dtype " +
                                    std::string(to_string(r.type)) + " but the tag's dtype is " +
                                    std::string(to_string(type)));
}

// What the kernel returns for NIn compute values.
template <typename F, typename C, typename Indices>
struct kernel_result;
template <typename F, typename C, std::size_t... K>
struct kernel_result<F, C, std::index_sequence<K...>> {
    template <std::size_t>
    using argument = C;
    static_assert(std::is_invocable_v<F const&, argument<K>...>,
                  "transform: the kernel must be callable with one compute_t<Tag> value per input");
    using type = std::remove_cvref_t<std::invoke_result_t<F const&, argument<K>...>>;
};

template <any_tag Tag, std::size_t NOut, std::size_t NIn, typename F>
void run_transform(Tag tag, strided_ref const (&outs)[NOut], F const& f, strided_ref const* ins) {
    static_assert(NOut + NIn <= max_operands, "transform: at most 16 operands (outputs and inputs together)");
    using C = compute_t<Tag>;
    using S = storage_t<Tag>;
    constexpr dtype type = core_dtype_v<tag_dtype<Tag>::value>;
    constexpr device_kind device = tag_device_v<Tag>;
    using R = typename kernel_result<F, C, std::make_index_sequence<NIn>>::type;
    if constexpr (is_results_v<R>)
        static_assert(
            R::size == NOut,
            "transform: the kernel returns results{...} with a value count that is not the number of outputs");
    else
        static_assert(NOut == 1,
                      "transform: with several outputs the kernel returns results{...}, one value per output");
    for (std::size_t k = 0; k < NOut; ++k) check_operand<Tag>(outs[k], outs[0], "output");
    if constexpr (NIn > 0)  // with no inputs, nvcc warns of an unsigned k < 0
        for (std::size_t k = 0; k < NIn; ++k) check_operand<Tag>(ins[k], outs[0], "input");

    if constexpr (device == device_kind::webgpu) {
#if defined(SWITCHYARD_HAS_WEBGPU_TRANSFORM)
        webgpu_transform<NOut, NIn>(tag, f, outs, ins);
#else
        static_assert(device != device_kind::webgpu,
                      "transform: the tag names device webgpu, which needs SWITCHYARD_WITH_WEBGPU defined (link "
                      "the switchyard::webgpu CMake target)");
#endif
    } else if constexpr (device == device_kind::metal) {
#if defined(SWITCHYARD_HAS_METAL_TRANSFORM)
        metal_transform<NOut, NIn>(tag, f, outs, ins);
#else
        static_assert(device != device_kind::metal,
                      "transform: the tag names device metal, which needs SWITCHYARD_WITH_METAL defined (link the "
                      "switchyard::metal CMake target)");
#endif
    } else {
        elementwise_layout const layout =
            make_elementwise_layout("transform", outs, static_cast<int>(NOut), ins, static_cast<int>(NIn));
        if constexpr (device == device_kind::cpu) {
            cpu_transform<type, S, C, static_cast<int>(NOut), static_cast<int>(NIn)>(tag, f, layout);
        } else if constexpr (device == device_kind::cuda) {
#if defined(__CUDACC__)
            cuda_transform<type, S, C, static_cast<int>(NOut), static_cast<int>(NIn)>(tag, f, layout,
                                                                                      outs[0].device_index);
#else
            static_assert(device != device_kind::cuda,
                          "transform: the tag names device cuda, which needs this file compiled by nvcc");
#endif
        }
    }
}

}  // namespace detail

// Whether this build runs transform on device d: the CPU always, CUDA where
// nvcc compiles this file, WebGPU and Metal where SWITCHYARD_WITH_WEBGPU or
// SWITCHYARD_WITH_METAL is defined (their CMake targets define it).
constexpr bool transform_runs_on(device_kind d) noexcept {
    switch (d) {
        case device_kind::cpu: return true;
#if defined(__CUDACC__)
        case device_kind::cuda: return true;
#endif
#if defined(SWITCHYARD_HAS_WEBGPU_TRANSFORM)
        case device_kind::webgpu: return true;
#endif
#if defined(SWITCHYARD_HAS_METAL_TRANSFORM)
        case device_kind::metal: return true;
#endif
        default: return false;
    }
}

namespace detail {

// Device D's entry of a coverage: D with the dtypes of DtypeAxis it stores,
// if RunsOn(D) holds and any dtypes are left. An entry left out is
// maybe<false, void>: an empty axes<> as its argument would be instantiated
// by the lookup of operator+, and axis<> is an error.
template <device_kind D, typename Stored, bool On>
using device_entry = maybe<On, std::conditional_t<On, axes<axis<D>, typename Stored::type>, void>>;
template <bool (*RunsOn)(device_kind) noexcept, device_kind D, typename DtypeAxis,
          typename Stored = axis_where<DtypeAxis, &shader::device_stores_dtype<D>>>
using device_points = device_entry<D, Stored, RunsOn(D) && Stored::size != 0>;

// Every device where RunsOn holds, each with the dtypes of DtypeAxis it
// stores (transform_coverage; lazy chains' reductions use reduction_runs_on).
template <bool (*RunsOn)(device_kind) noexcept, typename DtypeAxis>
using coverage_where = typename decltype((coverage_list<>{} + device_points<RunsOn, device_kind::cpu, DtypeAxis>{} +
                                          device_points<RunsOn, device_kind::cuda, DtypeAxis>{} +
                                          device_points<RunsOn, device_kind::webgpu, DtypeAxis>{} +
                                          device_points<RunsOn, device_kind::metal, DtypeAxis>{}))::type;

}  // namespace detail

// An op table's coverage for an op written on transform: every device this
// build runs transform on, each with the dtypes of DtypeAxis it stores
// (shader devices: no 64-bit or 8/16-bit integer types; WebGPU no bf16), so
// one op file serves every build without an #if per device:
//
//     using space = sy::axes<sy::full_device_axis, sy::float_dtype_axis>;
//     using subspaces = sy::transform_coverage<sy::float_dtype_axis>;
//
// A device or dtype left out is a dispatch_lookup_error naming it when looked up.
template <typename DtypeAxis>
using transform_coverage = detail::coverage_where<transform_runs_on, DtypeAxis>;

template <typename... T>
output_list<sizeof...(T)> outputs(T const&... out) {
    return {{detail::operand_ref(out, "output")...}};
}

// An input read through g, a function of one compute value: transform reads
// it as g(operand) rounded to the operand's dtype, running g once per element
// of the operand where the operand is broadcast (see the top of this file).
template <typename G>
struct mapped_input {
    strided_ref ref;
    G map;
};

template <typename T, typename G>
mapped_input<G> mapped(T const& operand, G const& map) {
    return {detail::operand_ref(operand, "input"), map};
}

namespace detail {

template <typename T>
inline constexpr bool is_mapped_v = false;
template <typename G>
inline constexpr bool is_mapped_v<mapped_input<G>> = true;

struct identity_map {
    template <typename V>
    SWITCHYARD_HOST_DEVICE V operator()(V v) const {
        return v;
    }
};

template <typename T>
strided_ref input_ref(T const& in) {
    if constexpr (is_mapped_v<T>)
        return in.ref;
    else
        return operand_ref(in, "input");
}

template <typename T>
auto input_map(T const& in) {
    if constexpr (is_mapped_v<T>)
        return in.map;
    else
        return identity_map{};
}

// f with each input's map applied first (fused), the mapped value rounded to
// the storage type as the hoisted path stores it, so both give equal results
// (up to the compiler contracting g's and f's operations into an FMA, which
// rounding to a narrower storage type prevents but f32 and f64 do not).
template <typename S, typename C, typename F, typename... M>
struct mapped_kernel {
    F f;
    results<M...> maps;

    template <typename... V>
    SWITCHYARD_HOST_DEVICE auto operator()(V... v) const {
        return call(std::index_sequence_for<M...>{}, v...);
    }

private:
    template <std::size_t... K, typename... V>
    SWITCHYARD_HOST_DEVICE auto call(std::index_sequence<K...>, V... v) const {
        return f(apply<K>(v)...);
    }
    template <std::size_t K>
    SWITCHYARD_HOST_DEVICE C apply(C v) const {
        using map = std::remove_cvref_t<decltype(maps.template get<K>())>;
        if constexpr (std::is_same_v<map, identity_map>)
            return v;
        else
            return static_cast<C>(static_cast<S>(static_cast<C>(maps.template get<K>()(v))));
    }
};

template <any_tag Tag, std::size_t NOut, typename F, typename... In>
void transform_inputs(Tag tag, strided_ref const (&outs)[NOut], F const& f, In const&... in) {
    constexpr std::size_t NIn = sizeof...(In);
    strided_ref ins[NIn > 0 ? NIn : 1] = {input_ref(in)...};
    if constexpr (!(is_mapped_v<In> || ...)) {
        run_transform<Tag, NOut, NIn>(tag, outs, f, ins);
    } else {
        using C = compute_t<Tag>;
        using S = storage_t<Tag>;
        constexpr device_kind device = tag_device_v<Tag>;
        static_assert(((!is_mapped_v<In> ||
                        std::is_convertible_v<std::invoke_result_t<decltype(input_map(in)) const&, C>, C>)&&...),
                      "transform: the function of a mapped input must take one compute_t<Tag> value and return one");
        constexpr bool is_mapped[] = {is_mapped_v<In>...};
        constexpr bool shader = tag_on_shader_device<Tag>;
        bool hoist = shader;
        for (std::size_t k = 0; k < NIn; ++k)
            if (is_mapped[k] && ins[k].numel() < outs[0].numel()) hoist = true;
        if constexpr (!shader) {
            if (!hoist) {
                using kernel = mapped_kernel<S, C, F, decltype(input_map(in))...>;
                run_transform<Tag, NOut, NIn>(tag, outs, kernel{f, {input_map(in)...}}, ins);
                return;
            }
        }
        // Every check first, on the operands as passed, so nothing runs for a
        // call that fails and both paths accept the same calls.
        for (std::size_t o = 0; o < NOut; ++o) check_operand<Tag>(outs[o], outs[0], "output");
        for (std::size_t i = 0; i < NIn; ++i) check_operand<Tag>(ins[i], outs[0], "input");
        (void)make_elementwise_layout("transform", outs, static_cast<int>(NOut), ins, static_cast<int>(NIn));
        // Each mapped input's values, computed once per element of its own.
        std::optional<device_array> hoisted[NIn];
        std::size_t k = 0;
        auto const hoist_input = [&](auto const& input) {
            if constexpr (is_mapped_v<std::remove_cvref_t<decltype(input)>>) {
                hoisted[k].emplace(make_device_array<device>(ins[k], ins[k].name));
                strided_ref const outs_k[1] = {hoisted[k]->ref()};
                run_transform<Tag, 1, 1>(tag, outs_k, input.map, &ins[k]);
                ins[k] = hoisted[k]->ref();
            }
            ++k;
        };
        (hoist_input(in), ...);
        run_transform<Tag, NOut, NIn>(tag, outs, f, ins);
    }
}

}  // namespace detail

// One output.
template <any_tag Tag, typename Out, typename F, typename... In>
void transform(Tag tag, Out const& out, F const& f, In const&... in) {
    strided_ref const outs[1] = {detail::operand_ref(out, "output")};
    detail::transform_inputs<Tag, 1>(tag, outs, f, in...);
}

// Several outputs: transform(tag, outputs(a, b), f, in...), f returning results{...}.
template <any_tag Tag, std::size_t NOut, typename F, typename... In>
void transform(Tag tag, output_list<NOut> const& outs, F const& f, In const&... in) {
    detail::transform_inputs<Tag, NOut>(tag, outs.refs, f, in...);
}

}  // namespace switchyard
