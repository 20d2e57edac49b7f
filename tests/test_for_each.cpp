// Tests of for_each on the CPU: every dtype and both contiguities through a
// dispatch table (the way ops use it), edge counts, errors, exceptions,
// scheduling and device values of a foreign enum.
#include <switchyard/for_each.h>
#include <switchyard/switchyard.h>
#include <switchyard/view.h>

#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <memory>
#include <cstdint>
#include <stdexcept>
#include <vector>

using namespace switchyard;

namespace {

// out = in * 2 + 1 in the compute type: one impl for every dtype and layout.
struct affine_op {
    template <typename Tag>
    requires with_type<Tag, dtype> && with_type<Tag, contiguity> && with_value<Tag, device_kind::cpu>
    static void op(Tag tag, strided_ref const& in_ref, strided_ref const& out_ref) {
        constexpr auto dt = tag_get<dtype>(Tag{});
        constexpr auto c = tag_get<contiguity>(Tag{});
        using storage = dtype_storage_t<dt>;
        using compute = dtype_compute_t<dt>;
        auto const order = iteration_order_of(out_ref, in_ref);
        flat_in<device_kind::cpu, dt, c> const in(in_ref, order);
        flat_out<device_kind::cpu, dt, c> const out(out_ref, order);
        for_each(tag, out.size(), [=](auto, std::int64_t i) {
            out[i] = static_cast<storage>(static_cast<compute>(in[i]) * compute(2) + compute(1));
        });
    }
    using space = axes<axis<device_kind::cpu>, full_dtype_axis, full_contiguity_axis>;
    using subspaces = coverage<space>;
    using dispatcher = dispatch_table<space, void(strided_ref const&, strided_ref const&)>;
};

template <dtype D>
void check_dtype() {
    using storage = dtype_storage_t<D>;
    using compute = dtype_compute_t<D>;
    static auto const table = dispatch_table_from_op<affine_op>("affine");
    auto expect = [](storage x) { return static_cast<storage>(static_cast<compute>(x) * compute(2) + compute(1)); };
    auto same = [](storage a, storage b) {
        return static_cast<double>(static_cast<compute>(a)) == static_cast<double>(static_cast<compute>(b));
    };

    // 300 x 70: large enough to run in parallel chunks.
    std::int64_t const rows = 300, cols = 70, n = rows * cols;
    // Not std::vector: vector<bool> has no data().
    std::unique_ptr<storage[]> in(new storage[n]()), out(new storage[n]());
    for (std::int64_t i = 0; i < n; ++i)
        in[static_cast<std::size_t>(i)] = static_cast<storage>(static_cast<compute>(i % 7));

    SECTION("contiguous") {
        auto const x = strided_ref::contiguous(in.get(), D, device_kind::cpu, {rows, cols}, "x");
        auto const y = strided_ref::contiguous(out.get(), D, device_kind::cpu, {rows, cols}, "y");
        table.select(dispatch_set{device_kind::cpu, D, combined_contiguity(y, x)})(x, y);
        for (std::int64_t i = 0; i < n; ++i)
            REQUIRE(same(out[static_cast<std::size_t>(i)], expect(in[static_cast<std::size_t>(i)])));
    }
    SECTION("transposed input, row-major output: strided") {
        auto const xt = strided_ref::make(in.get(), D, device_kind::cpu, {cols, rows}, {1, cols}, "xt");
        auto const y = strided_ref::contiguous(out.get(), D, device_kind::cpu, {cols, rows}, "y");
        REQUIRE(combined_contiguity(y, xt) == contiguity::strided);
        table.select(dispatch_set{device_kind::cpu, D, contiguity::strided})(xt, y);
        for (std::int64_t c = 0; c < cols; ++c)
            for (std::int64_t r = 0; r < rows; ++r)
                REQUIRE(same(out[static_cast<std::size_t>(c * rows + r)],
                             expect(in[static_cast<std::size_t>(r * cols + c)])));
    }
    SECTION("transposed input and output: dense together, contiguous path") {
        auto const xt = strided_ref::make(in.get(), D, device_kind::cpu, {cols, rows}, {1, cols}, "xt");
        auto const yt = strided_ref::make(out.get(), D, device_kind::cpu, {cols, rows}, {1, cols}, "yt");
        REQUIRE(combined_contiguity(yt, xt) == contiguity::contiguous);
        table.select(dispatch_set{device_kind::cpu, D, contiguity::contiguous})(xt, yt);
        for (std::int64_t i = 0; i < n; ++i)
            REQUIRE(same(out[static_cast<std::size_t>(i)], expect(in[static_cast<std::size_t>(i)])));
    }
    SECTION("broadcast input (stride 0)") {
        auto const b = strided_ref::make(in.get(), D, device_kind::cpu, {rows, cols}, {0, 1}, "b");
        auto const y = strided_ref::contiguous(out.get(), D, device_kind::cpu, {rows, cols}, "y");
        table.select(dispatch_set{device_kind::cpu, D, combined_contiguity(y, b)})(b, y);
        for (std::int64_t r = 0; r < rows; ++r)
            for (std::int64_t c = 0; c < cols; ++c)
                REQUIRE(same(out[static_cast<std::size_t>(r * cols + c)], expect(in[static_cast<std::size_t>(c)])));
    }
}

}  // namespace

