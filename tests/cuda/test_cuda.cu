// CUDA tests, run on a GPU machine (CI compiles them only): cuda_device,
// for_each on CUDA for every dtype, aligned and misaligned, contiguous and
// strided, tails, 64-bit counts, block sizes, streams, several devices, and
// math in device code against long double references. Exits 77 (ctest: skipped) when no
// GPU is visible; prints each failure and exits 1 if any.
// SWITCHYARD_CUDA_TEST_UNDER_SANITIZER=1 skips the 2^31-element case
// (compute-sanitizer slows kernels down a hundredfold) and the checks that
// provoke CUDA errors on purpose (out of memory, a bad device), which the
// sanitizer would report.
#include "../lazy_chains.h"
#include <switchyard/device/cuda.h>
#include <switchyard/device/cuda/multi_gpu.h>
#include <switchyard/switchyard.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <limits>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace sy = switchyard;
using sy::device_kind;
using sy::dtype;
using cuda_tag = sy::tag<device_kind::cuda>;

// A dtype enum with a value that maps to no switchyard dtype (as torch's
// complex types): its tags still compile and get the default per-thread count.
enum class test_dtype_enum { f16, complex64 };
template <>
struct switchyard::type_label<test_dtype_enum> {
    static constexpr std::string_view value = "test_dtype_enum";
};
template <>
struct switchyard::dtype_enum<test_dtype_enum> {
    static constexpr dtype to_core(test_dtype_enum t) {
        if (t == test_dtype_enum::complex64) throw std::invalid_argument("no switchyard dtype");
        return dtype::f16;
    }
    template <test_dtype_enum>
    using storage = sy::half;
    template <test_dtype_enum>
    using compute = float;
};

