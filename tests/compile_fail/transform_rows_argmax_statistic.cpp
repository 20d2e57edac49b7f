// A row statistic is a value; argmax gives an index.
// expect: transform_rows: each statistic needs a combine
#include <switchyard/transform_rows.h>
void run(switchyard::strided_ref const& out, switchyard::strided_ref const& x) {
    using tag = switchyard::tag<switchyard::device_kind::cpu, switchyard::dtype::f32>;
    switchyard::transform_rows(tag{}, out, switchyard::row_stats(switchyard::argmax),
                               [](float v, float index) { return v - index; }, x);
}
