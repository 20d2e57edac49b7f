// scale_cast: a 5-axis sparse dispatch written as an op struct.
//   device x input dtype x output dtype (a named axis) x contiguity x placement
// Only the covered points are instantiated: in-place work keeps the dtype;
// out-of-place work also casts between float types. Overloads are chosen by
// requires-clauses, the most specific winning.
#include <switchyard/switchyard.h>
#include <switchyard/torch.h>

#include <ATen/ops/empty.h>
#include <torch/library.h>

#include <cstdint>
#include <optional>

#include "out_dtype.h"

namespace sy = switchyard;

namespace switchyard_examples {

struct scale_cast_op {
    // Any covered point: y = alpha * x, converting in the compute type.
    template <typename Tag>
    requires sy::with_type<Tag, at::ScalarType> && sy::with_type<Tag, out_stype> && sy::with_type<Tag, sy::contiguity>
    static void op(Tag tag, sy::op_args const& args, double alpha) {
        constexpr auto dev = sy::tag_get<at::DeviceType>(Tag{});
        constexpr auto in_t = sy::tag_get<at::ScalarType>(Tag{});
        constexpr auto out_t = static_cast<at::ScalarType>(sy::tag_get<out_stype>(Tag{}));
        constexpr auto contig = sy::tag_get<sy::contiguity>(Tag{});
        using compute_t = sy::dtype_compute_t<in_t>;
        using out_scalar_t = sy::dtype_storage_t<out_t>;

        auto const order = args.order();
        sy::flat_in<dev, in_t, contig> const in(args.ref(0), order);
        sy::flat_out<dev, out_t, contig> const out(args.ref(1), order);
        auto const a = static_cast<compute_t>(alpha);
        sy::for_each(tag, out.size(), [=] SWITCHYARD_HOST_DEVICE(Tag, std::int64_t i) {
            out[i] = static_cast<out_scalar_t>(a * static_cast<compute_t>(in[i]));
        });
    }

    // More specific: in place, so input and output are one array.
    template <typename Tag>
    requires sy::with_type<Tag, at::ScalarType> && sy::with_type<Tag, out_stype> &&
        sy::with_type<Tag, sy::contiguity> && sy::with_value<Tag, sy::placement::in_place>
    static void op(Tag tag, sy::op_args const& args, double alpha) {
        constexpr auto dev = sy::tag_get<at::DeviceType>(Tag{});
        constexpr auto stype = sy::tag_get<at::ScalarType>(Tag{});
        constexpr auto contig = sy::tag_get<sy::contiguity>(Tag{});
        using scalar_t = sy::dtype_storage_t<stype>;
        using compute_t = sy::dtype_compute_t<stype>;

        sy::flat_out<dev, stype, contig> const x(args.ref(0), args.order());
        auto const a = static_cast<compute_t>(alpha);
        sy::for_each(tag, x.size(), [=] SWITCHYARD_HOST_DEVICE(Tag, std::int64_t i) {
            x[i] = static_cast<scalar_t>(a * static_cast<compute_t>(x[i]));
        });
    }

    using float_types = sy::torch_full_float_stype_axis;
    using out_float_types = out_float_stype_axis;
    using space = sy::axes<sy::torch_build_native_device_axis, float_types, out_float_types, sy::full_contiguity_axis,
                           sy::full_placement_axis>;
    // In place: same dtype in and out. Out of place: every float pair.
    template <at::ScalarType S>
    using in_place_for = sy::axes<sy::torch_build_native_device_axis, sy::axis<S>, sy::axis<out_stype(S)>,
                                  sy::full_contiguity_axis, sy::axis<sy::placement::in_place>>;
    using subspaces = sy::coverage<in_place_for<at::kHalf>, in_place_for<at::kBFloat16>, in_place_for<at::kFloat>,
                                   in_place_for<at::kDouble>,
                                   sy::axes<sy::torch_build_native_device_axis, float_types, out_float_types,
                                            sy::full_contiguity_axis, sy::axis<sy::placement::out_of_place>>>;
    using dispatcher = sy::dispatch_table<space, void(sy::op_args const&, double)>;
};

namespace {
auto const& scale_cast_table() {
    static auto const table = sy::dispatch_table_from_op<scale_cast_op>("scale_cast");
    return table;
}
}  // namespace

at::Tensor scale_cast(at::Tensor const& x, double alpha, std::optional<at::ScalarType> dtype) {
    at::Tensor out = at::empty_symint(x.sym_sizes(), x.options().dtype(dtype.value_or(x.scalar_type())));
    sy::op_args const args("scale_cast", {{"x", x}, {"out", out}});
    args.same_shape().no_overlap();
    args.select(scale_cast_table(),
                sy::dispatch_set{args.device_type(), args.scalar_type(), out_stype(out.scalar_type()),
                                 args.combined_contiguity(), sy::placement::out_of_place})(args, alpha);
    return out;
}

void scale_(at::Tensor& x, double alpha) {
    sy::op_args const args("scale_", {{"x", x}});
    args.no_overlap();
    args.select(scale_cast_table(), sy::dispatch_set{args.device_type(), args.scalar_type(), out_stype(x.scalar_type()),
                                                     args.combined_contiguity(), sy::placement::in_place})(args, alpha);
}

TORCH_LIBRARY_FRAGMENT(switchyard_examples, m) {
    m.def("scale_cast(Tensor x, float alpha, ScalarType? dtype=None) -> Tensor");
    m.def("scale_(Tensor(a!) x, float alpha) -> ()");
    sy::register_kernel(m, "scale_cast", &scale_cast);
    sy::register_kernel(m, "scale_", &scale_);
}

}  // namespace switchyard_examples
