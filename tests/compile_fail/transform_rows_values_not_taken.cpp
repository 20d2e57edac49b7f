// A statistic marked with_values() hands f its map value after the inputs';
// an f written as if it did not is refused with the argument order spelled out.
// expect: then one per statistic marked with_values() (its map's value)
#include <switchyard/transform_rows.h>
void run(switchyard::strided_ref const& out, switchyard::strided_ref const& x) {
    namespace sy = switchyard;
    using tag = sy::tag<sy::device_kind::cpu, sy::dtype::f32>;
    auto const shifted_exp = [](float v, float max) { return sy::exp(v - max); };
    sy::transform_rows(
        tag{}, out, sy::row_stats(sy::amax, sy::row_stat(sy::sum, shifted_exp).with_values()),
        [](float v, float max, float sum) { return sy::exp(v - max) / sum; }, x);
}
