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
// (device/cuda/transform.h); WebGPU traces f once and runs it as WGSL, vec4
// where every operand is contiguous (device/webgpu/transform.h). f must be
// SWITCHYARD_HOST_DEVICE for CUDA and written with switchyard's math and
// select (no `if` on values) to run on shader devices.
//
// Errors (std::invalid_argument, naming the operand): an operand on another
// device or of another dtype than the tag's, shapes that do not broadcast,
// outputs that are broadcast or overlap an input other than exactly in place.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

#include "switchyard/core/dtype.h"
#include "switchyard/core/enums.h"
#include "switchyard/core/results.h"
#include "switchyard/core/tag.h"
#include "switchyard/core/tag_device.h"
#include "switchyard/device/cpu/transform.h"
#include "switchyard/kernel_types.h"
#include "switchyard/view/elementwise_layout.h"
#include "switchyard/view/strided_ref.h"
#if defined(__CUDACC__)
#include "switchyard/device/cuda/transform.h"
#endif
#if defined(SWITCHYARD_WITH_WEBGPU)
#include "switchyard/device/webgpu/transform.h"
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

template <typename Tag>
void check_operand(strided_ref const& r, strided_ref const& first, char const* role) {
    constexpr device_kind device = tag_device_v<Tag>;
    constexpr dtype type = core_dtype_v<tag_dtype<Tag>::value>;
    if (r.device != device)
        throw std::invalid_argument(std::string("transform: ") + role + " " + ref_label(r.name) + " is on " +
                                    std::string(to_string(r.device)) + " but the tag names device " +
                                    std::string(to_string(device)));
    if (r.device_index != first.device_index)
        throw std::invalid_argument(std::string("transform: ") + role + " " + ref_label(r.name) + " is on " +
                                    std::string(to_string(r.device)) + ":" + std::to_string(r.device_index) + " but " +
                                    ref_label(first.name) + " is on " + std::string(to_string(r.device)) + ":" +
                                    std::to_string(first.device_index));
    if (r.type != type)
        throw std::invalid_argument(std::string("transform: ") + role + " " + ref_label(r.name) + " has dtype " +
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
    for (std::size_t k = 0; k < NIn; ++k) check_operand<Tag>(ins[k], outs[0], "input");

    if constexpr (device == device_kind::webgpu) {
#if defined(SWITCHYARD_HAS_WEBGPU_TRANSFORM)
        webgpu_transform<NOut, NIn>(tag, f, outs, ins);
#else
        static_assert(device != device_kind::webgpu,
                      "transform: the tag names device webgpu, which needs SWITCHYARD_WITH_WEBGPU defined (link "
                      "the switchyard::webgpu CMake target)");
#endif
    } else {
        elementwise_layout const layout =
            make_elementwise_layout("transform", outs, static_cast<int>(NOut), ins, static_cast<int>(NIn));
        if constexpr (device == device_kind::cpu) {
            cpu_transform<type, S, C, static_cast<int>(NOut), static_cast<int>(NIn)>(tag, f, layout);
        } else if constexpr (device == device_kind::cuda) {
#if defined(__CUDACC__)
            cuda_transform<S, C, static_cast<int>(NOut), static_cast<int>(NIn)>(tag, f, layout, outs[0].device_index);
#else
            static_assert(device != device_kind::cuda,
                          "transform: the tag names device cuda, which needs this file compiled by nvcc");
#endif
        } else {
            static_assert(device != device_kind::metal,
                          "transform: metal is not implemented in this version (no MSL emitter or Metal device)");
        }
    }
}

}  // namespace detail

template <typename... T>
output_list<sizeof...(T)> outputs(T const&... out) {
    return {{detail::operand_ref(out, "output")...}};
}

// One output.
template <any_tag Tag, typename Out, typename F, typename... In>
void transform(Tag tag, Out const& out, F const& f, In const&... in) {
    strided_ref const outs[1] = {detail::operand_ref(out, "output")};
    strided_ref const ins[sizeof...(In) > 0 ? sizeof...(In) : 1] = {detail::operand_ref(in, "input")...};
    detail::run_transform<Tag, 1, sizeof...(In)>(tag, outs, f, ins);
}

// Several outputs: transform(tag, outputs(a, b), f, in...), f returning results{...}.
template <any_tag Tag, std::size_t NOut, typename F, typename... In>
void transform(Tag tag, output_list<NOut> const& outs, F const& f, In const&... in) {
    strided_ref const ins[sizeof...(In) > 0 ? sizeof...(In) : 1] = {detail::operand_ref(in, "input")...};
    detail::run_transform<Tag, NOut, sizeof...(In)>(tag, outs.refs, f, ins);
}

}  // namespace switchyard
