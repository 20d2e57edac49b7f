// transform_reduce on a shader device, whatever the device and language:
// the runner behind device/webgpu/reduce.h and device/metal/reduce.h.
//
// The map f and a user's combine are traced once on symbolic arguments
// (shader/trace.h) and emitted as functions of the device's language; the
// built-in combines are written directly. Each output element's reduced
// values are cut into blocks of reduction_block elements, one workgroup per
// (output, block) (shader/reduction_kernel.h). One block per output stores
// straight to the output; more store partials to a scratch buffer that
// further passes reduce the same way, so the order, and with it the
// result's bits, depend only on the shape. Every pass is recorded by the
// device: nothing is submitted until sync() or a readback.
//
// Dtypes: f32, i32, f16 where the device computes in it, and bf16 where it
// has it (Metal) (both accumulated in f32, partials too). Refused, naming the op, the device and the operand:
// other dtypes, an operand that is not a live buffer of the current device,
// a negative stride, and more elements or blocks than 32-bit indices reach.
// An empty reduction binds only its output and writes the identity. min and
// max propagate NaN; argmin and argmax take the first NaN. argmin and
// argmax write their int64 index as two u32 words (shader languages have no
// 64-bit integers) and carry 32-bit indices through their passes.
//
// The device adapter gives: name (char const*), guard (its device_guard's
// name), has_f16(), has_bf16(), owns(p), alloc(bytes), free(p), and
// run(text, bindings, words, groups), which records one dispatch of
// `groups` workgroups. Syntax spells the kernel (shader/reduction_kernel.h)
// and functions: simple_function(name, arguments, type, expression) and
// function(trace, result, name, argument types, uniforms, helpers).
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "switchyard/core/combine.h"
#include "switchyard/core/dtype.h"
#include "switchyard/shader/reduction_kernel.h"
#include "switchyard/shader/reduction_shape.h"
#include "switchyard/shader/trace.h"
#include "switchyard/shader/value.h"
#include "switchyard/view/reduction_layout.h"