namespace {

int failures = 0;
int checks = 0;
bool const under_sanitizer = std::getenv("SWITCHYARD_CUDA_TEST_UNDER_SANITIZER") != nullptr;

#define CHECK(cond)                                                     \
    do {                                                                \
        ++checks;                                                       \
        if (!(cond)) {                                                  \
            ++failures;                                                 \
            std::printf("FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond); \
        }                                                               \
    } while (0)

template <typename F>
std::string message_of(F&& f) {
    try {
        f();
    } catch (std::exception const& e) {
        return e.what();
    }
    return "(no exception)";
}

bool contains(std::string const& s, char const* part) { return s.find(part) != std::string::npos; }

void test_device() {
    sy::cuda_device dev{0};
    CHECK(dev.name() == "cuda:0");
    CHECK(dev.alloc(0) == nullptr);
    dev.free(nullptr);
    std::vector<int> host(1000), back(1000, -1);
    for (int i = 0; i < 1000; ++i) host[i] = i * 3;
    void* p = dev.alloc(1000 * sizeof(int));
    dev.copy_from_host(p, host.data(), 1000 * sizeof(int));
    dev.copy_to_host(back.data(), p, 1000 * sizeof(int));
    dev.sync();
    dev.free(p);
    CHECK(back == host);

    std::string const bad = message_of([] { sy::cuda_device d{999}; });
    CHECK(contains(bad, "ordinal 999 is out of range"));
    if (under_sanitizer) return;
    std::string const oom = message_of([&] { dev.alloc(std::size_t{1} << 50); });
    CHECK(contains(oom, "cuda:0: out of memory allocating 1125899906842624 bytes"));
    // The device is still usable afterwards.
    void* q = dev.alloc(64);
    dev.free(q);
    dev.sync();
    std::string const call = message_of([] { sy::cuda_check(cudaSetDevice(12345), "cudaSetDevice", "test"); });
    CHECK(contains(call, "cudaSetDevice failed (test): cudaErrorInvalidDevice"));
    cudaGetLastError();
}

// out = in * 2 + 1 in the compute type, one impl for every dtype and layout.
template <dtype D, sy::contiguity C, typename Tag = sy::tag<device_kind::cuda>>
void affine(sy::strided_ref const& in_ref, sy::strided_ref const& out_ref) {
    using storage = sy::dtype_storage_t<D>;
    using compute = sy::dtype_compute_t<D>;
    auto const order = sy::iteration_order_of(out_ref, in_ref);
    sy::flat_in<device_kind::cuda, D, C> const in(in_ref, order);
    sy::flat_out<device_kind::cuda, D, C> const out(out_ref, order);
    sy::for_each(Tag{}, out.size(), [=] SWITCHYARD_HOST_DEVICE(Tag, std::int64_t i) {
        out[i] = static_cast<storage>(static_cast<compute>(in[i]) * compute(2) + compute(1));
    });
}

template <dtype D>
void test_dtype(char const* name) {
    using storage = sy::dtype_storage_t<D>;
    using compute = sy::dtype_compute_t<D>;
    sy::cuda_device dev{0};
    for (std::int64_t n :
         {std::int64_t{1}, std::int64_t{255}, std::int64_t{2048}, std::int64_t{2049}, std::int64_t{(1 << 20) + 3}}) {
        for (std::int64_t shift : {0, 1, 3}) {  // misaligned starts
            std::vector<storage> host(static_cast<std::size_t>(n + shift)), back(static_cast<std::size_t>(n + shift));
            for (std::int64_t i = 0; i < n + shift; ++i) host[i] = static_cast<storage>(static_cast<compute>(i % 61));
            std::size_t const bytes = host.size() * sizeof(storage);
            auto* in = static_cast<storage*>(dev.alloc(bytes));
            auto* out = static_cast<storage*>(dev.alloc(bytes));
            dev.copy_from_host(in, host.data(), bytes);
            auto const x = sy::strided_ref::contiguous(in + shift, D, device_kind::cuda, {n}, "x");
            auto const y = sy::strided_ref::contiguous(out + shift, D, device_kind::cuda, {n}, "y");
            // The dtype in the tag picks the elements per thread (16 for
            // 2-byte types), as an op's tag does.
            affine<D, sy::contiguity::contiguous, sy::tag<device_kind::cuda, D>>(x, y);
            dev.copy_to_host(back.data(), out, bytes);
            bool ok = true;
            for (std::int64_t i = 0; i < n; ++i) {
                storage const expect =
                    static_cast<storage>(static_cast<compute>(host[shift + i]) * compute(2) + compute(1));
                ok = ok && static_cast<double>(static_cast<compute>(back[shift + i])) ==
                               static_cast<double>(static_cast<compute>(expect));
            }
            if (!ok)
                std::printf("  dtype %s, n %lld, shift %lld\n", name, static_cast<long long>(n),
                            static_cast<long long>(shift));
            CHECK(ok);
            dev.free(in);
            dev.free(out);
        }
    }
    // Transposed input into a row-major output: the strided path.
    std::int64_t const rows = 300, cols = 77, n = rows * cols;
    std::vector<storage> host(n), back(n);
    for (std::int64_t i = 0; i < n; ++i) host[i] = static_cast<storage>(static_cast<compute>(i % 31));
    auto* in = static_cast<storage*>(dev.alloc(n * sizeof(storage)));
    auto* out = static_cast<storage*>(dev.alloc(n * sizeof(storage)));
    dev.copy_from_host(in, host.data(), n * sizeof(storage));
    auto const xt = sy::strided_ref::make(in, D, device_kind::cuda, {cols, rows}, {1, cols}, "xt");
    auto const y = sy::strided_ref::contiguous(out, D, device_kind::cuda, {cols, rows}, "y");
    affine<D, sy::contiguity::strided, sy::tag<device_kind::cuda>>(xt, y);
    dev.copy_to_host(back.data(), out, n * sizeof(storage));
    bool ok = true;
    for (std::int64_t c = 0; c < cols; ++c)
        for (std::int64_t r = 0; r < rows; ++r) {
            storage const expect =
                static_cast<storage>(static_cast<compute>(host[r * cols + c]) * compute(2) + compute(1));
            ok = ok && static_cast<double>(static_cast<compute>(back[c * rows + r])) ==
                           static_cast<double>(static_cast<compute>(expect));
        }
    CHECK(ok);
    dev.free(in);
    dev.free(out);
}

// Elements per thread per tile follow the tag's dtype: 16 for 1- and 2-byte types, 4 for 8-byte ones, else 8.
static_assert(sy::detail::cuda_per_thread<sy::tag<device_kind::cuda, dtype::f32, sy::contiguity::contiguous>>() == 8);
static_assert(sy::detail::cuda_per_thread<sy::tag<device_kind::cuda, dtype::bf16>>() == 16);
static_assert(sy::detail::cuda_per_thread<sy::tag<device_kind::cuda, dtype::u8>>() == 16);
static_assert(sy::detail::cuda_per_thread<sy::tag<device_kind::cuda, dtype::f64>>() == 4);
static_assert(sy::detail::cuda_per_thread<sy::tag<device_kind::cuda>>() == sy::detail::cuda_tile_per_thread);
static_assert(sy::detail::cuda_per_thread<sy::tag<device_kind::cuda, test_dtype_enum::f16>>() == 16);
static_assert(sy::detail::cuda_per_thread<sy::tag<device_kind::cuda, test_dtype_enum::complex64>>() ==
              sy::detail::cuda_tile_per_thread);

// Under nvcc, an op's transform_coverage includes CUDA with every dtype it names.
static_assert(sy::transform_runs_on(device_kind::cuda));
static_assert(std::is_same_v<sy::transform_coverage<sy::float_dtype_axis>,
                             sy::coverage<sy::axes<sy::axis<device_kind::cpu>, sy::float_dtype_axis>,
                                          sy::axes<sy::axis<device_kind::cuda>, sy::float_dtype_axis>>>);

void test_block_sizes_and_streams() {
    sy::cuda_device dev{0};
    std::int64_t const n = 100003;
    std::vector<float> host(n), back(n);
    for (std::int64_t i = 0; i < n; ++i) host[i] = static_cast<float>(i % 97);
    auto* in = static_cast<float*>(dev.alloc(n * sizeof(float)));
    auto* out = static_cast<float*>(dev.alloc(n * sizeof(float)));
    dev.copy_from_host(in, host.data(), n * sizeof(float));
    auto const x = sy::strided_ref::contiguous(in, dtype::f32, device_kind::cuda, {n}, "x");
    auto const y = sy::strided_ref::contiguous(out, dtype::f32, device_kind::cuda, {n}, "y");
    auto const verify = [&] {
        dev.copy_to_host(back.data(), out, n * sizeof(float));
        bool ok = true;
        for (std::int64_t i = 0; i < n; ++i) ok = ok && back[i] == host[i] * 2 + 1;
        cudaMemset(out, 0, n * sizeof(float));
        return ok;
    };
    affine<dtype::f32, sy::contiguity::contiguous, sy::tag<device_kind::cuda, sy::block_dim::b32>>(x, y);
    CHECK(verify());
    affine<dtype::f32, sy::contiguity::contiguous, sy::tag<device_kind::cuda, sy::block_dim::b128>>(x, y);
    CHECK(verify());
    affine<dtype::f32, sy::contiguity::contiguous, sy::tag<device_kind::cuda, sy::block_dim::b1024>>(x, y);
    CHECK(verify());

    cudaStream_t stream = nullptr;
    sy::cuda_check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
    {
        sy::cuda_stream_scope const scope(stream);
        CHECK(sy::cuda_current_stream_handle() == stream);
        affine<dtype::f32, sy::contiguity::contiguous>(x, y);
        sy::cuda_check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
    }
    CHECK(sy::cuda_current_stream_handle() == nullptr);
    CHECK(verify());
    cudaStreamDestroy(stream);

    // Several devices: {0, 0} runs two slices on this GPU (events, restore).
    int const devices[] = {0, 0};
    sy::flat_in<device_kind::cuda, dtype::f32, sy::contiguity::contiguous> const vin(x);
    sy::flat_out<device_kind::cuda, dtype::f32, sy::contiguity::contiguous> const vout(y);
    sy::for_each_on_cuda_devices(devices, sy::tag<device_kind::cuda>{}, n,
                                 [=] SWITCHYARD_HOST_DEVICE(cuda_tag, std::int64_t i) { vout[i] = vin[i] * 2 + 1; });
    int current = -1;
    cudaGetDevice(&current);
    CHECK(current == 0);
    CHECK(verify());
    std::string const empty = message_of([&] {
        sy::for_each_on_cuda_devices(std::span<int const>{}, sy::tag<device_kind::cuda>{}, n,
                                     [=] SWITCHYARD_HOST_DEVICE(cuda_tag, std::int64_t i) { vout[i] = 0; });
    });
    CHECK(contains(empty, "the device list is empty"));
    int const missing[] = {0, 77};
    std::string const bad = message_of([&] {
        sy::for_each_on_cuda_devices(missing, sy::tag<device_kind::cuda>{}, n,
                                     [=] SWITCHYARD_HOST_DEVICE(cuda_tag, std::int64_t i) { vout[i] = 0; });
    });
    CHECK(contains(bad, "device 77 is not one of the"));
    dev.free(in);
    dev.free(out);
}

// A count above 2^31: indices must not wrap.
void test_64bit_count() {
    sy::cuda_device dev{0};
    std::int64_t const n = (std::int64_t{1} << 31) + 4099;
    auto* out = static_cast<std::uint8_t*>(dev.alloc(static_cast<std::size_t>(n)));
    auto const y = sy::strided_ref::contiguous(out, dtype::u8, device_kind::cuda, {n}, "y");
    sy::flat_out<device_kind::cuda, dtype::u8, sy::contiguity::contiguous> const o(y);
    sy::for_each(sy::tag<device_kind::cuda>{}, n, [=] SWITCHYARD_HOST_DEVICE(cuda_tag, std::int64_t i) {
        o[i] = static_cast<std::uint8_t>((i >> 20) ^ i);
    });
    std::vector<std::uint8_t> tail(8192);
    dev.copy_to_host(tail.data(), out + (n - 8192), 8192);
    bool ok = true;
    for (std::int64_t k = 0; k < 8192; ++k) {
        std::int64_t const i = n - 8192 + k;
        ok = ok && tail[k] == static_cast<std::uint8_t>((i >> 20) ^ i);
    }
    CHECK(ok);
    dev.free(out);
}

// Math in device code keeps the library's contract: within 2 ulp of the
// correctly rounded result (long double reference on the host; ulp of the
// reference, subnormal spacing below the normal range, as tests/test_math.cpp).
long double ref_math(int f, long double x) {
    switch (f) {
        case 0: return std::exp(x);
        case 1: return std::expm1(x);
        case 2: return x < 0 ? NAN : std::log(x);
        case 3: return x < -1 ? NAN : std::log1p(x);
        case 4: return std::tanh(x);
        case 5: return 1.0L / (1.0L + std::exp(-x));
        case 6: return std::max(x, 0.0L) + std::log1p(std::exp(-std::fabs(x)));
        default: return x < 0 ? NAN : std::sqrt(x);
    }
}

// The spacing of a format with `mantissa_bits` stored bits and smallest
// normal exponent `min_exponent` at |ref| (subnormal spacing below normal).
long double ulp_spacing(long double ref, int mantissa_bits, int min_exponent) {
    int e = 0;
    std::frexp(ref, &e);  // |ref| in [2^(e-1), 2^e)
    return std::ldexp(1.0L, std::max(e - 1, min_exponent) - mantissa_bits);
}

double ulp_error(float got, long double ref) {
    if (std::isnan(ref) || std::isnan(got)) return std::isnan(ref) && std::isnan(got) ? 0.0 : 1e9;
    if (std::isinf(got) || std::isinf(ref) || ref > 3.4028234663852886e38L || ref < -3.4028234663852886e38L)
        return (std::isinf(got) && std::fabs(ref) >= 3.4028235677973366e38L && (got > 0) == (ref > 0)) ||
                       static_cast<long double>(got) == ref
                   ? 0.0
                   : 1e9;
    return static_cast<double>(std::fabs(static_cast<long double>(got) - ref) / ulp_spacing(ref, 23, -126));
}

void test_math_on_device() {
    sy::cuda_device dev{0};
    std::int64_t const n = 1 << 20;
    std::vector<float> host(n);
    for (std::int64_t i = 0; i < n; ++i) host[i] = -110.0f + 220.0f * static_cast<float>(i) / n;
    host[0] = INFINITY, host[1] = -INFINITY, host[2] = NAN, host[3] = 0.0f, host[4] = -0.0f, host[5] = 1e-40f;
    constexpr int functions = 8;
    char const* names[functions] = {"exp", "expm1", "log", "log1p", "tanh", "sigmoid", "softplus", "sqrt"};
    auto* in = static_cast<float*>(dev.alloc(n * sizeof(float)));
    auto* out = static_cast<float*>(dev.alloc(functions * n * sizeof(float)));
    dev.copy_from_host(in, host.data(), n * sizeof(float));
    auto const x = sy::strided_ref::contiguous(in, dtype::f32, device_kind::cuda, {n}, "x");
    auto const y = sy::strided_ref::contiguous(out, dtype::f32, device_kind::cuda, {functions, n}, "y");
    sy::flat_in<device_kind::cuda, dtype::f32, sy::contiguity::contiguous> const vin(x);
    sy::tensor_out<device_kind::cuda, dtype::f32, 2, sy::contiguity::contiguous> const vout(y);
    sy::for_each(cuda_tag{}, n, [=] SWITCHYARD_HOST_DEVICE(cuda_tag, std::int64_t i) {
        float const v = vin[i];
        vout(0, i) = sy::exp(v);
        vout(1, i) = sy::expm1(v);
        vout(2, i) = sy::log(v);
        vout(3, i) = sy::log1p(v);
        vout(4, i) = sy::tanh(v);
        vout(5, i) = sy::sigmoid(v);
        vout(6, i) = sy::softplus(v);
        vout(7, i) = sy::sqrt(v);
    });
    std::vector<float> back(functions * n);
    dev.copy_to_host(back.data(), out, back.size() * sizeof(float));
    int bad = 0;
    for (int f = 0; f < functions; ++f) {
        double worst = 0;
        for (std::int64_t i = 0; i < n; ++i) {
            double const err = ulp_error(back[f * n + i], ref_math(f, host[i]));
            worst = std::max(worst, err);
            if (err > 2.0 && bad++ < 5)
                std::printf("  %s(%a): device %a, %.2f ulp\n", names[f], host[i], back[f * n + i], err);
        }
        std::printf("  device %-8s max %.3f ulp\n", names[f], worst);
    }
    CHECK(bad == 0);
    dev.free(in);
    dev.free(out);
}

// Double softplus on the device (it computes 1/(2 + f) by the special-
// function unit's reciprocal, not by division as the host does): within
// 2 ulp over evenly spaced inputs across its whole range, near 0, and into
// the subnormal results, and exact at the special values.
void test_softplus_f64_on_device() {
    sy::cuda_device dev{0};
    std::int64_t const part = 1 << 18, n = 5 * part;
    std::vector<double> host(n), back(n);
    // The last range holds the largest errors (about 1.6 ulp).
    double const ranges[5][2] = {{-750.0, 750.0}, {-40.0, 40.0}, {-1.0, 1.0}, {-745.2, -700.0}, {-1.4, -1.25}};
    for (int r = 0; r < 5; ++r)
        for (std::int64_t i = 0; i < part; ++i)
            host[r * part + i] = ranges[r][0] + (ranges[r][1] - ranges[r][0]) * static_cast<double>(i) / part;
    double const specials[] = {INFINITY,
                               -INFINITY,
                               NAN,
                               0.0,
                               -0.0,
                               2000.0,
                               -2000.0,
                               std::numeric_limits<double>::max(),
                               -std::numeric_limits<double>::max(),
                               1e-300};
    for (std::size_t i = 0; i < std::size(specials); ++i) host[i] = specials[i];
    auto* in = static_cast<double*>(dev.alloc(n * sizeof(double)));
    auto* out = static_cast<double*>(dev.alloc(n * sizeof(double)));
    dev.copy_from_host(in, host.data(), n * sizeof(double));
    sy::for_each(cuda_tag{}, n, [=] SWITCHYARD_HOST_DEVICE(cuda_tag, std::int64_t i) { out[i] = sy::softplus(in[i]); });
    dev.copy_to_host(back.data(), out, n * sizeof(double));
    double worst = 0;
    int bad = 0, differ_from_host = 0;
    for (std::int64_t i = 0; i < n; ++i) {
        double const x = host[i], got = back[i];
        double err = 0;
        if (std::isnan(x) || std::isnan(got)) {
            err = std::isnan(x) && std::isnan(got) ? 0.0 : 1e9;
        } else {
            long double const ref = ref_math(6, x);
            if (std::signbit(got))  // softplus is never negative, nor -0
                err = 1e9;
            else if (std::isinf(x) || std::isinf(got))
                err = static_cast<long double>(got) == ref ? 0.0 : 1e9;
            else
                err = static_cast<double>(std::fabs(static_cast<long double>(got) - ref) / ulp_spacing(ref, 52, -1022));
            if (got != sy::softplus(x)) ++differ_from_host;
        }
        worst = std::max(worst, err);
        if (!(err <= 2.0) && bad++ < 5) std::printf("  softplus(%a): device %a, %.2f ulp\n", x, got, err);
    }
    std::printf("  device softplus (double) max %.3f ulp over %lld inputs; %d differ from the host\n", worst,
                static_cast<long long>(n), differ_from_host);
    CHECK(bad == 0);
    dev.free(in);
    dev.free(out);
}

// exp_to, softplus_to and sigmoid_to<half / bfloat16> on the device (the
// special-function-unit paths; function 0 exp, 6 softplus, 5 sigmoid) for every
// 16-bit input: rounded to the storage type, within 0.53 ulp of the storage
// type of the exact value (math.h's bound; long double reference). Also
// counts how many results differ from the host's function rounded the same
// way.
template <typename Storage>
void test_storage_math(char const* name, int mantissa_bits, int min_exponent, int function) {
    char const* const label = function == 6 ? "softplus" : function == 5 ? "sigmoid" : "exp";
    sy::cuda_device dev{0};
    std::int64_t const n = 65536;
    std::vector<Storage> host(n), back(n);
    for (std::int64_t i = 0; i < n; ++i) host[i] = Storage::from_bits(static_cast<std::uint16_t>(i));
    auto* in = static_cast<Storage*>(dev.alloc(n * sizeof(Storage)));
    auto* out = static_cast<Storage*>(dev.alloc(n * sizeof(Storage)));
    dev.copy_from_host(in, host.data(), n * sizeof(Storage));
    sy::for_each(cuda_tag{}, n, [=] SWITCHYARD_HOST_DEVICE(cuda_tag, std::int64_t i) {
        float const v = static_cast<float>(in[i]);
        out[i] = Storage(function == 6   ? sy::softplus_to<Storage>(v)
                         : function == 5 ? sy::sigmoid_to<Storage>(v)
                                         : sy::exp_to<Storage>(v));
    });
    dev.copy_to_host(back.data(), out, n * sizeof(Storage));
    double worst = 0;
    int bad = 0, differ_from_host = 0;
    for (std::int64_t i = 0; i < n; ++i) {
        float const x = static_cast<float>(host[i]), got = static_cast<float>(back[i]);
        double err = 0;
        if (std::isnan(x)) {
            err = std::isnan(got) ? 0.0 : 1e9;
        } else {
            long double const ref = ref_math(function, x);  // 6 softplus, 5 sigmoid, 0 exp
            // Infinite only where the exact value rounds to infinity in Storage (exp past f16's range).
            float const ref_rounded = static_cast<float>(Storage(static_cast<float>(ref)));
            if (std::isinf(x) || std::isinf(got))
                err = got == ref_rounded ? 0.0 : 1e9;
            else
                err = static_cast<double>(std::fabs(static_cast<long double>(got) - ref) /
                                          ulp_spacing(ref, mantissa_bits, min_exponent));
            float const host_value = function == 6 ? sy::softplus(x) : function == 5 ? sy::sigmoid(x) : sy::exp(x);
            if (Storage(host_value).bits != back[i].bits) ++differ_from_host;
        }
        worst = std::max(worst, err);
        if (err > 0.53 && bad++ < 5) std::printf("  %s_to<%s>(%a): device %a, %.2f ulp\n", label, name, x, got, err);
    }
    std::printf("  device %s_to<%s> max %.3f ulp (of %s) over all 65536 inputs; %d differ from the host\n", label, name,
                worst, name, differ_from_host);
    CHECK(bad == 0);
    dev.free(in);
    dev.free(out);
}

// A lazy chain on CUDA: one fused transform, checked against the same chain
// on the CPU; the array operand is read through a transpose.
void test_lazy_chain() {
    std::int64_t const rows = 300, cols = 700, n = rows * cols;
    std::vector<float> hx(n), hy(n);
    for (std::int64_t i = 0; i < n; ++i) {
        hx[i] = static_cast<float>(i % 101) * 0.1f - 5.0f;
        hy[i] = static_cast<float>(i % 13);
    }
    sy::cuda_device dev{0};
    void* x = dev.alloc(n * 4);
    void* y = dev.alloc(n * 4);
    dev.copy_from_host(x, hx.data(), n * 4);
    dev.copy_from_host(y, hy.data(), n * 4);
    auto const xr = sy::strided_ref::make(x, dtype::f32, device_kind::cuda, {rows, cols}, {cols, 1}, "x");
    auto const yt = sy::strided_ref::make(y, dtype::f32, device_kind::cuda, {rows, cols}, {1, rows}, "y.T");
    std::vector<float> const got = sy::lazy(xr).relu().mul(2.0).add(yt).sub(1.0).to_host<float>();
    auto const cx = sy::strided_ref::make(hx.data(), dtype::f32, device_kind::cpu, {rows, cols}, {cols, 1}, "x");
    auto const cy = sy::strided_ref::make(hy.data(), dtype::f32, device_kind::cpu, {rows, cols}, {1, rows}, "y.T");
    std::vector<float> const expected = sy::lazy(cx).relu().mul(2.0).add(cy).sub(1.0).to_host<float>();
    CHECK(got == expected);

    // Ending in a reduction: the chain is the reduction's map (one kernel).
    std::vector<float> const row_sums = sy::lazy(xr).relu().mul(2.0).add(yt).sum(sy::dims{-1}).to_host<float>();
    std::vector<float> const cpu_sums = sy::lazy(cx).relu().mul(2.0).add(cy).sum(sy::dims{-1}).to_host<float>();
    CHECK(row_sums.size() == std::size_t(rows));
    bool sums_close = true;
    for (std::int64_t r = 0; r < rows; ++r)
        sums_close = sums_close && std::fabs(row_sums[r] - cpu_sums[r]) <= 1e-5f * (std::fabs(cpu_sums[r]) + 1e3f);
    CHECK(sums_close);
    double exact = 0;
    for (std::int64_t i = 0; i < n; ++i) exact += double(hx[i]) * hy[(i % cols) * rows + i / cols];
    CHECK(std::fabs(sy::dot(xr, yt).item<float>() - exact) <= 1e-5 * std::fabs(exact) + 1e-2);

    // A bias row broadcast over the rows, then 16 more arrays: more than one
    // kernel reads (14), so two kernels through a ping-pong buffer, on a
    // non-default stream, and per step.
    std::vector<float> hb(cols);
    for (std::int64_t c = 0; c < cols; ++c) hb[c] = static_cast<float>(c) * 0.25f;
    void* b = dev.alloc(cols * 4);
    dev.copy_from_host(b, hb.data(), cols * 4);
    auto const br = sy::strided_ref::contiguous(b, dtype::f32, device_kind::cuda, {cols}, "bias");
    auto const cb = sy::strided_ref::contiguous(hb.data(), dtype::f32, device_kind::cpu, {cols}, "bias");
    auto const on_gpu = switchyard_tests::add_each<16>(sy::lazy(xr).add(br), yt);
    auto const on_cpu = switchyard_tests::add_each<16>(sy::lazy(cx).add(cb), cy);
    static_assert(decltype(on_gpu)::array_operands == 17);
    std::vector<float> const wide_expected = on_cpu.to_host<float>();
    cudaStream_t stream = nullptr;
    cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
    {
        sy::cuda_stream_scope const scope(stream);
        CHECK(on_gpu.to_host<float>() == wide_expected);
        CHECK(on_gpu.to_host<float>(sy::fusion::per_step) == wide_expected);
    }
    cudaStreamDestroy(stream);
    dev.free(b);
    dev.free(x);
    dev.free(y);
}

// transform on CUDA against the same kernel on the CPU, bitwise (x * 2 + y is
// exact up to one rounding on both): the vector kernel (contiguous with a
// tail, broadcast over rows, columns and a scalar), the general kernel
// (misaligned, transposed, sliced, rank 0), several outputs and in place.
template <dtype D>
void test_transform(char const* label) {
    using S = sy::dtype_storage_t<D>;
    using C = sy::dtype_compute_t<D>;
    using gpu = sy::tag<device_kind::cuda, D>;
    using cpu = sy::tag<device_kind::cpu, D>;
    struct operand_case {
        std::vector<std::int64_t> sizes, strides;
        std::int64_t offset;  // elements into the buffer: misalignment
    };
    struct layout_case {
        char const* what;
        operand_case out, x, y;
    };
    std::vector<layout_case> const cases = {
        {"contiguous with a tail", {{4099}, {1}, 0}, {{4099}, {1}, 0}, {{4099}, {1}, 0}},
        {"large contiguous", {{1 << 21}, {1}, 0}, {{1 << 21}, {1}, 0}, {{1 << 21}, {1}, 0}},
        {"y per column", {{257, 128}, {128, 1}, 0}, {{257, 128}, {128, 1}, 0}, {{128}, {1}, 0}},
        {"y per row", {{300, 64}, {64, 1}, 0}, {{300, 64}, {64, 1}, 0}, {{300, 1}, {1, 1}, 0}},
        // Rows longer than a tile (they wrap mid-tile): the vector kernel's
        // one division per thread and tile.
        {"long rows, y per column", {{37, 5000}, {5000, 1}, 0}, {{37, 5000}, {5000, 1}, 0}, {{5000}, {1}, 0}},
        {"long rows, y per row", {{23, 4104}, {4104, 1}, 0}, {{23, 4104}, {4104, 1}, 0}, {{23, 1}, {1, 1}, 0}},
        {"y scalar", {{1000}, {1}, 0}, {{1000}, {1}, 0}, {{}, {}, 0}},
        {"x misaligned", {{1000}, {1}, 0}, {{1000}, {1}, 1}, {{1000}, {1}, 0}},
        {"rows not whole chunks", {{100, 13}, {13, 1}, 0}, {{100, 13}, {13, 1}, 0}, {{13}, {1}, 0}},
        {"x transposed", {{64, 96}, {96, 1}, 0}, {{64, 96}, {1, 64}, 0}, {{96}, {1}, 0}},
        {"x sliced, rank 3", {{5, 6, 7}, {42, 7, 1}, 0}, {{5, 6, 7}, {100, 15, 2}, 0}, {{6, 1}, {1, 1}, 0}},
        {"rank 0", {{}, {}, 0}, {{}, {}, 0}, {{}, {}, 0}},
        {"empty", {{0, 5}, {5, 1}, 0}, {{0, 5}, {5, 1}, 0}, {{5}, {1}, 0}},
    };
    sy::cuda_device dev{0};
    auto extent = [](operand_case const& o) {
        std::int64_t e = o.offset + 1;
        for (std::size_t d = 0; d < o.sizes.size(); ++d) e += (o.sizes[d] - 1) * o.strides[d];
        return e;
    };
    for (auto const& c : cases) {
        std::int64_t const ex = extent(c.x), ey = extent(c.y), eo = extent(c.out);
        std::vector<S> hx(ex), hy(ey), want(eo, S(C(0))), got(eo);
        for (std::int64_t i = 0; i < ex; ++i) hx[i] = static_cast<S>(static_cast<C>(i % 29) - C(9));
        for (std::int64_t i = 0; i < ey; ++i) hy[i] = static_cast<S>(static_cast<C>(i % 17) - C(5));
        void* dx = dev.alloc(ex * sizeof(S));
        void* dy = dev.alloc(ey * sizeof(S));
        void* dout = dev.alloc(eo * sizeof(S));
        dev.copy_from_host(dx, hx.data(), ex * sizeof(S));
        dev.copy_from_host(dy, hy.data(), ey * sizeof(S));
        dev.copy_from_host(dout, want.data(), eo * sizeof(S));
        auto ref = [](void* base, operand_case const& o, device_kind k, char const* name) {
            return sy::strided_ref::make(static_cast<S*>(base) + o.offset, D, k, o.sizes.data(), o.strides.data(),
                                         static_cast<std::int64_t>(o.sizes.size()), name);
        };
        auto const kernel = [] SWITCHYARD_HOST_DEVICE(C a, C b) { return a * C(2) + b; };
        sy::transform(gpu{}, ref(dout, c.out, device_kind::cuda, "out"), kernel, ref(dx, c.x, device_kind::cuda, "x"),
                      ref(dy, c.y, device_kind::cuda, "y"));
        sy::transform(cpu{}, ref(want.data(), c.out, device_kind::cpu, "out"), kernel,
                      ref(hx.data(), c.x, device_kind::cpu, "x"), ref(hy.data(), c.y, device_kind::cpu, "y"));
        dev.copy_to_host(got.data(), dout, eo * sizeof(S));
        bool const same = std::memcmp(got.data(), want.data(), eo * sizeof(S)) == 0;
        if (!same) std::printf("transform %s: %s differs from the CPU\n", label, c.what);
        CHECK(same);
        dev.free(dx);
        dev.free(dy);
        dev.free(dout);
    }

    // Two outputs and in place, contiguous (vector kernel) and with a tail.
    std::int64_t const n = 1027;
    std::vector<S> hx(n), lo(n), hi(n);
    for (std::int64_t i = 0; i < n; ++i) hx[i] = static_cast<S>(static_cast<C>(i % 31));
    void* dx = dev.alloc(n * sizeof(S));
    void* dlo = dev.alloc(n * sizeof(S));
    void* dhi = dev.alloc(n * sizeof(S));
    dev.copy_from_host(dx, hx.data(), n * sizeof(S));
    auto flat = [&](void* p, char const* name) {
        return sy::strided_ref::contiguous(p, D, device_kind::cuda, {n}, name);
    };
    sy::transform(
        gpu{}, sy::outputs(flat(dlo, "lo"), flat(dhi, "hi")),
        [] SWITCHYARD_HOST_DEVICE(C a) {
            return sy::results{a - C(1), a + C(1)};
        },
        flat(dx, "x"));
    sy::transform(
        gpu{}, flat(dx, "x"), [] SWITCHYARD_HOST_DEVICE(C a) { return a * C(2); }, flat(dx, "x"));
    dev.copy_to_host(lo.data(), dlo, n * sizeof(S));
    dev.copy_to_host(hi.data(), dhi, n * sizeof(S));
    std::vector<S> doubled(n);
    dev.copy_to_host(doubled.data(), dx, n * sizeof(S));
    int wrong = 0;
    for (std::int64_t i = 0; i < n; ++i) {
        C const v = static_cast<C>(hx[i]);
        wrong += static_cast<C>(lo[i]) != static_cast<C>(static_cast<S>(v - C(1)));
        wrong += static_cast<C>(hi[i]) != static_cast<C>(static_cast<S>(v + C(1)));
        wrong += static_cast<C>(doubled[i]) != static_cast<C>(static_cast<S>(v * C(2)));
    }
    if (wrong) std::printf("transform %s: %d wrong values with two outputs or in place\n", label, wrong);
    CHECK(wrong == 0);
    dev.free(dx);
    dev.free(dlo);
    dev.free(dhi);
}

// A count beyond a captured output view is refused on the host, before a
// launch could write past the buffer (as on the CPU).
void test_for_each_count_check() {
    using f32_tag = sy::tag<device_kind::cuda, dtype::f32>;
    sy::cuda_device dev{0};
    void* p = dev.alloc(64 * sizeof(float));
    auto const ref = sy::strided_ref::contiguous(p, dtype::f32, device_kind::cuda, {64}, "out");
    sy::flat_out<device_kind::cuda, dtype::f32, sy::contiguity::contiguous> const out(ref);
    std::string const m = message_of(
        [&] { sy::for_each(f32_tag{}, 65, [=] SWITCHYARD_HOST_DEVICE(f32_tag, std::int64_t i) { out[i] = 1.0f; }); });
    CHECK(contains(m, "for_each on cuda: count is 65 but a captured flat_out view has 64 elements"));
    sy::for_each(f32_tag{}, 64, [=] SWITCHYARD_HOST_DEVICE(f32_tag, std::int64_t i) { out[i] = 1.0f; });
    std::vector<float> back(64);
    dev.copy_to_host(back.data(), p, 64 * sizeof(float));
    CHECK(std::count(back.begin(), back.end(), 1.0f) == 64);
    dev.free(p);
}

// sy::mapped on CUDA against the CPU, bitwise: a per-column gate (hoisted
// into stream-ordered memory on a non-default stream) and a gate of the
// output's shape (fused). The map's value is rounded to the storage type on
// both paths; the hoisted one must be ordered before the main kernel.
template <dtype D>
void test_transform_mapped(char const* label) {
    using S = sy::dtype_storage_t<D>;
    using C = sy::dtype_compute_t<D>;
    using gpu = sy::tag<device_kind::cuda, D>;
    using cpu = sy::tag<device_kind::cpu, D>;
    std::int64_t const rows = 513, cols = 136;
    cudaStream_t stream = nullptr;
    sy::cuda_check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
    sy::cuda_device dev{0, stream};
    for (bool const broadcast : {true, false}) {
        std::int64_t const n = rows * cols, ng = broadcast ? cols : n;
        std::vector<S> hx(n), hg(ng), want(n), got(n);
        for (std::int64_t i = 0; i < n; ++i) hx[i] = static_cast<S>(static_cast<C>(i % 29) * C(0.25) - C(3));
        for (std::int64_t i = 0; i < ng; ++i) hg[i] = static_cast<S>(static_cast<C>(i % 23) * C(0.5) - C(6));
        void* dx = dev.alloc(n * sizeof(S));
        void* dg = dev.alloc(ng * sizeof(S));
        void* dout = dev.alloc(n * sizeof(S));
        dev.copy_from_host(dx, hx.data(), n * sizeof(S));
        dev.copy_from_host(dg, hg.data(), ng * sizeof(S));
        auto const ref = [&](void* p, bool gate, device_kind k, char const* name) {
            return gate && broadcast ? sy::strided_ref::contiguous(p, D, k, {cols}, name)
                                     : sy::strided_ref::contiguous(p, D, k, {rows, cols}, name);
        };
        // Exact before its rounding to S (v * 0.5 is exact), so the devices agree bitwise.
        auto const half_plus_one = [] SWITCHYARD_HOST_DEVICE(C g) { return g * C(0.5) + C(1); };
        auto const mul = [] SWITCHYARD_HOST_DEVICE(C a, C b) { return a * b; };
        {
            sy::cuda_stream_scope scope(stream);
            sy::transform(gpu{}, ref(dout, false, device_kind::cuda, "out"), mul,
                          ref(dx, false, device_kind::cuda, "x"),
                          sy::mapped(ref(dg, true, device_kind::cuda, "gate"), half_plus_one));
        }
        sy::transform(cpu{}, ref(want.data(), false, device_kind::cpu, "out"), mul,
                      ref(hx.data(), false, device_kind::cpu, "x"),
                      sy::mapped(ref(hg.data(), true, device_kind::cpu, "gate"), half_plus_one));
        dev.copy_to_host(got.data(), dout, n * sizeof(S));
        bool const same = std::memcmp(got.data(), want.data(), n * sizeof(S)) == 0;
        if (!same)
            std::printf("transform mapped %s (%s gate) differs from the CPU\n", label,
                        broadcast ? "per-column" : "full");
        CHECK(same);
        dev.free(dx);
        dev.free(dg);
        dev.free(dout);
    }
    dev.sync();
    sy::cuda_check(cudaStreamDestroy(stream), "cudaStreamDestroy");
}

// transform_reduce on CUDA against the same reduction on the CPU (a
// different order, so within a tolerance; exact for integers, amax, argmin
// and argmax), the
// same bits on every call, for an aligned and a misaligned copy of the input
// (the vector and scalar paths combine in one order) and on another stream;
// row (a warp or less per row, a block per task), column, several-dimension,
// full, rank-0 and empty reductions.
template <dtype D>
void test_reduce(char const* label) {
    using S = sy::dtype_storage_t<D>;
    using C = sy::dtype_compute_t<D>;
    using gpu = sy::tag<device_kind::cuda, D>;
    using cpu = sy::tag<device_kind::cpu, D>;
    constexpr std::int64_t L = 16 / sizeof(S);  // values per 16-byte chunk
    struct reduce_case {
        char const* what;
        std::vector<std::int64_t> sizes, strides, out_sizes;
        std::vector<std::int64_t> dims;  // empty: all_dims
    };
    std::vector<reduce_case> cases = {
        {"all of 2^20 + 3", {(1 << 20) + 3}, {1}, {}, {}},
        {"long rows", {37, 50000}, {50000, 1}, {37}, {-1}},
        {"short rows", {1000, 13}, {13, 1}, {1000}, {1}},
        // A warp or less per row up to 1024 chunks of 16 bytes, a block per task past it.
        {"rows of 1 chunk", {300, L}, {L, 1}, {300}, {1}},
        {"rows of 3 values", {300, 3}, {3, 1}, {300}, {1}},
        {"rows of 33 values", {777, 33}, {33, 1}, {777}, {1}},
        {"rows of 37 chunks and 3 values", {300, 37 * L + 3}, {37 * L + 3, 1}, {300}, {1}},
        {"rows of 1024 chunks", {40, 1024 * L}, {1024 * L, 1}, {40}, {1}},
        {"rows of 1024 chunks and 1 value", {40, 1024 * L + 1}, {1024 * L + 1, 1}, {40}, {1}},
        {"padded rows of 300 values", {50, 300}, {307, 1}, {50}, {1}},
        // 6250 blocks of 8 rows: past the short-row grid's cap (32 blocks per SM
        // up to 195 SMs), so blocks loop over groups of rows.
        {"50000 rows of 257 values", {50000, 257}, {257, 1}, {50000}, {1}},
        {"rows along a stride-0 dim", {100, 700}, {1, 0}, {100}, {1}},
        {"columns", {5000, 37}, {37, 1}, {37}, {0}},
        {"middle of rank 3", {5, 600, 7}, {4200, 7, 1}, {5, 7}, {1}},
        {"transposed rows", {64, 96}, {1, 64}, {64}, {1}},
        {"first and last of rank 3", {6, 50, 40}, {2000, 40, 1}, {50}, {0, 2}},
        {"rank 0", {}, {}, {}, {}},
        {"empty rows", {4, 0}, {1, 1}, {4}, {1}},
    };
    // 4096 tasks and 5 values: the partials kernel's 1024-thread block
    // (reduce_partials_wide_tasks); 128 MiB, too slow under the sanitizers.
    // Floats only: the squares' int32 sum would overflow.
    if (!under_sanitizer && !std::is_integral_v<C>)
        cases.push_back({"all of 4096 tasks", {4096 * 2048 * L + 5}, {1}, {}, {}});
    sy::cuda_device dev{0};
    int wrong = 0;
    for (auto const& c : cases) {
        std::int64_t extent = 2;  // one spare element: the misaligned copy starts at element 1
        for (std::size_t d = 0; d < c.sizes.size(); ++d) extent += (c.sizes[d] - 1) * c.strides[d];
        for (auto s : c.sizes)
            if (s == 0) extent = 2;
        std::int64_t n_out = 1;
        for (auto s : c.out_sizes) n_out *= s;
        std::vector<S> hx(extent);
        // Floats in sevenths: their sums depend on the order (the bitwise
        // checks below then tell the vector and scalar paths' orders apart).
        C const scale = std::is_integral_v<C> ? C(1) : C(1) / C(7);
        for (std::int64_t i = 0; i < extent; ++i) hx[i] = static_cast<S>((static_cast<C>(i % 29) - C(9)) * scale);
        std::vector<S> shifted(extent);  // the same values one element later
        for (std::int64_t i = 0; i + 1 < extent; ++i) shifted[i + 1] = hx[i];
        void* dx = dev.alloc(extent * sizeof(S));
        void* dshift = dev.alloc(extent * sizeof(S));
        void* dout = dev.alloc(std::max<std::int64_t>(n_out, 1) * sizeof(S));
        dev.copy_from_host(dx, hx.data(), extent * sizeof(S));
        dev.copy_from_host(dshift, shifted.data(), extent * sizeof(S));
        auto in = [&](void* base, std::int64_t offset, device_kind k) {
            return sy::strided_ref::make(static_cast<S*>(base) + offset, D, k, c.sizes.data(), c.strides.data(),
                                         static_cast<std::int64_t>(c.sizes.size()), "x");
        };
        std::vector<std::int64_t> out_strides(c.out_sizes.size());
        sy::strided_ref::row_major_strides(c.out_sizes.data(), static_cast<std::int64_t>(c.out_sizes.size()),
                                           out_strides.data());
        auto out = [&](void* base, device_kind k) {
            return sy::strided_ref::make(base, D, k, c.out_sizes.data(), out_strides.data(),
                                         static_cast<std::int64_t>(c.out_sizes.size()), "out");
        };
        sy::dims const over = c.dims.empty() ? sy::all_dims : sy::dims(c.dims.data(), c.dims.size());
        auto const square = [] SWITCHYARD_HOST_DEVICE(C v) { return v * v; };
        std::vector<S> want(n_out), got(n_out), again(n_out), other(n_out);
        sy::transform_reduce(cpu{}, out(want.data(), device_kind::cpu), over, sy::sum, square,
                             in(hx.data(), 0, device_kind::cpu));
        sy::transform_reduce(gpu{}, out(dout, device_kind::cuda), over, sy::sum, square, in(dx, 0, device_kind::cuda));
        dev.copy_to_host(got.data(), dout, n_out * sizeof(S));
        sy::transform_reduce(gpu{}, out(dout, device_kind::cuda), over, sy::sum, square, in(dx, 0, device_kind::cuda));
        dev.copy_to_host(again.data(), dout, n_out * sizeof(S));
        {
            cudaStream_t stream = nullptr;
            cudaStreamCreate(&stream);
            sy::cuda_stream_scope scope(stream);
            sy::transform_reduce(gpu{}, out(dout, device_kind::cuda), over, sy::sum, square,
                                 in(dshift, 1, device_kind::cuda));
            cudaStreamSynchronize(stream);
            cudaStreamDestroy(stream);
        }
        dev.copy_to_host(other.data(), dout, n_out * sizeof(S));
        bool const same_bits = std::memcmp(got.data(), again.data(), n_out * sizeof(S)) == 0 &&
                               std::memcmp(got.data(), other.data(), n_out * sizeof(S)) == 0;
        int close = 0;
        for (std::int64_t i = 0; i < n_out; ++i) {
            double const g = static_cast<double>(static_cast<C>(got[i])),
                         w = static_cast<double>(static_cast<C>(want[i]));
            double const tolerance = std::is_integral_v<C> ? 0.0 : (sizeof(S) == 2 ? 1e-2 : 1e-5) * std::fabs(w);
            close += std::fabs(g - w) <= tolerance || (std::isinf(g) && g == w);
        }
        // amax is exact whatever the order.
        std::vector<S> max_want(n_out), max_got(n_out);
        bool max_same = true;
        if (!c.sizes.empty() && c.sizes.back() != 0) {
            sy::reduce(cpu{}, out(max_want.data(), device_kind::cpu), over, sy::amax,
                       in(hx.data(), 0, device_kind::cpu));
            sy::reduce(gpu{}, out(dout, device_kind::cuda), over, sy::amax, in(dx, 0, device_kind::cuda));
            dev.copy_to_host(max_got.data(), dout, n_out * sizeof(S));
            max_same = std::memcmp(max_want.data(), max_got.data(), n_out * sizeof(S)) == 0;
        }
        // argmax and argmin are exact too (the values repeat: ties take the
        // first index), also with a NaN, through the map and the partials.
        bool arg_same = true;
        if (c.sizes.empty() || c.sizes.back() != 0) {
            if constexpr (!std::is_integral_v<C>) {
                std::vector<S> with_nan = shifted;
                with_nan[static_cast<std::size_t>(extent / 2)] = static_cast<S>(std::numeric_limits<C>::quiet_NaN());
                dev.copy_from_host(dshift, with_nan.data(), extent * sizeof(S));
            }
            std::vector<std::int64_t> index_want(n_out), index_got(n_out);
            void* dindex = dev.alloc(std::max<std::int64_t>(n_out, 1) * sizeof(std::int64_t));
            auto index_out = [&](void* base, device_kind k) {
                return sy::strided_ref::make(base, dtype::i64, k, c.out_sizes.data(), out_strides.data(),
                                             static_cast<std::int64_t>(c.out_sizes.size()), "index");
            };
            auto const negate = [] SWITCHYARD_HOST_DEVICE(C v) { return -v; };
            auto compare = [&](auto const& combine, bool mapped, bool nan) {
                std::vector<S> host_x = shifted;
                if (nan) dev.copy_to_host(host_x.data(), dshift, extent * sizeof(S));
                auto const hin = in(nan ? host_x.data() : hx.data(), nan ? 1 : 0, device_kind::cpu);
                auto const din = in(nan ? dshift : dx, nan ? 1 : 0, device_kind::cuda);
                if (mapped) {
                    sy::transform_reduce(cpu{}, index_out(index_want.data(), device_kind::cpu), over, combine, negate,
                                         hin);
                    sy::transform_reduce(gpu{}, index_out(dindex, device_kind::cuda), over, combine, negate, din);
                } else {
                    sy::reduce(cpu{}, index_out(index_want.data(), device_kind::cpu), over, combine, hin);
                    sy::reduce(gpu{}, index_out(dindex, device_kind::cuda), over, combine, din);
                }
                dev.copy_to_host(index_got.data(), dindex, n_out * sizeof(std::int64_t));
                arg_same = arg_same && index_want == index_got;
            };
            compare(sy::argmax, false, false);
            compare(sy::argmin, true, false);
            compare(sy::argmax, false, !std::is_integral_v<C>);
            compare(sy::argmin, true, !std::is_integral_v<C>);
            dev.free(dindex);
        }
        if (!same_bits || close != n_out || !max_same || !arg_same) {
            std::printf(
                "transform_reduce %s %s: same bits %d, %d of %lld close to the CPU, amax %d, argmin/argmax %d\n", label,
                c.what, same_bits, close, static_cast<long long>(n_out), max_same, arg_same);
            ++wrong;
        }
        dev.free(dx);
        dev.free(dshift);
        dev.free(dout);
    }
    CHECK(wrong == 0);
    // argmax and argmin over rows whose 16-byte chunks hold ties, NaNs and
    // signed zeros, aligned so the chunk path folds them: a warp per row
    // (one and several chunks per lane) and a block per task. Even rows have
    // no NaN; rows 1, 4, ... rise every 37 values (later chunks win); rows
    // 2, 5, ... are at most zero (-0 and +0 tie).
    for (std::int64_t const cols : {17 * L, 100 * L, 1100 * L}) {
        std::int64_t const rows = 30;
        C const nan = std::numeric_limits<C>::has_quiet_NaN ? std::numeric_limits<C>::quiet_NaN() : C(7);
        C const pattern[13] = {C(3), C(7), C(7), C(1), -C(0), C(0), nan, C(2), nan, C(7), -C(1), C(7), C(0)};
        std::vector<S> host(static_cast<std::size_t>(rows * cols));
        for (std::int64_t r = 0; r < rows; ++r)
            for (std::int64_t i = 0; i < cols; ++i) {
                C v = pattern[(i + 3 * r) % 13];
                if constexpr (!std::is_integral_v<C>)
                    if (r % 2 == 0 && std::isnan(v)) v = C(7);
                if (r % 3 == 1) v = v + static_cast<C>(10 * (i / 37));
                if (r % 3 == 2 && v > C(0)) v = -v;
                host[static_cast<std::size_t>(r * cols + i)] = static_cast<S>(v);
            }
        void* dx = dev.alloc(rows * cols * sizeof(S));
        void* dindex = dev.alloc(rows * sizeof(std::int64_t));
        dev.copy_from_host(dx, host.data(), rows * cols * sizeof(S));
        auto const x_on = [&](void* base, device_kind k) {
            return sy::strided_ref::contiguous(base, D, k, {rows, cols}, "x");
        };
        auto const index_on = [&](void* base, device_kind k) {
            return sy::strided_ref::contiguous(base, dtype::i64, k, {rows}, "index");
        };
        auto const compare = [&](auto const& combine, char const* name) {
            std::vector<std::int64_t> want(rows), got(rows);
            sy::reduce(cpu{}, index_on(want.data(), device_kind::cpu), sy::dims{1}, combine,
                       x_on(host.data(), device_kind::cpu));
            sy::reduce(gpu{}, index_on(dindex, device_kind::cuda), sy::dims{1}, combine, x_on(dx, device_kind::cuda));
            dev.copy_to_host(got.data(), dindex, rows * sizeof(std::int64_t));
            if (want != got)
                std::printf("%s %s over rows of %lld with ties and NaNs differs from the CPU\n", name, label,
                            static_cast<long long>(cols));
            CHECK(want == got);
        };
        compare(sy::argmax, "argmax");
        compare(sy::argmin, "argmin");
        dev.free(dx);
        dev.free(dindex);
    }
    // Errors before any work: a CPU input with a CUDA tag.
    std::vector<S> host(4);
    auto const cpu_x = sy::strided_ref::contiguous(host.data(), D, device_kind::cpu, {4}, "x");
    S* dummy = static_cast<S*>(dev.alloc(sizeof(S)));
    auto const gpu_out = sy::strided_ref::contiguous(dummy, D, device_kind::cuda, {}, "out");
    CHECK(message_of([&] {
              sy::reduce(gpu{}, gpu_out, sy::all_dims, sy::sum, cpu_x);
          }).starts_with("reduce: input 'x' is on cpu but the tag names device cuda"));
    dev.free(dummy);
}

// transform_rows (softmax; a layernorm with a gain broadcast along the row;
// three statistics; none; softmax with the sum's values handed to f; two
// statistics' values handed to f) against
// the CPU's: close, and the same bits run
// to run, on another stream, from a misaligned copy (value-by-value loads at
// the same positions) and in place.
template <dtype D>
void test_transform_rows(char const* label) {
    using S = sy::dtype_storage_t<D>;
    using C = sy::dtype_compute_t<D>;
    using gpu = sy::tag<device_kind::cuda, D>;
    using cpu = sy::tag<device_kind::cpu, D>;
    struct rows_case {
        char const* what;
        std::vector<std::int64_t> sizes, strides;
        bool x_broadcast = false;  // x repeats along the row: out is row-major, not in place
    };
    std::vector<rows_case> const cases = {
        {"rows of 1000", {64, 1000}, {1000, 1}},
        {"rows at register capacity", {300, 4096}, {4096, 1}},
        {"long rows", {5, 50000}, {50000, 1}},
        {"short rows", {1000, 13}, {13, 1}},
        {"transposed", {64, 96}, {1, 64}},
        {"reversed rows", {4, 100}, {100, -1}},
        {"every other column", {8, 50}, {100, 2}},
        {"x broadcast along the row", {6, 40}, {1, 0}, true},
        {"rank 3", {3, 5, 300}, {1500, 300, 1}},
        {"rank 3, a gap between blocks of rows", {3, 5, 300}, {1600, 300, 1}},  // rows indexed by two dimensions
        {"rank 0", {}, {}},
        {"empty rows", {4, 0}, {1, 1}},
    };
    sy::cuda_device dev{0};
    int wrong = 0;
    for (auto const& c : cases) {
        // The elements' reach either way from the origin, plus one spare
        // element: the misaligned copy starts one element later.
        std::int64_t numel = 1, lo = 0, hi = 0;
        for (std::size_t d = 0; d < c.sizes.size(); ++d) {
            numel *= c.sizes[d];
            std::int64_t const reach = c.sizes[d] > 0 ? (c.sizes[d] - 1) * c.strides[d] : 0;
            (reach < 0 ? lo : hi) += reach;
        }
        std::int64_t const origin = -lo, extent = hi - lo + 2;
        auto const rank = static_cast<std::int64_t>(c.sizes.size());
        std::vector<std::int64_t> out_strides(c.sizes.size());
        sy::strided_ref::row_major_strides(c.sizes.data(), rank, out_strides.data());
        std::vector<std::int64_t> const& o_strides = c.x_broadcast ? out_strides : c.strides;
        std::int64_t const n = c.sizes.empty() ? 1 : c.sizes.back();
        std::vector<S> hx(extent), shifted(extent), hgain(std::max<std::int64_t>(n, 1));
        for (std::int64_t i = 0; i < extent; ++i) hx[i] = static_cast<S>(static_cast<C>(i % 29) * C(0.25) - C(2));
        for (std::int64_t i = 0; i + 1 < extent; ++i) shifted[i + 1] = hx[i];
        for (std::size_t j = 0; j < hgain.size(); ++j) hgain[j] = static_cast<S>(C(0.5) + static_cast<C>(j % 3));
        std::int64_t const out_extent = std::max<std::int64_t>(extent, numel + 2);
        void* dx = dev.alloc(extent * sizeof(S));
        void* dshift = dev.alloc(extent * sizeof(S));
        void* dgain = dev.alloc(hgain.size() * sizeof(S));
        void* dout = dev.alloc(out_extent * sizeof(S));
        dev.copy_from_host(dx, hx.data(), extent * sizeof(S));
        dev.copy_from_host(dshift, shifted.data(), extent * sizeof(S));
        dev.copy_from_host(dgain, hgain.data(), hgain.size() * sizeof(S));
        auto x_ref = [&](void* base, std::int64_t offset, device_kind k) {
            return sy::strided_ref::make(static_cast<S*>(base) + origin + offset, D, k, c.sizes.data(),
                                         c.strides.data(), rank, "x");
        };
        auto out_ref = [&](void* base, std::int64_t offset, device_kind k) {
            return sy::strided_ref::make(static_cast<S*>(base) + origin + offset, D, k, c.sizes.data(),
                                         o_strides.data(), rank, "out");
        };
        std::int64_t const gain_rank = c.sizes.empty() ? 0 : 1, one = 1;
        auto gain = [&](void* base, device_kind k) {
            return sy::strided_ref::make(base, D, k, &n, &one, gain_rank, "gain");
        };
        auto const shifted_exp = [] SWITCHYARD_HOST_DEVICE(C v, C max) { return sy::exp(v - max); };
        auto const normalized = [] SWITCHYARD_HOST_DEVICE(C v, C max, C sum) { return sy::exp(v - max) / sum; };
        auto const softmax_stats = sy::row_stats(sy::amax, sy::row_stat(sy::sum, shifted_exp));
        C const inv_n = C(1) / static_cast<C>(n > 0 ? n : 1);
        auto const mean_term = [inv_n] SWITCHYARD_HOST_DEVICE(C v, C) { return v * inv_n; };
        auto const variance_term = [inv_n] SWITCHYARD_HOST_DEVICE(C v, C, C mean) {
            return (v - mean) * (v - mean) * inv_n;
        };
        auto const normalize = [] SWITCHYARD_HOST_DEVICE(C v, C g, C mean, C variance) {
            return (v - mean) / sy::sqrt(variance + C(1e-5)) * g;
        };
        auto const norm_stats = sy::row_stats(sy::row_stat(sy::sum, mean_term), sy::row_stat(sy::sum, variance_term));
        // Three statistics: the shared memory of the block's fold is reused.
        auto const above_min = [inv_n] SWITCHYARD_HOST_DEVICE(C v, C, C lo) { return (v - lo) * inv_n; };
        auto const three_stats = sy::row_stats(sy::amax, sy::amin, sy::row_stat(sy::sum, above_min));
        auto const scaled = [] SWITCHYARD_HOST_DEVICE(C v, C hi, C lo, C mean) {
            return (v - lo) / (hi - lo + C(1)) + mean;
        };
        auto const affine = [] SWITCHYARD_HOST_DEVICE(C v) { return v * C(2) + C(1); };
        // The sum's values handed to f: kept (in shared memory on CUDA where
        // the row is resident), or computed again for longer rows.
        auto const kept_stats = sy::row_stats(sy::amax, sy::row_stat(sy::sum, shifted_exp).with_values());
        auto const kept_normalized = [] SWITCHYARD_HOST_DEVICE(C, C e, C, C sum) { return e / sum; };
        // Two statistics' values (f64: more than CUDA keeps, so computed again).
        auto const x_term = [inv_n] SWITCHYARD_HOST_DEVICE(C v) { return v * inv_n; };
        auto const x_square = [inv_n] SWITCHYARD_HOST_DEVICE(C v, C mean) { return (v - mean) * (v - mean) * inv_n; };
        auto const two_kept_stats =
            sy::row_stats(sy::row_stat(sy::sum, x_term).with_values(), sy::row_stat(sy::sum, x_square).with_values());
        auto const two_kept = [] SWITCHYARD_HOST_DEVICE(C v, C term, C square, C mean, C variance) {
            return term - square + (v - mean) * variance;
        };
        constexpr int programs = 6;
        bool all_same = true;
        int close = 0;
        for (int which = 0; which < programs; ++which) {
            auto run = [&](auto tag, void* out, void* x, std::int64_t offset, void* g, device_kind k) {
                auto const o = out_ref(out, offset, k);
                auto const xs = x_ref(x, offset, k);
                if (which == 0) sy::transform_rows(tag, o, softmax_stats, normalized, xs);
                if (which == 1) sy::transform_rows(tag, o, norm_stats, normalize, xs, gain(g, k));
                if (which == 2) sy::transform_rows(tag, o, three_stats, scaled, xs);
                if (which == 3) sy::transform_rows(tag, o, sy::row_stats(), affine, xs);
                if (which == 4) sy::transform_rows(tag, o, kept_stats, kept_normalized, xs);
                if (which == 5) sy::transform_rows(tag, o, two_kept_stats, two_kept, xs);
            };
            std::vector<S> want(out_extent), got(out_extent), again(out_extent), other(out_extent), in_place(extent);
            run(cpu{}, want.data(), hx.data(), 0, hgain.data(), device_kind::cpu);
            run(gpu{}, dout, dx, 0, dgain, device_kind::cuda);
            dev.copy_to_host(got.data(), dout, out_extent * sizeof(S));
            run(gpu{}, dout, dx, 0, dgain, device_kind::cuda);
            dev.copy_to_host(again.data(), dout, out_extent * sizeof(S));
            {
                cudaStream_t stream = nullptr;
                cudaStreamCreate(&stream);
                sy::cuda_stream_scope scope(stream);
                run(gpu{}, dout, dshift, 1, dgain, device_kind::cuda);
                cudaStreamSynchronize(stream);
                cudaStreamDestroy(stream);
            }
            dev.copy_to_host(other.data(), dout, out_extent * sizeof(S));
            if (!c.x_broadcast) {
                run(gpu{}, dshift, dshift, 1, dgain, device_kind::cuda);  // in place
                dev.copy_to_host(in_place.data(), dshift, extent * sizeof(S));
                dev.copy_from_host(dshift, shifted.data(), extent * sizeof(S));
            }
            // Compare the elements the output covers.
            for (std::int64_t i = 0; i < numel; ++i) {
                std::int64_t rest = i, offset = origin;
                for (std::size_t d = c.sizes.size(); d-- > 0;) {
                    offset += rest % c.sizes[d] * o_strides[d];
                    rest /= c.sizes[d];
                }
                all_same = all_same && std::memcmp(&got[offset], &again[offset], sizeof(S)) == 0 &&
                           std::memcmp(&got[offset], &other[offset + 1], sizeof(S)) == 0 &&
                           (c.x_broadcast || std::memcmp(&got[offset], &in_place[offset + 1], sizeof(S)) == 0);
                double const g = static_cast<double>(static_cast<C>(got[offset])),
                             w = static_cast<double>(static_cast<C>(want[offset]));
                double const scale = which == 0 || which == 4 ? 1e-6 : 1.0;
                close += std::fabs(g - w) <= (sizeof(S) == 2 ? 1e-2 : 1e-5) * (std::fabs(w) + scale);
            }
        }
        if (!all_same || close != programs * numel) {
            std::printf("transform_rows %s %s: same bits %d, %d of %lld close to the CPU\n", label, c.what, all_same,
                        close, static_cast<long long>(programs * numel));
            ++wrong;
        }
        dev.free(dx);
        dev.free(dshift);
        dev.free(dgain);
        dev.free(dout);
    }
    CHECK(wrong == 0);
}

}  // namespace

int main() {
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
        std::printf("no CUDA device visible: skipped\n");
        return 77;
    }
    try {
        test_device();
        test_dtype<dtype::f32>("f32");
        test_dtype<dtype::f64>("f64");
        test_dtype<dtype::f16>("f16");
        test_dtype<dtype::bf16>("bf16");
        test_dtype<dtype::i32>("i32");
        test_dtype<dtype::u8>("u8");
        test_block_sizes_and_streams();
        if (!under_sanitizer) test_64bit_count();
        test_math_on_device();
        test_softplus_f64_on_device();
        test_storage_math<sy::half>("f16", 10, -14, 6);
        test_storage_math<sy::bfloat16>("bf16", 7, -126, 6);
        test_storage_math<sy::half>("f16", 10, -14, 5);
        test_storage_math<sy::bfloat16>("bf16", 7, -126, 5);
        test_storage_math<sy::half>("f16", 10, -14, 0);
        test_storage_math<sy::bfloat16>("bf16", 7, -126, 0);
        test_lazy_chain();
        test_transform<dtype::f32>("f32");
        test_transform<dtype::f64>("f64");
        test_transform<dtype::f16>("f16");
        test_transform<dtype::bf16>("bf16");
        test_transform<dtype::i32>("i32");
        test_transform<dtype::u8>("u8");  // 1- and 8-byte chunks: packed words
        test_transform<dtype::i64>("i64");
        test_for_each_count_check();
        test_transform_mapped<dtype::f32>("f32");
        test_transform_mapped<dtype::f16>("f16");
        test_transform_mapped<dtype::bf16>("bf16");
        test_reduce<dtype::f32>("f32");
        test_reduce<dtype::f64>("f64");
        test_reduce<dtype::f16>("f16");
        test_reduce<dtype::bf16>("bf16");
        test_reduce<dtype::i32>("i32");
        test_reduce<dtype::i8>("i8");
        test_reduce<dtype::i64>("i64");
        test_transform_rows<dtype::f32>("f32");
        test_transform_rows<dtype::f64>("f64");
        test_transform_rows<dtype::f16>("f16");
        test_transform_rows<dtype::bf16>("bf16");
    } catch (std::exception const& e) {
        std::printf("FAIL: unexpected exception: %s\n", e.what());
        return 1;
    }
    std::printf("%d checks, %d failed\n", checks, failures);
    return failures == 0 ? 0 : 1;
}