TEST_CASE("for_each runs one impl for every dtype and layout", "[for_each]") {
    SECTION("bool") { check_dtype<dtype::boolean>(); }
    SECTION("u8") { check_dtype<dtype::u8>(); }
    SECTION("i8") { check_dtype<dtype::i8>(); }
    SECTION("i16") { check_dtype<dtype::i16>(); }
    SECTION("i32") { check_dtype<dtype::i32>(); }
    SECTION("i64") { check_dtype<dtype::i64>(); }
    SECTION("f16") { check_dtype<dtype::f16>(); }
    SECTION("bf16") { check_dtype<dtype::bf16>(); }
    SECTION("f32") { check_dtype<dtype::f32>(); }
    SECTION("f64") { check_dtype<dtype::f64>(); }
}

TEST_CASE("for_each visits each index once, for any count", "[for_each]") {
    using cpu = tag<device_kind::cpu>;
    for (std::int64_t n : {0, 1, 2, 3, 1000, 4097, 1 << 20}) {
        std::vector<std::atomic<int>> hits(static_cast<std::size_t>(n));
        for_each(cpu{}, n, [&](auto, std::int64_t i) { hits[static_cast<std::size_t>(i)].fetch_add(1); });
        for (auto const& h : hits) REQUIRE(h.load() == 1);
        // the same through a broadcast pool
        std::vector<std::atomic<int>> again(static_cast<std::size_t>(n));
        for_each(tag<device_kind::cpu, scheduling::uniform>{}, n,
                 [&](auto, std::int64_t i) { again[static_cast<std::size_t>(i)].fetch_add(1); });
        for (auto const& h : again) REQUIRE(h.load() == 1);
    }
}

// Closures that capture contiguous views take the prefetching block loop
// (blocks of 64 plus a tail); every index must still be visited once.
TEST_CASE("for_each with captured views visits each index once, for any count", "[for_each]") {
    for (std::int64_t n : {0, 1, 63, 64, 65, 4097, (1 << 20) + 5}) {
        std::vector<std::int32_t> hits(static_cast<std::size_t>(n), 0);
        auto const ref = strided_ref::contiguous(hits.data(), dtype::i32, device_kind::cpu, {n}, "hits");
        flat_out<device_kind::cpu, dtype::i32, contiguity::contiguous> const out(ref);
        REQUIRE(detail::find_streams([=](auto, std::int64_t i) { out[i] += 1; }).count == (n > 0 ? 1 : 0));
        for_each(tag<device_kind::cpu>{}, n, [=](auto, std::int64_t i) { out[i] += 1; });
        for_each(tag<device_kind::cpu, scheduling::uniform>{}, n, [=](auto, std::int64_t i) { out[i] += 1; });
        INFO("n = " << n);
        REQUIRE(std::count(hits.begin(), hits.end(), 2) == n);
    }
}