namespace switchyard::shader {

// One storage binding of a pass: a device buffer, the bytes it must cover,
// and the operand's name for errors ('x', or "partials").
struct reduction_binding {
    void* buffer = nullptr;
    std::uint64_t bytes = 0;
    std::string name;
};

namespace detail {

// The combines written directly, the same expression in every shader
// language; a user's combine is traced. max and min keep NaN, found by its
// bits (is_nan_test: WGSL may fold `a != a` to false).
template <typename Combine>
inline constexpr bool builtin_combine_v =
    std::is_same_v<Combine, sum_combine> || std::is_same_v<Combine, prod_combine> ||
    std::is_same_v<Combine, max_combine> || std::is_same_v<Combine, min_combine>;
// a0 wins when it is NaN, or beats a number a1: testing a1 too keeps a
// compiler that assumes no NaN from turning the select into a max or min.
template <typename Combine>
std::string builtin_combine_expression(std::string const& a0_is_nan, std::string const& a1_is_nan) {
    if constexpr (std::is_same_v<Combine, sum_combine>)
        return "a0 + a1";
    else if constexpr (std::is_same_v<Combine, prod_combine>)
        return "a0 * a1";
    else
        return concat("select(a1, a0, ((a0 ", std::is_same_v<Combine, max_combine> ? ">" : "<", " a1) && !", a1_is_nan,
                      ") || ", a0_is_nan, ")");
}

// sy_combine: a built-in combine's text, or a user's combine traced on two
// arguments (none for argmin and argmax). Its uniform words are appended to
// `words`.
template <typename Syntax, typename Acc, typename Combine>
std::string combine_function(char const* device, Combine const& combine, bool has_f16, bool has_bf16,
                             std::vector<std::uint32_t>& words, std::vector<std::string>& helpers, bool& uses_f16_out) {
    if constexpr (is_indexed_combine_v<Combine>) {
        return {};  // argmin and argmax compare pairs in the kernel itself (shader/reduction_kernel.h)
    } else if constexpr (builtin_combine_v<Combine>) {
        return Syntax::simple_function("sy_combine", 2, scalar_of<Acc>,
                                       builtin_combine_expression<Combine>(is_nan_test<Syntax>(scalar_of<Acc>, "a0"),
                                                                           is_nan_test<Syntax>(scalar_of<Acc>, "a1")));
    } else {
        using V = value<Acc>;
        trace t(device, 0, has_f16, has_bf16);
        std::int32_t result = -1;
        {
            trace_scope const scope(t);
            auto arg = [&](std::uint32_t k) { return V::from_node(t.add({op::arg, scalar_of<Acc>, -1, -1, -1, k})); };
            V const r = static_cast<V>(combine(arg(0), arg(1)));
            result = r.node_in(t);
        }
        uses_f16_out = uses_f16(t);
        return Syntax::function(t, result, "sy_combine", std::vector<scalar>(2, scalar_of<Acc>), words, helpers);
    }
}

// One pass's layout: sizes, and per operand (the output first) strides.
struct reduction_pass {
    reduction_shape shape;
    std::int64_t kept_numel = 0, reduced_numel = 0;
    std::vector<std::int64_t> kept_sizes, reduced_sizes;
    std::vector<std::vector<std::int64_t>> kept_strides, reduced_strides;  // [operand][dim]
    std::vector<void*> buffers;                                            // [operand]
    std::vector<std::uint64_t> bytes;                                      // [operand]
    std::vector<std::string> names;                                        // [operand]
};

template <typename Syntax, typename Acc, typename Combine, typename Device>
void run_reduction_pass(Device& device, reduction_pass const& pass, std::string const& map, Combine const& combine,
                        std::vector<std::uint32_t> map_uniforms, std::vector<std::string> helpers) {
    reduction_shape const& r = pass.shape;
    std::int64_t const splits =
        pass.reduced_numel > reduction_block ? (pass.reduced_numel + reduction_block - 1) / reduction_block : 1;
    std::vector<std::uint32_t> words(reduction_layout_words(r), 0u);
    words[0] = static_cast<std::uint32_t>(pass.kept_numel * splits);
    words[1] = static_cast<std::uint32_t>(pass.reduced_numel);
    words[2] = static_cast<std::uint32_t>(splits);
    words[3] = static_cast<std::uint32_t>(reduction_block);
    if constexpr (is_indexed_combine_v<Combine>)
        words[4] = shader::uniform_word(combine.template identity<Acc>().value);
    else
        words[4] = shader::uniform_word(combine.template identity<Acc>());  // not detail's WGSL spelling
    for (std::int32_t d = 0; d < r.kept_rank; ++d)
        words[kept_size_word(r, d)] = static_cast<std::uint32_t>(pass.kept_sizes[std::size_t(d)]);
    for (std::int32_t d = 0; d < r.reduced_rank; ++d)
        words[reduced_size_word(r, d)] = static_cast<std::uint32_t>(pass.reduced_sizes[std::size_t(d)]);
    for (std::size_t k = 0; k < pass.kept_strides.size(); ++k) {
        auto const operand = static_cast<std::int32_t>(k);
        for (std::int32_t d = 0; d < r.kept_rank; ++d)
            words[kept_stride_word(r, operand, d)] = static_cast<std::uint32_t>(pass.kept_strides[k][std::size_t(d)]);
        for (std::int32_t d = 0; d < r.reduced_rank; ++d)
            words[reduced_stride_word(r, operand, d)] =
                static_cast<std::uint32_t>(pass.reduced_strides[k][std::size_t(d)]);
    }
    // The map's words follow the layout; its emitter numbered them so.
    words.insert(words.end(), map_uniforms.begin(), map_uniforms.end());
    bool combine_f16 = false;
    std::string const combine_text = combine_function<Syntax, Acc>(device.name, combine, device.has_f16(),
                                                                   device.has_bf16(), words, helpers, combine_f16);

    std::int64_t const partial_count = pass.kept_numel * splits;
    // A partial is an accumulator, or argmin's and argmax's (value bits, index).
    std::uint64_t const partial_bytes =
        static_cast<std::uint64_t>(partial_count) * (r.indexed ? 2 * sizeof(std::uint32_t) : sizeof(Acc));
    void* partials = nullptr;
    reduction_shape shape = r;
    shape.f16_functions = shape.f16_functions || combine_f16;
    shape.to_partials = splits > 1;
    if (shape.to_partials && !r.indexed) shape.out_type = r.acc_type;  // partials keep the accumulator's precision
    try {
        std::vector<reduction_binding> bindings;
        bindings.push_back({pass.buffers[0], pass.bytes[0], pass.names[0]});
        if (shape.to_partials) {
            partials = device.alloc(static_cast<std::size_t>(partial_bytes));
            bindings[0] = {partials, partial_bytes, "partials"};
        }
        for (std::size_t k = 1; k < pass.buffers.size(); ++k) {
            auto const slot = static_cast<std::size_t>(shape.input_slot[k - 1]);
            if (bindings.size() <= slot) bindings.resize(slot + 1);
            bindings[slot] = {pass.buffers[k], pass.bytes[k], pass.names[k]};
        }
        std::string const text = emit_reduction<Syntax>(shape, map, combine_text, helpers, words.size());
        device.run(text, bindings, words, static_cast<std::uint64_t>(partial_count));
        if (!shape.to_partials) return;

        // The next pass reduces each output's partials (contiguous, one row
        // of `splits` per output) with the same combine and no map.
        reduction_pass next;
        next.shape.out_type = r.out_type;
        next.shape.in_type = r.indexed ? scalar::u32 : r.acc_type;
        next.shape.acc_type = r.acc_type;
        next.shape.indexed = r.indexed;
        next.shape.largest = r.largest;
        next.shape.pairs_in = r.indexed;
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
        next.bytes = {pass.bytes[0], partial_bytes};
        next.names = {pass.names[0], "partials"};
        run_reduction_pass<Syntax, Acc>(device, next, Syntax::simple_function("sy_map", 1, r.acc_type, "a0"), combine,
                                        {}, {});
    } catch (...) {
        device.free(partials);
        throw;
    }
    // Recorded work still reads the partials: the pool hands the buffer out
    // again only to later recordings, which run after these.
    device.free(partials);
}

}  // namespace detail

template <dtype D, int NIn, typename Syntax, typename Device, typename Combine, typename F>
void run_transform_reduce(Device& device, char const* op, Combine const& combine, F const& f,
                          reduction_layout const& layout, strided_ref const& out_ref, strided_ref const* ins) {
    using S = dtype_storage_t<D>;
    using Acc = dtype_compute_t<D>;
    auto fail = [&](std::string const& what) {
        throw std::invalid_argument(std::string(op) + " on " + device.name + ": " + what);
    };
    constexpr scalar stored = scalar_of<S>;
    if constexpr (stored != scalar::f32 && stored != scalar::f16 && stored != scalar::bf16 && stored != scalar::i32) {
        fail("dtype " + std::string(to_string(D)) +
             " is not supported: shader languages have no 64-bit floats or integers, or 8/16-bit or bool "
             "storage (supported: f32, i32, f16 where the device computes in it, and bf16 on Metal)");
    } else {
        if (stored == scalar::f16 && !device.has_f16())
            fail(
                "dtype f16 needs shader-f16 support, which this device lacks (a WebGPU adapter without the "
                "shader-f16 feature)");
        if (stored == scalar::bf16 && !device.has_bf16())
            fail("dtype bf16 is not supported: WGSL has no bf16 (Metal has, as MSL 3.1's bfloat)");
        if (layout.kept_numel == 0) return;
        constexpr bool indexed = is_indexed_combine_v<Combine>;
        constexpr std::int64_t limit = std::int64_t{1} << 32;
        std::int64_t const blocks = (layout.reduced_numel + reduction_block - 1) / reduction_block;
        // argmin's and argmax's partials are two u32 words each.
        if (layout.reduced_numel >= limit - reduction_block || layout.kept_numel * blocks >= limit / (indexed ? 2 : 1))
            fail("the reduction has " + std::to_string(layout.kept_numel) + " outputs of " +
                 std::to_string(layout.reduced_numel) +
                 " elements each; shader devices index with 32 bits (fewer than 2^32 elements and " +
                 (indexed ? "2^31" : "2^32") + " blocks of " + std::to_string(reduction_block) + ")");
        // An empty reduction reads nothing: only the output is bound, and
        // every element gets the combine's identity (argmin and argmax
        // refuse it before this). Their index operand, last, has strides but
        // no memory.
        int const operands = layout.reduced_numel == 0 ? 1 : layout.operands;
        int const bound = indexed ? layout.operands - 1 : -1;  // indexed reductions are never empty

        detail::reduction_pass pass;
        pass.shape.out_type = indexed ? scalar::u32 : stored;  // an int64 index as two u32 words
        pass.shape.in_type = stored;
        pass.shape.acc_type = scalar_of<Acc>;
        pass.shape.indexed = indexed;
        pass.shape.index_operand = indexed;
        pass.shape.largest = std::is_same_v<Combine, argmax_combine>;
        pass.shape.kept_rank = layout.kept_rank;
        pass.shape.reduced_rank = layout.reduced_rank;
        pass.kept_numel = layout.kept_numel;
        pass.reduced_numel = layout.reduced_numel;
        pass.kept_sizes.assign(layout.kept_sizes, layout.kept_sizes + layout.kept_rank);
        pass.reduced_sizes.assign(layout.reduced_sizes, layout.reduced_sizes + layout.reduced_rank);
        std::int32_t next_slot = 1;
        for (int k = 0; k < operands; ++k) {
            if (k == bound) {  // the index operand
                pass.kept_strides.emplace_back(layout.kept_strides[k], layout.kept_strides[k] + layout.kept_rank);
                pass.reduced_strides.emplace_back(layout.reduced_strides[k],
                                                  layout.reduced_strides[k] + layout.reduced_rank);
                continue;
            }
            std::string const name = switchyard::detail::ref_label(k == 0 ? out_ref.name : ins[k - 1].name);
            if (!device.owns(layout.data[k]))
                fail((k == 0 ? "output " : "input ") + name + " is not a live buffer of the current " + device.name +
                     " device (allocate it with that device's alloc, or select the device with " + device.guard + ")");
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
            // An index is two u32 words: half as many int64 elements.
            bool const words_of_index = indexed && k == 0;
            if (extent >= (words_of_index ? limit / 2 : limit))
                fail(name + " spans " + std::to_string(extent) +
                     " elements; shader devices index with 32 bits (fewer than " +
                     (words_of_index ? "2^31 int64" : "2^32") + ")");
            pass.kept_strides.emplace_back(layout.kept_strides[k], layout.kept_strides[k] + layout.kept_rank);
            pass.reduced_strides.emplace_back(layout.reduced_strides[k],
                                              layout.reduced_strides[k] + layout.reduced_rank);
            pass.buffers.push_back(layout.data[k]);
            pass.names.push_back(name);
            std::uint64_t const bytes =
                static_cast<std::uint64_t>(extent) * (words_of_index ? sizeof(std::int64_t) : sizeof(S));
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
        std::vector<std::uint32_t> uniforms(reduction_layout_words(pass.shape), 0u);
        std::vector<std::string> helpers;
        std::string map;
        if (operands == 1) {
            map = Syntax::simple_function("sy_map", 0, scalar_of<Acc>, Syntax::type(scalar_of<Acc>) + "(0)");
        } else {
            using V = value<Acc>;
            trace t(device.name, 0, device.has_f16(), device.has_bf16());
            std::int32_t result = -1;
            {
                trace_scope const scope(t);
                auto arg = [&](std::uint32_t k) {
                    return V::from_node(t.add({op::arg, scalar_of<Acc>, -1, -1, -1, k}));
                };
                V const r = [&]<std::size_t... K>(std::index_sequence<K...>) {
                    return static_cast<V>(f(arg(static_cast<std::uint32_t>(K))...));
                }
                (std::make_index_sequence<NIn>{});
                result = r.node_in(t);
            }
            map = Syntax::function(t, result, "sy_map", std::vector<scalar>(NIn, scalar_of<Acc>), uniforms, helpers);
            pass.shape.f16_functions = uses_f16(t);
        }
        uniforms.erase(uniforms.begin(), uniforms.begin() + reduction_layout_words(pass.shape));
        detail::run_reduction_pass<Syntax, Acc>(device, pass, map, combine, std::move(uniforms), std::move(helpers));
    }
}

}  // namespace switchyard::shader
