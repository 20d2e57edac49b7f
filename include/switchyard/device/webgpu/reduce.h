// transform_reduce on WebGPU: the runner behind switchyard/reduce.h.
//
// The map f and a user's combine are traced once on symbolic arguments
// (shader/trace.h) and emitted as WGSL functions; the built-in combines are
// written directly. Each output element's reduced values are cut into
// blocks of webgpu_reduce_block elements, one workgroup per (output, block)
// (shader/wgsl_reduce.h). One block per output stores straight to the
// output; more store partials to a scratch buffer that further passes
// reduce the same way, so the order, and with it the result's bits, depend
// only on the shape. Every pass is recorded into the device's open encoder:
// nothing is submitted until sync() or a readback.
//
// Dtypes: f32, i32, and f16 where the adapter has shader-f16 (accumulated
// in f32, partials too). Refused, naming the op and the operand: other
// dtypes, an operand that is not a live buffer of the current device, a
// negative stride, and more elements or blocks than 32-bit indices reach.
// An empty reduction binds only its output and writes the identity. min and max
// propagate NaN as far as the shader compiler keeps `a != a` (WGSL leaves
// NaN behaviour to the implementation).
#pragma once

#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "switchyard/core/combine.h"
#include "switchyard/core/dtype.h"
#include "switchyard/device/webgpu.h"
#include "switchyard/device/webgpu/current_device.h"
#include "switchyard/shader/math.h"
#include "switchyard/shader/trace.h"
#include "switchyard/shader/value.h"
#include "switchyard/shader/wgsl.h"
#include "switchyard/shader/wgsl_reduce.h"
#include "switchyard/view/reduction_layout.h"

#define SWITCHYARD_HAS_WEBGPU_REDUCE 1

