// transform_reduce(tag, out, over, combine, f, in...): a reduction of a map
// over explicit operands, in the style of transform (switchyard/transform.h).
// f is a scalar function of compute-type values, one per input; its results
// are folded by combine over the dimensions `over` names:
//
//     using C = sy::compute_t<Tag>;             // float for f16 and bf16
//     // sum of squares over the last dimension: out [R] from x [R, C]
//     sy::transform_reduce(tag, out, sy::dims{-1}, sy::sum,
//                          [] SWITCHYARD_HOST_DEVICE(C v) { return v * v; }, x);
//     // a dot product: out [] from x [N] and y [N]
//     sy::transform_reduce(tag, out, sy::all_dims, sy::sum,
//                          [] SWITCHYARD_HOST_DEVICE(C a, C b) { return a * b; }, x, y);
//     // without a map: the largest value per column
//     sy::reduce(tag, out, sy::dims{0}, sy::amax, x);
//     // the int64 index of each row's largest value (torch.argmax(x, -1))
//     sy::reduce(tag, index_out, sy::dims{-1}, sy::argmax, x);
//
// Inputs broadcast together by PyTorch's rules; dims (negative counts from
// the end) name dimensions of that shape, or all_dims every one. out has
// that shape with the reduced dimensions removed, or kept at size 1
// (keepdim): the reduction writes one value per element of out. Every
// operand has the tag's device and dtype; values accumulate in
// compute_t<Tag> (float for f16 and bf16) and are stored once, rounded.
//
// combine is sy::sum, sy::prod, sy::amin, sy::amax, sy::argmin, sy::argmax
// or sy::combine(op, identity) (core/combine.h): associative and
// commutative. An empty reduction gives the identity; amin, amax, argmin
// and argmax refuse it. argmin and argmax write an int64 output (whatever
// the tag's dtype): the row-major index among the reduced dimensions of the
// first smallest or largest value (or NaN), as torch.argmin/argmax do for
// one dimension or all (on WebGPU and Metal written as two 32-bit words).
//
// Order: the values of a reduction are combined in an order fixed by the
// shapes and strides alone, pairwise over blocks (docs/reduce.md), so a
// result is bitwise the same run to run whatever the number of threads; a
// float sum's rounding error grows with the logarithm of its length, not
// the length. That is the only mode, so determinism::required in the tag
// costs nothing.
//
// Devices: the CPU (device/cpu/reduce.h); when this file is compiled by
// nvcc, CUDA (device/cuda/reduce.h; f and a user's combine op must then be
// SWITCHYARD_HOST_DEVICE); with SWITCHYARD_WITH_WEBGPU, WebGPU
// (device/webgpu/reduce.h: f and a user's combine are traced, so they
// compute as transform's kernels do, with sy::select for branches); with
// SWITCHYARD_WITH_METAL, Metal the same way (device/metal/reduce.h; both
// are shader/reduce.h's passes, in WGSL and MSL).
//
// Errors (std::invalid_argument, naming the call, transform_reduce or reduce,
// and the operand or the dimension): an
// operand on another device or of another dtype than the tag's (an argmin
// or argmax output that is not i64), inputs that
// do not broadcast, a dimension out of range or repeated, an output of
// another shape than the reduced one or sharing memory with an input, amin
// amax, argmin or argmax over zero elements; on WebGPU and Metal also those
// shader/reduce.h lists (dtype, buffer, 32-bit limits).
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

#include "switchyard/core/combine.h"
#include "switchyard/core/dtype.h"
#include "switchyard/core/enums.h"
#include "switchyard/core/tag.h"
#include "switchyard/core/tag_device.h"
#include "switchyard/device/cpu/reduce.h"
#include "switchyard/kernel_types.h"
#include "switchyard/transform.h"
#include "switchyard/view/reduction_layout.h"
#include "switchyard/view/strided_ref.h"
#if defined(__CUDACC__)
#include "switchyard/device/cuda/reduce.h"
#endif
#if defined(SWITCHYARD_WITH_WEBGPU)
#include "switchyard/device/webgpu/reduce.h"
#endif
#if defined(SWITCHYARD_WITH_METAL)
#include "switchyard/device/metal/reduce.h"
#endif

