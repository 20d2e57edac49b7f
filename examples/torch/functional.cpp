// lerp_cast: the same 5-axis sparse dispatch as op.cpp, written with free
// functions. Overloads are plain function templates constrained by
// requires-clauses; the table is built from a capture-less lambda that calls
// them, so overload resolution picks the most specific one per point.
//   out = a + weight * (b - a), computed in a's compute type (from b's end for
//   weight >= 0.5, as torch.lerp does, so weight 0 gives a and 1 gives b exactly).
#include <switchyard/switchyard.h>
#include <switchyard/torch.h>

#include <ATen/ops/empty.h>
#include <torch/library.h>

#include <cmath>
#include <cstdint>
#include <optional>

#include "out_dtype.h"

namespace sy = switchyard;

namespace switchyard_examples {

// a + w (b - a), from the nearer end, so both ends are exact. `upper` is
// |w| >= 0.5 (as torch.lerp decides it), decided once on the host.
template <typename C>
SWITCHYARD_HOST_DEVICE C lerp_value(C a, C b, C w, bool upper) {
    return upper ? b - (b - a) * (C(1) - w) : a + w * (b - a);
}

// Out of place, any covered dtype pair.
template <typename Tag>
requires sy::with_type<Tag, at::ScalarType> && sy::with_type<Tag, out_stype> && sy::with_type<Tag, sy::contiguity>
void lerp_impl(Tag tag, sy::op_args const& args, double weight) {
    constexpr auto dev = sy::tag_get<at::DeviceType>(Tag{});
    constexpr auto in_t = sy::tag_get<at::ScalarType>(Tag{});
    constexpr auto out_t = static_cast<at::ScalarType>(sy::tag_get<out_stype>(Tag{}));
    constexpr auto contig = sy::tag_get<sy::contiguity>(Tag{});
    using compute_t = sy::dtype_compute_t<in_t>;
    using out_scalar_t = sy::dtype_storage_t<out_t>;

    auto const order = args.order();
    sy::flat_in<dev, in_t, contig> const a(args.ref(0), order), b(args.ref(1), order);
    sy::flat_out<dev, out_t, contig> const out(args.ref(2), order);
    auto const w = static_cast<compute_t>(weight);
    bool const upper = !(std::abs(w) < compute_t(0.5));  // torch.lerp's test, on w as it computes
    sy::for_each(tag, out.size(), [=] SWITCHYARD_HOST_DEVICE(Tag, std::int64_t i) {
        out[i] =
            static_cast<out_scalar_t>(lerp_value(static_cast<compute_t>(a[i]), static_cast<compute_t>(b[i]), w, upper));
    });
}

// In place: the result goes to a.
template <typename Tag>
requires sy::with_type<Tag, at::ScalarType> && sy::with_type<Tag, out_stype> && sy::with_type<Tag, sy::contiguity> &&
    sy::with_value<Tag, sy::placement::in_place>
void lerp_impl(Tag tag, sy::op_args const& args, double weight) {
    constexpr auto dev = sy::tag_get<at::DeviceType>(Tag{});
    constexpr auto stype = sy::tag_get<at::ScalarType>(Tag{});
    constexpr auto contig = sy::tag_get<sy::contiguity>(Tag{});
    using scalar_t = sy::dtype_storage_t<stype>;
    using compute_t = sy::dtype_compute_t<stype>;

    auto const order = args.order();
    sy::flat_out<dev, stype, contig> const a(args.ref(0), order);
    sy::flat_in<dev, stype, contig> const b(args.ref(1), order);
    auto const w = static_cast<compute_t>(weight);
    bool const upper = !(std::abs(w) < compute_t(0.5));  // torch.lerp's test, on w as it computes
    sy::for_each(tag, a.size(), [=] SWITCHYARD_HOST_DEVICE(Tag, std::int64_t i) {
        a[i] = static_cast<scalar_t>(lerp_value(static_cast<compute_t>(a[i]), static_cast<compute_t>(b[i]), w, upper));
    });
}

using lerp_space = sy::axes<sy::torch_build_native_device_axis, sy::torch_full_float_stype_axis, out_float_stype_axis,
                            sy::full_contiguity_axis, sy::full_placement_axis>;
template <at::ScalarType S>
using lerp_in_place = sy::axes<sy::torch_build_native_device_axis, sy::axis<S>, sy::axis<out_stype(S)>,
                               sy::full_contiguity_axis, sy::axis<sy::placement::in_place>>;
using lerp_coverage =
    sy::coverage<lerp_in_place<at::kHalf>, lerp_in_place<at::kBFloat16>, lerp_in_place<at::kFloat>,
                 lerp_in_place<at::kDouble>,
                 sy::axes<sy::torch_build_native_device_axis, sy::torch_full_float_stype_axis, out_float_stype_axis,
                          sy::full_contiguity_axis, sy::axis<sy::placement::out_of_place>>>;

namespace {
auto const& lerp_table() {
    static sy::dispatch_table<lerp_space, void(sy::op_args const&, double)> const table(
        "lerp_cast", lerp_coverage{},
        [](auto tag, sy::op_args const& args, double weight) { lerp_impl(tag, args, weight); });
    return table;
}
}  // namespace

at::Tensor lerp_cast(at::Tensor const& a, at::Tensor const& b, double weight, std::optional<at::ScalarType> dtype) {
    at::Tensor out = at::empty_symint(a.sym_sizes(), a.options().dtype(dtype.value_or(a.scalar_type())));
    sy::op_args const args("lerp_cast", {{"a", a}, {"b", b}, {"out", out}});
    args.same_shape().no_overlap();
    if (b.scalar_type() != a.scalar_type()) args.fail("argument 'b' must have the dtype of 'a'");
    args.select(lerp_table(), sy::dispatch_set{args.device_type(), args.scalar_type(), out_stype(out.scalar_type()),
                                               args.combined_contiguity(), sy::placement::out_of_place})(args, weight);
    return out;
}

void lerp_(at::Tensor& a, at::Tensor const& b, double weight) {
    sy::op_args const args("lerp_", {{"a", a}, {"b", b}});
    args.same_dtype().same_shape().no_overlap(0);
    args.select(lerp_table(), sy::dispatch_set{args.device_type(), args.scalar_type(), out_stype(a.scalar_type()),
                                               args.combined_contiguity(), sy::placement::in_place})(args, weight);
}

TORCH_LIBRARY_FRAGMENT(switchyard_examples, m) {
    m.def("lerp_cast(Tensor a, Tensor b, float weight, ScalarType? dtype=None) -> Tensor");
    m.def("lerp_(Tensor(a!) a, Tensor b, float weight) -> ()");
    sy::register_kernel(m, "lerp_cast", &lerp_cast);
    sy::register_kernel(m, "lerp_", &lerp_);
}

}  // namespace switchyard_examples