namespace switchyard::detail {

// Reduced elements per workgroup: 32 per invocation.
inline constexpr std::int64_t webgpu_reduce_block = 32 * shader::wgsl_workgroup_size;

// The WGSL of a built-in combine, or of a user's traced on two arguments.
template <typename Acc, typename Combine>
std::string webgpu_combine_function(Combine const& combine, bool has_f16, std::vector<std::uint32_t>& uniforms,
                                    std::vector<std::string>& helpers, bool& uses_f16) {
    std::string const t = shader::detail::wgsl_type(shader::scalar_of<Acc>);
    auto body = [&](std::string const& expr) {
        return "fn sy_combine(a0: " + t + ", a1: " + t + ") -> " + t + " {\n    return " + expr + ";\n}\n";
    };
    if constexpr (std::is_same_v<Combine, sum_combine>) {
        return body("a0 + a1");
    } else if constexpr (std::is_same_v<Combine, prod_combine>) {
        return body("a0 * a1");
    } else if constexpr (std::is_same_v<Combine, max_combine>) {
        return body("select(a1, a0, a0 > a1 || a0 != a0)");
    } else if constexpr (std::is_same_v<Combine, min_combine>) {
        return body("select(a1, a0, a0 < a1 || a0 != a0)");
    } else {
        using V = shader::value<Acc>;
        shader::trace t_combine("webgpu", 0, has_f16);
        std::int32_t result = -1;
        {
            shader::trace_scope const scope(t_combine);
            auto arg = [&](std::uint32_t k) {
                return V::from_node(t_combine.add({shader::op::arg, shader::scalar_of<Acc>, -1, -1, -1, k}));
            };
            V const r = static_cast<V>(combine(arg(0), arg(1)));
            result = r.node_in(t_combine);
        }
        std::vector<shader::scalar> const args(2, shader::scalar_of<Acc>);
        uses_f16 = shader::uses_f16(t_combine);
        return shader::emit_wgsl_function(t_combine, result, "sy_combine", args, uniforms, helpers);
    }
}

// One pass's layout: sizes, and per operand (the output first) strides.
struct webgpu_reduce_pass {
    shader::wgsl_reduction shape;
    std::int64_t kept_numel = 0, reduced_numel = 0;
    std::vector<std::int64_t> kept_sizes, reduced_sizes;
    std::vector<std::vector<std::int64_t>> kept_strides, reduced_strides;  // [operand][dim]
    std::vector<void*> buffers;                                            // [operand]
    std::vector<std::uint64_t> bytes;                                      // [operand]
};

template <typename Acc, typename Combine>
void webgpu_run_pass(webgpu_device& device, webgpu_reduce_pass const& pass, std::string const& map,
                     Combine const& combine, std::vector<std::uint32_t> map_uniforms,
                     std::vector<std::string> helpers) {
    shader::wgsl_reduction const& r = pass.shape;
    std::int64_t const splits = pass.reduced_numel > webgpu_reduce_block
                                    ? (pass.reduced_numel + webgpu_reduce_block - 1) / webgpu_reduce_block
                                    : 1;
    std::vector<std::uint32_t> words(shader::wgsl_reduction_layout_words(r), 0u);
    words[0] = static_cast<std::uint32_t>(pass.kept_numel * splits);
    words[1] = static_cast<std::uint32_t>(pass.reduced_numel);
    words[2] = static_cast<std::uint32_t>(splits);
    words[3] = static_cast<std::uint32_t>(webgpu_reduce_block);
    words[4] = shader::uniform_word(combine.template identity<Acc>());
    for (std::int32_t d = 0; d < r.kept_rank; ++d)
        words[shader::wgsl_kept_size_word(r, d)] = static_cast<std::uint32_t>(pass.kept_sizes[std::size_t(d)]);
    for (std::int32_t d = 0; d < r.reduced_rank; ++d)
        words[shader::wgsl_reduced_size_word(r, d)] = static_cast<std::uint32_t>(pass.reduced_sizes[std::size_t(d)]);
    for (std::size_t k = 0; k < pass.kept_strides.size(); ++k) {
        auto const operand = static_cast<std::int32_t>(k);
        for (std::int32_t d = 0; d < r.kept_rank; ++d)
            words[shader::wgsl_kept_stride_word(r, operand, d)] =
                static_cast<std::uint32_t>(pass.kept_strides[k][std::size_t(d)]);
        for (std::int32_t d = 0; d < r.reduced_rank; ++d)
            words[shader::wgsl_reduced_stride_word(r, operand, d)] =
                static_cast<std::uint32_t>(pass.reduced_strides[k][std::size_t(d)]);
    }
    // The map's words follow the layout; emit_wgsl_function numbered them so.
    words.insert(words.end(), map_uniforms.begin(), map_uniforms.end());
    bool combine_f16 = false;
    std::string const combine_text =
        webgpu_combine_function<Acc>(combine, device.has_f16(), words, helpers, combine_f16);

    webgpu_reduce_pass const* p = &pass;
    std::int64_t const partial_count = pass.kept_numel * splits;
    void* partials = nullptr;
    shader::wgsl_reduction shape = r;
    shape.f16_functions = shape.f16_functions || combine_f16;
    shape.to_partials = splits > 1;
    if (shape.to_partials) shape.out_type = r.acc_type;  // partials keep the accumulator's precision
    try {
        std::vector<webgpu_binding> bindings;
        bindings.push_back({p->buffers[0], p->bytes[0]});
        if (shape.to_partials) {
            partials = device.alloc(static_cast<std::size_t>(partial_count) * sizeof(Acc));
            bindings[0] = {partials, static_cast<std::uint64_t>(partial_count) * sizeof(Acc)};
        }
        for (std::size_t k = 1; k < p->buffers.size(); ++k) {
            auto const slot = static_cast<std::size_t>(shape.input_slot[k - 1]);
            if (bindings.size() <= slot) bindings.resize(slot + 1);
            bindings[slot] = {p->buffers[k], p->bytes[k]};
        }
        device.bind_check(bindings);
        std::string const text = shader::emit_wgsl_reduction(shape, map, combine_text, helpers, words.size());
        WGPUComputePipeline const pipeline = device.cached_pipeline(text);
        device.dispatch(pipeline, bindings, std::as_bytes(std::span(words)), static_cast<std::uint64_t>(partial_count));
        if (!shape.to_partials) return;

        // The next pass reduces each output's partials (contiguous, one row
        // of `splits` per output) with the same combine and no map.
        webgpu_reduce_pass next;
        next.shape.out_type = r.out_type;
        next.shape.in_type = r.acc_type;
        next.shape.acc_type = r.acc_type;
        next.shape.input_slot = {1};
        next.shape.kept_rank = r.kept_rank;
        next.shape.reduced_rank = 1;
        next.kept_numel = pass.kept_numel;
        next.reduced_numel = splits;
        next.kept_sizes = pass.kept_sizes;
        next.reduced_sizes = {splits};
        std::vector<std::int64_t> partial_strides(pass.kept_sizes.size());
        std::int64_t step = splits;
        for (std::size_t d = partial_strides.size(); d-- > 0;) {
            partial_strides[d] = step;
            step *= pass.kept_sizes[d];
        }
        next.kept_strides = {pass.kept_strides[0], partial_strides};
        next.reduced_strides = {{0}, {1}};
        next.buffers = {pass.buffers[0], partials};
        next.bytes = {pass.bytes[0], static_cast<std::uint64_t>(partial_count) * sizeof(Acc)};
        std::string const t = shader::detail::wgsl_type(shader::scalar_of<Acc>);
        std::string const identity_map = "fn sy_map(a0: " + t + ") -> " + t + " {\n    return a0;\n}\n";
        webgpu_run_pass<Acc>(device, next, identity_map, combine, {}, {});
    } catch (...) {
        device.free(partials);
        throw;
    }
    // Recorded work still reads the partials: the pool hands the buffer out
    // again only to later recordings, which the queue orders after these.
    device.free(partials);
}

template <dtype D, int NIn, typename Combine, typename F>
void webgpu_transform_reduce(char const* op, Combine const& combine, F const& f, reduction_layout const& layout,
                             strided_ref const& out_ref, strided_ref const* ins) {
    using S = dtype_storage_t<D>;
    using Acc = dtype_compute_t<D>;
    auto fail = [&](std::string const& what) { throw std::invalid_argument(std::string(op) + " on webgpu: " + what); };
    constexpr shader::scalar stored = shader::scalar_of<S>;
    if constexpr (stored != shader::scalar::f32 && stored != shader::scalar::f16 && stored != shader::scalar::i32) {
        fail("dtype " + std::string(to_string(D)) +
             " is not supported: shader languages have no 64-bit floats or integers, bf16, or 8/16-bit or bool "
             "storage (supported: f32, i32, and f16 where the adapter has shader-f16)");
    } else {
        webgpu_device& device = current_webgpu_device();
        if (stored == shader::scalar::f16 && !device.has_f16())
            fail("dtype f16 needs the adapter feature shader-f16, which this adapter lacks");
        if (layout.kept_numel == 0) return;
        constexpr std::int64_t limit = std::int64_t{1} << 32;
        std::int64_t const blocks = (layout.reduced_numel + webgpu_reduce_block - 1) / webgpu_reduce_block;
        if (layout.reduced_numel >= limit - webgpu_reduce_block || layout.kept_numel * blocks >= limit)
            fail("the reduction has " + std::to_string(layout.kept_numel) + " outputs of " +
                 std::to_string(layout.reduced_numel) +
                 " elements each; shader devices index with 32 bits (fewer than 2^32 elements and 2^32 blocks of " +
                 std::to_string(webgpu_reduce_block) + ")");
        // An empty reduction reads nothing: only the output is bound, and
        // every element gets the combine's identity.
        int const operands = layout.reduced_numel == 0 ? 1 : layout.operands;

        webgpu_reduce_pass pass;
        pass.shape.out_type = stored;
        pass.shape.in_type = stored;
        pass.shape.acc_type = shader::scalar_of<Acc>;
        pass.shape.kept_rank = layout.kept_rank;
        pass.shape.reduced_rank = layout.reduced_rank;
        pass.kept_numel = layout.kept_numel;
        pass.reduced_numel = layout.reduced_numel;
        pass.kept_sizes.assign(layout.kept_sizes, layout.kept_sizes + layout.kept_rank);
        pass.reduced_sizes.assign(layout.reduced_sizes, layout.reduced_sizes + layout.reduced_rank);
        std::int32_t next_slot = 1;
        for (int k = 0; k < operands; ++k) {
            std::string const name = ref_label(k == 0 ? out_ref.name : ins[k - 1].name);
            if (!device.owns(layout.data[k]))
                fail((k == 0 ? "output " : "input ") + name +
                     " is not a live buffer of the current webgpu device (allocate it with that device's alloc, "
                     "or select the device with webgpu_device_guard)");
            // One past the largest element offset: what the binding must cover.
            std::int64_t extent = 1;
            auto reach = [&](std::int64_t const* sizes, std::int64_t const* strides, std::int32_t rank) {
                for (std::int32_t d = 0; d < rank; ++d) {
                    if (strides[d] < 0) fail(name + " has a negative stride, which shader devices do not support");
                    extent += (sizes[d] - 1) * strides[d];
                }
            };
            reach(layout.kept_sizes, layout.kept_strides[k], layout.kept_rank);
            reach(layout.reduced_sizes, layout.reduced_strides[k], layout.reduced_rank);
            if (extent >= limit)
                fail(name + " spans " + std::to_string(extent) +
                     " elements; shader devices index with 32 bits (fewer than 2^32)");
            pass.kept_strides.emplace_back(layout.kept_strides[k], layout.kept_strides[k] + layout.kept_rank);
            pass.reduced_strides.emplace_back(layout.reduced_strides[k],
                                              layout.reduced_strides[k] + layout.reduced_rank);
            pass.buffers.push_back(layout.data[k]);
            std::uint64_t const bytes = static_cast<std::uint64_t>(extent) * sizeof(S);
            pass.bytes.push_back(bytes > 4 ? bytes : 4);
            if (k == 0) continue;
            // Inputs on one buffer share a binding (covering the larger extent).
            std::int32_t slot = next_slot;
            for (int j = 1; j < k && slot == next_slot; ++j)
                if (layout.data[j] == layout.data[k]) slot = pass.shape.input_slot[std::size_t(j - 1)];
            if (slot == next_slot) ++next_slot;
            pass.shape.input_slot.push_back(slot);
        }
        for (std::size_t k = 1; k < pass.buffers.size(); ++k)
            for (std::size_t j = 1; j < pass.buffers.size(); ++j)
                if (pass.buffers[j] == pass.buffers[k] && pass.bytes[j] > pass.bytes[k]) pass.bytes[k] = pass.bytes[j];

        // The map, traced on one symbolic argument per input (none for an
        // empty reduction, whose map never runs).
        std::vector<std::uint32_t> uniforms(shader::wgsl_reduction_layout_words(pass.shape), 0u);
        std::vector<std::string> helpers;
        std::string map;
        std::string const acc_type = shader::detail::wgsl_type(shader::scalar_of<Acc>);
        if (operands == 1) {
            map = "fn sy_map() -> " + acc_type + " {\n    return " + acc_type + "(0);\n}\n";
        } else {
            using V = shader::value<Acc>;
            shader::trace t_map("webgpu", 0, device.has_f16());
            std::int32_t result = -1;
            {
                shader::trace_scope const scope(t_map);
                auto arg = [&](std::uint32_t k) {
                    return V::from_node(t_map.add({shader::op::arg, shader::scalar_of<Acc>, -1, -1, -1, k}));
                };
                V const r = [&]<std::size_t... K>(std::index_sequence<K...>) {
                    return static_cast<V>(f(arg(static_cast<std::uint32_t>(K))...));
                }
                (std::make_index_sequence<NIn>{});
                result = r.node_in(t_map);
            }
            std::vector<shader::scalar> const args(NIn, shader::scalar_of<Acc>);
            map = shader::emit_wgsl_function(t_map, result, "sy_map", args, uniforms, helpers);
            pass.shape.f16_functions = shader::uses_f16(t_map);
        }
        uniforms.erase(uniforms.begin(), uniforms.begin() + shader::wgsl_reduction_layout_words(pass.shape));
        webgpu_run_pass<Acc>(device, pass, map, combine, std::move(uniforms), std::move(helpers));
    }
}

}  // namespace switchyard::detail
