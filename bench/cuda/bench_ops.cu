// Helpers for bench/cuda_report.py, built on the GPU machine with
// torch.utils.cpp_extension.load: relu written with switchyard (the example
// relu is the hand-written baseline), and per-op host overhead measured from
// C++ for our softplus.out and at::softplus_out.
#include <switchyard/switchyard.h>
#include <switchyard/torch.h>

#include <ATen/ops/softplus.h>
#include <ATen/cuda/CUDAContext.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/extension.h>

#include <chrono>
#include <cstdint>

namespace sy = switchyard;

struct relu_op {
    template <typename Tag>
    requires sy::with_type<Tag, at::DeviceType> && sy::with_type<Tag, at::ScalarType> &&
        sy::with_type<Tag, sy::contiguity>
    static void op(Tag tag, sy::op_args const& args) {
        constexpr auto dev = sy::tag_get<at::DeviceType>(Tag{});
        constexpr auto stype = sy::tag_get<at::ScalarType>(Tag{});
        constexpr auto contig = sy::tag_get<sy::contiguity>(Tag{});
        using scalar_t = sy::dtype_storage_t<stype>;
        using compute_t = sy::dtype_compute_t<stype>;
        auto const order = args.order();
        sy::flat_in<dev, stype, contig> const in(args.ref(0), order);
        sy::flat_out<dev, stype, contig> const out(args.ref(1), order);
        sy::for_each(tag, out.size(), [=] SWITCHYARD_HOST_DEVICE(Tag, std::int64_t i) {
            out[i] = static_cast<scalar_t>(sy::max(static_cast<compute_t>(in[i]), compute_t(0)));
        });
    }
    using space = sy::axes<sy::torch_build_device_axis, sy::torch_full_float_stype_axis, sy::full_contiguity_axis>;
    using subspaces = sy::coverage<space>;
    using dispatcher = sy::dispatch_table<space, void(sy::op_args const&)>;
};

void relu_out(at::Tensor const& x, at::Tensor& out) {
    static auto const table = sy::dispatch_table_from_op<relu_op>("relu_out");
    sy::op_args const args("relu_out", {{"x", x}, {"out", out}});
    args.same_dtype().same_shape().no_overlap();
    table.select(args.dispatch_set())(args);
}

// sum over the last dimension (last = true) or every one, into out: the
// shapes of issue 16's targets, against torch.sum.
struct sum_op {
    template <typename Tag>
    static void op(Tag tag, sy::op_args const& args, bool last) {
        sy::reduce(tag, args["out"], last ? sy::dims{-1} : sy::all_dims, sy::sum, args["x"]);
    }
    using space = sy::axes<sy::torch_build_device_axis, sy::torch_full_float_stype_axis>;
    using dispatcher = sy::dispatch_table<space, void(sy::op_args const&, bool)>;
};

void sum_out(at::Tensor const& x, at::Tensor& out, bool last) {
    static auto const table = sy::dispatch_table_from_op<sum_op>("sum_out");
    sy::op_args const args("sum_out", {{"x", x}, {"out", out}});
    args.select(table)(args, last);
}

// relu (op 0) or softplus (op 1, beta 1, threshold 20, softplus_to as in the
// op) over contiguous tensors, launched with a chosen way of warming tiles and
// number of elements per thread per tile (device/cuda/for_each.h), to compare
// them.
template <int Warm, int PerThread, at::ScalarType S>
void launch_variant_impl(at::Tensor const& x, at::Tensor& out, std::int64_t op) {
    using tag = sy::tag<at::kCUDA, S, sy::contiguity::contiguous>;
    using scalar_t = sy::dtype_storage_t<S>;
    using compute_t = sy::dtype_compute_t<S>;
    sy::op_args const args("launch_variant", {{"x", x}, {"out", out}});
    sy::flat_in<at::kCUDA, S, sy::contiguity::contiguous> const in(args.ref(0));
    sy::flat_out<at::kCUDA, S, sy::contiguity::contiguous> const o(args.ref(1));
    int device = 0;
    cudaGetDevice(&device);
    auto const stream = static_cast<cudaStream_t>(sy::cuda_current_stream_handle());
    if (op == 0)
        sy::detail::cuda_for_each_launch<Warm, PerThread>(
            tag{}, 0, o.size(),
            [=] SWITCHYARD_HOST_DEVICE(tag, std::int64_t i) {
                o[i] = static_cast<scalar_t>(sy::max(static_cast<compute_t>(in[i]), compute_t(0)));
            },
            device, stream);
    else
        sy::detail::cuda_for_each_launch<Warm, PerThread>(
            tag{}, 0, o.size(),
            [=] SWITCHYARD_HOST_DEVICE(tag, std::int64_t i) {
                compute_t const v = static_cast<compute_t>(in[i]);
                o[i] = static_cast<scalar_t>(sy::select(v > compute_t(20), v, sy::softplus_to<scalar_t>(v)));
            },
            device, stream);
}

template <int Warm, int PerThread>
void launch_variant_dtype(at::Tensor const& x, at::Tensor& out, std::int64_t op) {
    switch (x.scalar_type()) {
        case at::kFloat: return launch_variant_impl<Warm, PerThread, at::kFloat>(x, out, op);
        case at::kBFloat16: return launch_variant_impl<Warm, PerThread, at::kBFloat16>(x, out, op);
        case at::kHalf: return launch_variant_impl<Warm, PerThread, at::kHalf>(x, out, op);
        case at::kDouble: return launch_variant_impl<Warm, PerThread, at::kDouble>(x, out, op);
        default: TORCH_CHECK(false, "launch_variant: float dtypes only");
    }
}

