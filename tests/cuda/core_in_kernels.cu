// Core types inside CUDA kernels: tags, tag_get, concepts, named axes, the
// half/bfloat16 conversions and the integer combines, compiled by nvcc as
// device code.
#include <switchyard/core.h>

#include <cstdint>

using namespace switchyard;

enum class out_dtype : std::underlying_type_t<dtype> {};
template <>
struct switchyard::type_label<out_dtype> : switchyard::named<dtype> {
    static constexpr std::string_view value = "out_dtype";
};

template <typename Tag>
requires with_type<Tag, dtype> __device__ float scale_for(Tag) { return 1.0f; }
template <typename Tag>
requires with_value<Tag, dtype::f16> __device__ float scale_for(Tag) { return 2.0f; }

template <typename Tag>
__global__ void convert(Tag, float const* in, dtype_storage_t<tag_get<dtype>(Tag{})>* out, std::int64_t n) {
    using storage = dtype_storage_t<tag_get<dtype>(Tag{})>;
    static_assert(tag_get<out_dtype>(Tag{}) == out_dtype(dtype::f32));
    constexpr int threads = block_threads(tag_get<block_dim>(Tag{}));
    std::int64_t const i = static_cast<std::int64_t>(blockIdx.x) * threads + threadIdx.x;
    if (i < n) out[i] = storage(in[i] * scale_for(Tag{}));
}

template <typename Tag>
void launch(float const* in, void* out, std::int64_t n) {
    using storage = dtype_storage_t<tag_get<dtype>(Tag{})>;
    constexpr int threads = block_threads(tag_get<block_dim>(Tag{}));
    convert<<<static_cast<unsigned>((n + threads - 1) / threads), threads>>>(Tag{}, in, static_cast<storage*>(out), n);
}

// A dispatch table whose kernels launch CUDA work, as op authors write them.
using space = axes<axis<dtype::f16, dtype::bf16, dtype::f32>, axis<out_dtype(dtype::f32)>>;
dispatch_table<space, void(float const*, void*, std::int64_t)> const convert_table(
    "convert", coverage<space>{}, [](auto tag, float const* in, void* out, std::int64_t n) {
        launch<tag_add<decltype(tag), block_dim::b128>>(in, out, n);
    });

void convert_any(dtype d, float const* in, void* out, std::int64_t n) {
    convert_table.select(dispatch_set{d, out_dtype(dtype::f32)})(in, out, n);
}

// The built-in sum and prod of integers wrap in device code as on the host.
__global__ void integer_combines(std::int32_t* a, std::int8_t* b) {
    a[0] = sum_combine{}(a[1], a[2]);
    a[3] = prod_combine{}(a[4], a[5]);
    b[0] = sum_combine{}(b[1], b[2]);
}
