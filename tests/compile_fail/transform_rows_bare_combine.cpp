// transform_rows takes its statistics as sy::row_stats(...), not a combine.
// expect: transform_rows: the third argument is the row's statistics, sy::row_stats(...)
#include <switchyard/transform_rows.h>
void run(switchyard::strided_ref const& out, switchyard::strided_ref const& x) {
    using tag = switchyard::tag<switchyard::device_kind::cpu, switchyard::dtype::f32>;
    switchyard::transform_rows(tag{}, out, switchyard::amax, [](float v, float max) { return v - max; }, x);
}