// Every warming mode at the dtype's default elements per thread (per_thread
// 0, as for_each picks it), and 4, 8, 16 or 32 per thread at the default
// warming mode.
void launch_variant(at::Tensor const& x, at::Tensor& out, int64_t warm, int64_t per_thread, int64_t op) {
    TORCH_CHECK(x.is_contiguous() && out.is_contiguous() && x.is_cuda(), "launch_variant: contiguous CUDA tensors");
    if (per_thread == 0) {
        switch (warm) {
            case 0: return launch_variant_dtype<0, 0>(x, out, op);
            case 1: return launch_variant_dtype<1, 0>(x, out, op);
            case 2: return launch_variant_dtype<2, 0>(x, out, op);
            case 3: return launch_variant_dtype<3, 0>(x, out, op);
            default: TORCH_CHECK(false, "launch_variant: warming modes are 0 to 3");
        }
    }
    TORCH_CHECK(warm == SWITCHYARD_CUDA_WARM, "launch_variant: other element counts use the default warming mode");
    switch (per_thread) {
        case 4: return launch_variant_dtype<SWITCHYARD_CUDA_WARM, 4>(x, out, op);
        case 8: return launch_variant_dtype<SWITCHYARD_CUDA_WARM, 8>(x, out, op);
        case 16: return launch_variant_dtype<SWITCHYARD_CUDA_WARM, 16>(x, out, op);
        case 32: return launch_variant_dtype<SWITCHYARD_CUDA_WARM, 32>(x, out, op);
        default: TORCH_CHECK(false, "launch_variant: elements per thread are 0 (the dtype's default), 4, 8, 16 or 32");
    }
}

// Spins one thread for `cycles` clock cycles: holds the GPU busy.
__global__ void hold_gpu(long long cycles) {
    long long const start = clock64();
    while (clock64() - start < cycles) {
    }
}

// Which op the host-cost benchmarks call from C++: PyTorch's softplus_out
// (ATen's function), our softplus.out through the dispatcher (transform), or
// this file's relu_out called directly (op_args and for_each, no dispatcher),
// which tells the adapter's cost from transform's.
enum caller : std::int64_t { torch_softplus = 0, our_softplus = 1, our_relu = 2 };

void call_softplus_out(at::Tensor const& x, at::Tensor& out, std::int64_t which) {
    static auto const op = c10::Dispatcher::singleton()
                               .findSchemaOrThrow("switchyard_examples::softplus", "out")
                               .typed<void(at::Tensor const&, double, double, at::Tensor&)>();
    TORCH_CHECK(which >= torch_softplus && which <= our_relu, "host cost: caller 0 (torch), 1 (ours) or 2 (relu)");
    if (which == our_softplus)
        op.call(x, 1.0, 20.0, out);
    else if (which == our_relu)
        relu_out(x, out);
    else
        at::softplus_out(out, x, 1.0, 20.0);
}

// 100 calls, then waits for them: caches, the dispatcher and the kernels warm.
void warm_up_softplus_out(at::Tensor const& x, at::Tensor& out, std::int64_t ours) {
    for (int i = 0; i < 100; ++i) call_softplus_out(x, out, ours);
    at::cuda::getCurrentCUDAStream().synchronize();
}

// Host seconds per call: `iters` calls enqueued behind a kernel that holds
// the GPU for longer than they take, so nothing waits for the GPU and the
// time is the op's own host cost (argument checks, dispatch, launch). iters
// stays far below the launch queue's depth (about a thousand).
double host_overhead(at::Tensor const& x, at::Tensor& out, std::int64_t iters, std::int64_t ours) {
    TORCH_CHECK(iters > 0 && iters <= 512, "host_overhead: 1 to 512 calls (the launch queue must not fill)");
    warm_up_softplus_out(x, out, ours);
    auto const stream = at::cuda::getCurrentCUDAStream();
    hold_gpu<<<1, 1, 0, stream.stream()>>>(200'000'000);  // about 0.1 s
    auto const start = std::chrono::steady_clock::now();
    for (std::int64_t i = 0; i < iters; ++i) call_softplus_out(x, out, ours);
    double const seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    stream.synchronize();
    return seconds / static_cast<double>(iters);
}

// Seconds per call of `iters` calls including the final synchronize: with a
// 1024-element tensor this is mostly the GPU's launch-to-launch time.
double end_to_end_time(at::Tensor const& x, at::Tensor& out, std::int64_t iters, std::int64_t ours) {
    warm_up_softplus_out(x, out, ours);
    auto const start = std::chrono::steady_clock::now();
    for (std::int64_t i = 0; i < iters; ++i) call_softplus_out(x, out, ours);
    at::cuda::getCurrentCUDAStream().synchronize();
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() / static_cast<double>(iters);
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
    m.def("relu_out", &relu_out);
    m.def("sum_out", &sum_out);
    m.def("launch_variant", &launch_variant);
    m.attr("default_warm") = SWITCHYARD_CUDA_WARM;
    m.def("host_overhead", &host_overhead);
    m.def("end_to_end_time", &end_to_end_time);
}
