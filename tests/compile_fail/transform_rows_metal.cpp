// transform_rows on Metal would run as reductions, which Metal lacks so far.
// expect: transform_rows: Metal runs neither transform_rows nor the reductions
#include <switchyard/transform_rows.h>
void run(switchyard::strided_ref const& out, switchyard::strided_ref const& x) {
    using tag = switchyard::tag<switchyard::device_kind::metal, switchyard::dtype::f32>;
    using C = switchyard::compute_t<tag>;
    switchyard::transform_rows(tag{}, out, switchyard::row_stats(switchyard::amax), [](C v, C max) { return v - max; },
                               x);
}
