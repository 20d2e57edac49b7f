// Fuzz target: transform on the CPU against a naive loop over coordinates.
// Random dtypes (f32, f64, f16, bf16, i32), output shapes of rank 0-5,
// inputs that broadcast (or do not), strided, transposed and reversed
// layouts, in place, two outputs, a mapped input, and values from the
// fuzzer's bytes (NaN, infinities and subnormals included). A call either
// refuses a shape the naive rules reject, or writes exactly what the naive
// loop computes with the same function.
#include <switchyard/switchyard.h>
#include <switchyard/transform.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "fuzz_bytes.h"

namespace sy = switchyard;

namespace {

constexpr std::int64_t max_elements = 4096;

// An array over a buffer of its own (or another array's, for in place).
struct array {
    std::vector<unsigned char> buffer;
    sy::strided_ref ref;
};

// Sizes and strides from the fuzzer: dimensions laid out in a random order
// (transposed), some reversed or padded; an input (`any_strides`) may also
// get arbitrary strides, stride 0 and overlapping ones included. Integer
// values are kept small so the kernels cannot overflow.
bool make_array(fuzz::bytes& in, sy::dtype type, std::vector<std::int64_t> const& sizes, bool any_strides, array& a) {
    std::size_t const rank = sizes.size();
    std::int64_t numel = 1;
    for (auto s : sizes) numel *= s;
    if (numel > max_elements) return false;
    std::vector<std::size_t> order(rank);  // innermost last
    for (std::size_t d = 0; d < rank; ++d) order[d] = d;
    for (std::size_t d = rank; d-- > 1;)
        std::swap(order[d], order[static_cast<std::size_t>(in.in(0, static_cast<std::int64_t>(d)))]);
    std::vector<std::int64_t> strides(rank);
    std::int64_t dense = 1;
    for (std::size_t p = rank; p-- > 0;) {
        std::size_t const d = order[p];
        std::int64_t step = dense;
        switch (in.in(0, 7)) {
            case 5: strides[d] = -dense; break;
            case 6:
                step = dense * in.in(2, 3);
                strides[d] = step;
                break;
            case 7: strides[d] = any_strides ? in.in(-9, 9) : dense; break;
            default: strides[d] = dense; break;
        }
        dense = step * std::max<std::int64_t>(sizes[d], 1);
    }
    std::int64_t lo = 0, hi = 0;
    for (std::size_t d = 0; d < rank && numel > 0; ++d) {
        std::int64_t const reach = (sizes[d] - 1) * strides[d];
        (reach < 0 ? lo : hi) += reach;
    }
    auto const element = static_cast<std::int64_t>(sy::dtype_size(type));
    a.buffer.resize(static_cast<std::size_t>((hi - lo + 1) * element));
    for (auto& b : a.buffer) b = static_cast<unsigned char>(in.in(0, 255));
    if (type == sy::dtype::i32)
        for (std::size_t i = 0; i + 4 <= a.buffer.size(); i += 4) {
            std::int32_t v;
            std::memcpy(&v, &a.buffer[i], 4);
            v >>= 12;
            std::memcpy(&a.buffer[i], &v, 4);
        }
    a.ref = sy::strided_ref::make(a.buffer.data() - lo * element, type, sy::device_kind::cpu, sizes.data(),
                                  strides.data(), static_cast<std::int64_t>(rank), "a");
    return true;
}

// Offset of the element at coordinates c of the output shape, the array
// broadcast by PyTorch's rules.
std::int64_t offset_at(sy::strided_ref const& r, std::vector<std::int64_t> const& c) {
    std::int64_t off = 0;
    std::size_t const lead = c.size() - static_cast<std::size_t>(r.rank);
    for (std::int32_t d = 0; d < r.rank; ++d)
        if (r.sizes[d] != 1) off += c[static_cast<std::size_t>(d) + lead] * r.strides[d];
    return off;
}

bool broadcasts(sy::strided_ref const& in, std::vector<std::int64_t> const& shape) {
    if (static_cast<std::size_t>(in.rank) > shape.size()) return false;
    std::size_t const lead = shape.size() - static_cast<std::size_t>(in.rank);
    for (std::int32_t d = 0; d < in.rank; ++d)
        if (in.sizes[d] != 1 && in.sizes[d] != shape[static_cast<std::size_t>(d) + lead]) return false;
    return true;
}

template <typename S>
bool same_value(S a, S b) {
    if constexpr (std::is_integral_v<S>) {
        return a == b;
    } else {
        float const fa = static_cast<float>(a), fb = static_cast<float>(b);
        if (std::isnan(fa) || std::isnan(fb)) return std::isnan(fa) && std::isnan(fb);  // payloads may differ
        return std::memcmp(&a, &b, sizeof(S)) == 0;
    }
}

// The function of one to three inputs: exact in every dtype (no multiply-add
// to contract), and integers kept small so nothing overflows. With two
// outputs the second is min(first input, last input).
template <bool TwoOutputs>
struct kernel {
    template <typename C>
    static C value(C a) {
        return C(0) - a;
    }
    template <typename C>
    static C value(C a, C b) {
        return a - b;
    }
    template <typename C>
    static C value(C a, C b, C c) {
        return sy::max(a - b, c);
    }
    template <typename C, typename... Rest>
    auto operator()(C first, Rest... rest) const {
        C const v = value(first, rest...);
        if constexpr (TwoOutputs) {
            C const last[] = {first, rest...};
            return sy::results{v, sy::min(first, last[sizeof...(Rest)])};
        } else {
            return v;
        }
    }
};

// The next coordinates of `shape` in row-major order.
void step(std::vector<std::int64_t>& c, std::vector<std::int64_t> const& shape) {
    for (std::size_t d = shape.size(); d-- > 0;) {
        if (++c[d] < shape[d]) return;
        c[d] = 0;
    }
}

template <sy::dtype D>
void run(fuzz::bytes& in) {
    using S = sy::dtype_storage_t<D>;
    using C = sy::dtype_compute_t<D>;
    using Tag = sy::tag<sy::device_kind::cpu, D>;

    std::vector<std::int64_t> shape(static_cast<std::size_t>(in.in(0, 5)));
    for (auto& s : shape) s = in.in(0, 7) == 7 ? in.in(0, 300) : in.in(0, 5);
    std::int64_t numel = 1;
    for (auto s : shape) numel *= s;
    if (numel > max_elements) return;

    int const n_in = static_cast<int>(in.in(1, 3));
    bool const two_outputs = in.in(0, 3) == 0;
    bool const mapped_first = !two_outputs && in.in(0, 3) == 0;
    array outs[2];
    for (int k = 0; k < (two_outputs ? 2 : 1); ++k)
        if (!make_array(in, D, shape, false, outs[k])) return;
    array ins[3];
    bool bad_shape = false;
    for (int k = 0; k < n_in; ++k) {
        if (k == 0 && in.in(0, 4) == 0) {  // exactly the output: in place
            ins[0].ref = outs[0].ref;
            continue;
        }
        std::size_t const rank = static_cast<std::size_t>(
            std::clamp<std::int64_t>(static_cast<std::int64_t>(shape.size()) - in.in(-1, 2), 0, 5));
        std::vector<std::int64_t> sizes(rank);
        for (std::size_t d = 0; d < rank; ++d) {
            std::int64_t const od = static_cast<std::int64_t>(d + shape.size()) - static_cast<std::int64_t>(rank);
            std::int64_t const choice = in.in(0, 15);
            sizes[d] = od < 0 || choice == 15 ? in.in(0, 3) : choice < 5 ? 1 : shape[static_cast<std::size_t>(od)];
        }
        if (!make_array(in, D, sizes, true, ins[k])) return;
        bad_shape = bad_shape || !broadcasts(ins[k].ref, shape);
    }

    // The expected results, computed before anything is written (in place).
    std::vector<S> want[2];
    auto load = [](sy::strided_ref const& r, std::vector<std::int64_t> const& c) {
        S v;
        std::memcpy(&v, static_cast<S const*>(r.data) + offset_at(r, c), sizeof(S));
        return static_cast<C>(v);
    };
    auto const negate = [](C v) { return C(0) - v; };
    if (!bad_shape) {
        std::vector<std::int64_t> c(shape.size(), 0);
        for (std::int64_t i = 0; i < numel; ++i) {
            C v[3] = {};
            for (int k = 0; k < n_in; ++k) v[k] = load(ins[k].ref, c);
            if (mapped_first) v[0] = static_cast<C>(static_cast<S>(negate(v[0])));
            C const r = n_in == 1   ? kernel<false>::value(v[0])
                        : n_in == 2 ? kernel<false>::value(v[0], v[1])
                                    : kernel<false>::value(v[0], v[1], v[2]);
            want[0].push_back(static_cast<S>(r));
            if (two_outputs) want[1].push_back(static_cast<S>(sy::min(v[0], v[n_in - 1])));
            step(c, shape);
        }
    }

    sy::strided_ref const &o0 = outs[0].ref, &b = ins[1].ref, &cc = ins[2].ref;
    // transform with n_in inputs, the first one given (plain or mapped).
    auto const call = [&](auto const& out, auto const& f, auto const& first) {
        if (n_in == 1) sy::transform(Tag{}, out, f, first);
        if (n_in == 2) sy::transform(Tag{}, out, f, first, b);
        if (n_in == 3) sy::transform(Tag{}, out, f, first, b, cc);
    };
    try {
        if (two_outputs)
            call(sy::outputs(o0, outs[1].ref), kernel<true>{}, ins[0].ref);
        else if (mapped_first)
            call(o0, kernel<false>{}, sy::mapped(ins[0].ref, negate));
        else
            call(o0, kernel<false>{}, ins[0].ref);
    } catch (std::invalid_argument const&) {
        FUZZ_CHECK(bad_shape);
        return;
    }
    FUZZ_CHECK(!bad_shape);
    std::vector<std::int64_t> c(shape.size(), 0);
    for (std::int64_t i = 0; i < numel; ++i) {
        for (int k = 0; k < (two_outputs ? 2 : 1); ++k) {
            S got;
            std::memcpy(&got, static_cast<S const*>(outs[k].ref.data) + offset_at(outs[k].ref, c), sizeof(S));
            if (!same_value(got, want[k][static_cast<std::size_t>(i)]) && fuzz::verbose())
                std::fprintf(stderr, "output %d element %lld: got %g, want %g\n", k, static_cast<long long>(i),
                             static_cast<double>(got), static_cast<double>(want[k][static_cast<std::size_t>(i)]));
            FUZZ_CHECK(same_value(got, want[k][static_cast<std::size_t>(i)]));
        }
        step(c, shape);
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(std::uint8_t const* data, std::size_t size) {
    fuzz::bytes in(data, size);
    switch (in.in(0, 4)) {
        case 0: run<sy::dtype::f32>(in); break;
        case 1: run<sy::dtype::f16>(in); break;
        case 2: run<sy::dtype::bf16>(in); break;
        case 3: run<sy::dtype::f64>(in); break;
        default: {
            // Integers: small values, so the kernels cannot overflow.
            run<sy::dtype::i32>(in);
            break;
        }
    }
    return 0;
}
