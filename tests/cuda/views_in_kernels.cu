// Views captured by value in CUDA kernels: flat (contiguous and strided, the
// latter using fast division on the device) and ranked views.
#include <switchyard/view.h>

#include <cstdint>

using namespace switchyard;

template <contiguity C>
__global__ void scale(flat_in<device_kind::cuda, dtype::f32, C> in, flat_out<device_kind::cuda, dtype::f32, C> out,
                      std::int64_t n) {
    std::int64_t const i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i < n) out[i] = 2.0f * in[i];
}

__global__ void gather_rows(tensor_in<device_kind::cuda, dtype::bf16, 2, contiguity::strided> table,
                            tensor_in<device_kind::cuda, dtype::i64, 1, contiguity::contiguous> rows,
                            tensor_out<device_kind::cuda, dtype::bf16, 2, contiguity::contiguous> out) {
    std::int64_t const r = blockIdx.x, c = threadIdx.x;
    if (r < out.size(0) && c < out.size(1)) out(r, c) = table(rows(r), c);
}

void launch_all(strided_ref const& x, strided_ref const& y, strided_ref const& t, strided_ref const& r,
                strided_ref const& o) {
    scale<<<1, 256>>>(flat_in<device_kind::cuda, dtype::f32, contiguity::strided>(x),
                      flat_out<device_kind::cuda, dtype::f32, contiguity::strided>(y), x.numel());
    scale<<<1, 256>>>(flat_in<device_kind::cuda, dtype::f32, contiguity::contiguous>(x),
                      flat_out<device_kind::cuda, dtype::f32, contiguity::contiguous>(y), x.numel());
    gather_rows<<<64, 64>>>(tensor_in<device_kind::cuda, dtype::bf16, 2, contiguity::strided>(t),
                            tensor_in<device_kind::cuda, dtype::i64, 1, contiguity::contiguous>(r),
                            tensor_out<device_kind::cuda, dtype::bf16, 2, contiguity::contiguous>(o));
}