// A count beyond a captured output view's extent would write past its
// buffer: the CPU refuses it before running anything (CUDA too; WebGPU checks
// every binding). Inputs may be read at other indices and are not checked.
TEST_CASE("for_each on the cpu refuses a count beyond a captured output view's elements", "[for_each]") {
    std::vector<float> buffer(100, -1.0f);
    auto const ref = strided_ref::contiguous(buffer.data(), dtype::f32, device_kind::cpu, {64}, "out");
    flat_out<device_kind::cpu, dtype::f32, contiguity::contiguous> const out(ref);
    std::vector<float> source(10, 3.0f);
    auto const strided = strided_ref::make(source.data(), dtype::f32, device_kind::cpu, {5}, {2}, "in");
    flat_in<device_kind::cpu, dtype::f32, contiguity::strided> const in(strided);
    auto const fill = [=](auto, std::int64_t i) { out[i] = 2.0f; };
    REQUIRE(detail::find_streams(fill).count == 1);
    CHECK(detail::find_streams(fill).extent[0] == 64);
    CHECK_THROWS_WITH(for_each(tag<device_kind::cpu>{}, 65, fill),
                      "for_each on cpu: count is 65 but a captured flat_out view has 64 elements");
    work_stealing_pool pool(2);
    CHECK_THROWS_AS(for_each(pool, tag<device_kind::cpu>{}, 1000, fill), std::invalid_argument);
    CHECK(std::count(buffer.begin(), buffer.end(), -1.0f) == 100);  // nothing ran
    for_each(tag<device_kind::cpu>{}, 64, fill);
    CHECK(std::count(buffer.begin(), buffer.end(), 2.0f) == 64);
    CHECK(buffer[64] == -1.0f);
    // Upsampling reads the 5-element input at i / 2 for 10 indices: allowed.
    REQUIRE(detail::find_streams([=](auto, std::int64_t i) { out[i] = in[i / 2]; }).extent[1] == 5);
    for_each(tag<device_kind::cpu>{}, 10, [=](auto, std::int64_t i) { out[i] = in[i / 2]; });
    CHECK(std::count(buffer.begin(), buffer.begin() + 10, 3.0f) == 10);
}

TEST_CASE("for_each reports bad counts and rethrows kernel exceptions", "[for_each]") {
    using cpu = tag<device_kind::cpu>;
    CHECK_THROWS_WITH(for_each(cpu{}, -5, [](auto, std::int64_t) {}),
                      Catch::Equals("for_each: count is -5; it must be >= 0"));
    std::atomic<std::int64_t> after{0};
    CHECK_THROWS_WITH(for_each(cpu{}, 1 << 22,
                               [&](auto, std::int64_t i) {
                                   if (i == 12345) throw std::runtime_error("kernel failed at 12345");
                                   after.fetch_add(1, std::memory_order_relaxed);
                               }),
                      Catch::Equals("kernel failed at 12345"));
    CHECK(after.load() < (1 << 22) - 1);  // later chunks were cancelled
    // The pool is still usable.
    std::atomic<std::int64_t> sum{0};
    for_each(cpu{}, 1000, [&](auto, std::int64_t i) { sum.fetch_add(i, std::memory_order_relaxed); });
    CHECK(sum.load() == 999 * 1000 / 2);
}

// A device enum of another library (as torch::DeviceType is) works in tags.
namespace other {
enum class where : std::int8_t { host = 0, accelerator = 1 };
}
template <>
struct switchyard::type_label<other::where> {
    static constexpr std::string_view value = "where";
};
template <>
struct switchyard::device_enum<other::where> {
    static constexpr device_kind to_core(other::where w) noexcept {
        return w == other::where::host ? device_kind::cpu : device_kind::cuda;
    }
};
static_assert(tag_device_v<tag<other::where::host, dtype::f32>> == device_kind::cpu);
static_assert(tag_device_v<tag<other::where::accelerator>> == device_kind::cuda);
static_assert(tag_device_v<tag<device_kind::cpu, contiguity::strided>> == device_kind::cpu);

TEST_CASE("for_each with a foreign device enum", "[for_each]") {
    std::vector<int> v(100, 0);
    for_each(tag<other::where::host>{}, 100,
             [&](auto, std::int64_t i) { v[static_cast<std::size_t>(i)] = static_cast<int>(i); });
    CHECK(v[99] == 99);
}

TEST_CASE("for_each on an explicit pool", "[for_each]") {
    broadcast_pool one(1), three(3);
    work_stealing_pool two(2);
    for (std::int64_t n : {0, 7, 100000}) {
        std::vector<std::atomic<int>> hits(static_cast<std::size_t>(n));
        auto mark = [&](auto, std::int64_t i) { hits[static_cast<std::size_t>(i)].fetch_add(1); };
        for_each(one, tag<device_kind::cpu>{}, n, mark);
        for_each(two, tag<device_kind::cpu>{}, n, mark);
        for_each(three, tag<device_kind::cpu>{}, n, mark);
        for (auto const& h : hits) REQUIRE(h.load() == 3);
    }
}
