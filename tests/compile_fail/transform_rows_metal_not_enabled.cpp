// transform_rows on Metal runs as reductions, which need the Metal layer:
// without SWITCHYARD_WITH_METAL a Metal tag is one error naming the switch.
// expect: transform_rows: the tag names device metal, which needs SWITCHYARD_WITH_METAL defined
#include <switchyard/transform_rows.h>
void run(switchyard::strided_ref const& out, switchyard::strided_ref const& x) {
    using tag = switchyard::tag<switchyard::device_kind::metal, switchyard::dtype::f32>;
    using C = switchyard::compute_t<tag>;
    switchyard::transform_rows(tag{}, out, switchyard::row_stats(switchyard::amax), [](C v, C max) { return v - max; },
                               x);
}
