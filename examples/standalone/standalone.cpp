// switchyard demo (core only): one kernel template, a sparse dispatch table,
// runtime selection by (device, dtype, contiguity), and the error a caller
// gets for a combination the table does not cover.
#include <switchyard/switchyard.h>

#include <cstdint>
#include <cstdio>
#include <vector>

using namespace switchyard;

// The op: y = a * x over contiguous buffers. One template serves every dtype;
// the compute type is float for f16/bf16, else the storage type.
struct axpy_op {
    template <typename Tag>
        requires with_value<Tag, device_kind::cpu> && with_value<Tag, contiguity::contiguous>
    static void op(Tag, void const* x, void* y, std::int64_t n, double a) {
        using storage = dtype_storage_t<tag_get<dtype>(Tag{})>;
        using compute = dtype_compute_t<tag_get<dtype>(Tag{})>;
        auto const* in = static_cast<storage const*>(x);
        auto* out = static_cast<storage*>(y);
        for (std::int64_t i = 0; i < n; ++i)
            out[i] = static_cast<storage>(static_cast<compute>(a) * static_cast<compute>(in[i]));
    }

    using space = axes<full_device_axis, float_dtype_axis, full_contiguity_axis>;
    using subspaces = coverage<axes<axis<device_kind::cpu>, float_dtype_axis, axis<contiguity::contiguous>>>;
    using dispatcher = dispatch_table<space, void(void const*, void*, std::int64_t, double)>;
};

// Built once, on first use.
auto const& axpy_table() {
    static auto const table = dispatch_table_from_op<axpy_op>("axpy");
    return table;
}

template <typename T>
void run(dtype d) {
    std::vector<T> x(4), y(4);
    for (int i = 0; i < 4; ++i) x[i] = T(0.5f * static_cast<float>(i + 1));
    axpy_table().select(dispatch_set{device_kind::cpu, d, contiguity::contiguous})(x.data(), y.data(), 4, 3.0);
    std::printf("  %-5s 3 * [0.5 1 1.5 2] = [", std::string(to_string(d)).c_str());
    for (auto v : y) std::printf(" %g", static_cast<double>(static_cast<float>(v)));
    std::printf(" ]\n");
}

int main() {
    std::printf("switchyard %d.%d.%d demo: one kernel template, dispatched at run time\n",
                SWITCHYARD_VERSION_MAJOR, SWITCHYARD_VERSION_MINOR, SWITCHYARD_VERSION_PATCH);
    run<half>(dtype::f16);
    run<bfloat16>(dtype::bf16);
    run<float>(dtype::f32);
    run<double>(dtype::f64);

    std::printf("\nasking for a combination the table does not cover:\n");
    try {
        axpy_table().select(dispatch_set{device_kind::webgpu, dtype::f64, contiguity::strided});
        std::printf("  unexpected: no error\n");
        return 1;
    } catch (dispatch_lookup_error const& e) {
        std::printf("  %s\n", e.what());
    }
    return 0;
}
