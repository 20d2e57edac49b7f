// transform_rows runs on the CPU and CUDA only.
// expect: transform_rows: runs on the CPU and CUDA in this version
#include <switchyard/transform_rows.h>
void run(switchyard::strided_ref const& out, switchyard::strided_ref const& x) {
    using tag = switchyard::tag<switchyard::device_kind::webgpu, switchyard::dtype::f32>;
    switchyard::transform_rows(tag{}, out, switchyard::row_stats(), [](float v) { return v; }, x);
}