namespace switchyard {

namespace detail {

// Whether transform_reduce runs on device d in this translation unit: the
// CPU always, CUDA under nvcc, WebGPU and Metal where their reductions are
// included (SWITCHYARD_WITH_WEBGPU, SWITCHYARD_WITH_METAL).
constexpr bool reduction_runs_on(device_kind d) noexcept {
    switch (d) {
        case device_kind::cpu: return true;
#if defined(__CUDACC__)
        case device_kind::cuda: return true;
#endif
#if defined(SWITCHYARD_HAS_WEBGPU_REDUCE)
        case device_kind::webgpu: return true;
#endif
#if defined(SWITCHYARD_HAS_METAL_REDUCE)
        case device_kind::metal: return true;
#endif
        default: return false;
    }
}

// transform_reduce, naming `op` in its errors.
template <any_tag Tag, typename Out, typename Combine, typename F, typename... In>
void run_reduction(char const* op, Tag tag, Out const& out, dims const& over, Combine const& combine, F const& f,
                   In const&... in) {
    constexpr int NIn = static_cast<int>(sizeof...(In));
    constexpr bool indexed = is_indexed_combine_v<Combine>;
    static_assert(NIn >= 1, "transform_reduce: pass at least one input");
    static_assert(1 + NIn <= max_operands, "transform_reduce: at most 16 operands (the output and inputs together)");
    static_assert(!indexed || 2 + NIn <= max_operands,
                  "transform_reduce: argmin and argmax take at most 14 inputs (their index is one more operand)");
    static_assert((!detail::is_mapped_v<In> && ...),
                  "transform_reduce: inputs are read as they are; compute a mapped input's values inside f");
    using C = compute_t<Tag>;
    using S = storage_t<Tag>;
    constexpr dtype type = core_dtype_v<detail::tag_dtype<Tag>::value>;
    constexpr device_kind device = tag_device_v<Tag>;
    static_assert(reduction_combine_for<Combine, C>,
                  "transform_reduce: combine must be sy::sum, sy::prod, sy::amin, sy::amax, sy::argmin, sy::argmax "
                  "or sy::combine(op, identity), with op callable on two compute_t<Tag> values");
    static_assert(std::is_invocable_v<F const&, detail::per_input<C, In>...>,
                  "transform_reduce: f must be callable with one compute_t<Tag> value per input");
    static_assert(std::is_convertible_v<std::invoke_result_t<F const&, detail::per_input<C, In>...>, C>,
                  "transform_reduce: f must return one value convertible to compute_t<Tag>");

    strided_ref const out_ref = detail::operand_ref(out, "output");
    strided_ref const ins[NIn] = {detail::operand_ref(in, "input")...};
    if constexpr (indexed) {
        // The index output has its own dtype; device checks as for the rest.
        detail::check_operand_device<Tag>(out_ref, out_ref, "output", op);
        if (out_ref.type != dtype::i64)
            throw std::invalid_argument(std::string(op) + ": output " + detail::ref_label(out_ref.name) +
                                        " has dtype " + std::string(to_string(out_ref.type)) + " but " + Combine::name +
                                        " writes indices, which need dtype i64");
    } else {
        detail::check_operand<Tag>(out_ref, out_ref, "output", op);
    }
    for (int k = 0; k < NIn; ++k) detail::check_operand<Tag>(ins[k], out_ref, "input", op);
    reduction_layout const layout = make_reduction_layout(op, out_ref, ins, NIn, over, indexed);
    if constexpr (!Combine::has_identity) {
        if (layout.reduced_numel == 0)
            detail::layout_fail(op, std::string(Combine::name) + " over zero elements (dims " +
                                        detail::dims_string(over) + " of the input shape " +
                                        detail::shape_string(detail::broadcast_inputs_shape(op, ins, NIn)) +
                                        (indexed ? ") has no index to give; reduce a non-empty dimension"
                                                 : ") has no identity; reduce a non-empty dimension or use a "
                                                   "combine with one"));
    }

    if constexpr (device == device_kind::cpu) {
        detail::cpu_transform_reduce<type, S, C, NIn>(tag, combine, f, layout);
    } else if constexpr (device == device_kind::cuda) {
#if defined(__CUDACC__)
        detail::cuda_transform_reduce<type, S, C, NIn>(op, combine, f, layout, out_ref.device_index);
#else
        static_assert(device != device_kind::cuda,
                      "transform_reduce: the tag names device cuda, which needs this file compiled by nvcc");
#endif
    } else if constexpr (device == device_kind::webgpu) {
#if defined(SWITCHYARD_HAS_WEBGPU_REDUCE)
        detail::webgpu_transform_reduce<type, NIn>(op, combine, f, layout, out_ref, ins);
#else
        static_assert(device != device_kind::webgpu,
                      "transform_reduce: the tag names device webgpu, which needs SWITCHYARD_WITH_WEBGPU defined "
                      "(link the switchyard::webgpu CMake target)");
#endif
    } else if constexpr (device == device_kind::metal) {
#if defined(SWITCHYARD_HAS_METAL_REDUCE)
        detail::metal_transform_reduce<type, NIn>(op, combine, f, layout, out_ref, ins);
#else
        static_assert(device != device_kind::metal,
                      "transform_reduce: the tag names device metal, which needs SWITCHYARD_WITH_METAL defined "
                      "(link the switchyard::metal CMake target)");
#endif
    } else {
        static_assert(device == device_kind::cpu, "transform_reduce: a tag of an unknown device");
    }
}

}  // namespace detail

template <any_tag Tag, typename Out, typename Combine, typename F, typename... In>
void transform_reduce(Tag tag, Out const& out, dims const& over, Combine const& combine, F const& f, In const&... in) {
    detail::run_reduction("transform_reduce", tag, out, over, combine, f, in...);
}

// A reduction of the input's own values: transform_reduce with no map.
template <any_tag Tag, typename Out, typename Combine, typename In>
void reduce(Tag tag, Out const& out, dims const& over, Combine const& combine, In const& in) {
    detail::run_reduction("reduce", tag, out, over, combine, detail::identity_map{}, in);
}

}  // namespace switchyard
