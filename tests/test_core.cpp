// Tests of the core layer: tags, concepts, axes, named axes, dispatch sets,
// sparse dispatch tables and their errors. Compile-time properties are
// static_asserts (a failure stops the build); runtime ones are Catch2 cases.
#include <switchyard/core.h>

#include <catch2/catch.hpp>

#include <cstdint>
#include <limits>
#include <set>
#include <string>
#include <type_traits>

using namespace switchyard;

// A named axis: the output dtype of a cast, distinct from the input dtype.
enum class out_dtype : std::underlying_type_t<dtype> {};
template <>
struct switchyard::type_label<out_dtype> : switchyard::named<dtype> {
    static constexpr std::string_view value = "out_dtype";
};

// A user enum made into a tag value type, with names and far-apart values so
// that axes over it take the linear (non-table) lookup path.
namespace user {
enum class precision : std::int32_t { low = -100000, high = 100000 };
}
template <>
struct switchyard::type_label<user::precision> {
    static constexpr std::string_view value = "precision";
    static constexpr std::string_view name(user::precision p) { return p == user::precision::low ? "low" : "high"; }
};

// ---------------------------------------------------------------- tags ----

// Every permutation of three values is one type.
using t3 = tag<device_kind::cuda, dtype::f32, contiguity::contiguous>;
static_assert(std::is_same_v<t3, tag<device_kind::cuda, contiguity::contiguous, dtype::f32>>);
static_assert(std::is_same_v<t3, tag<dtype::f32, device_kind::cuda, contiguity::contiguous>>);
static_assert(std::is_same_v<t3, tag<dtype::f32, contiguity::contiguous, device_kind::cuda>>);
static_assert(std::is_same_v<t3, tag<contiguity::contiguous, device_kind::cuda, dtype::f32>>);
static_assert(std::is_same_v<t3, tag<contiguity::contiguous, dtype::f32, device_kind::cuda>>);
// The canonical order is by label: contiguity < device < dtype.
static_assert(std::is_same_v<t3, sorted_tag<contiguity::contiguous, device_kind::cuda, dtype::f32>>);
static_assert(!std::is_same_v<t3, tag<device_kind::cpu, dtype::f32, contiguity::contiguous>>);
static_assert(std::is_same_v<tag<>, sorted_tag<>>);
static_assert(is_tag_v<t3> && !is_tag_v<int> && any_tag<tag<>>);
// Named and user values sort by their labels too.
static_assert(std::is_same_v<tag<out_dtype(dtype::f16), dtype::f32, user::precision::low>,
                             sorted_tag<dtype::f32, out_dtype(dtype::f16), user::precision::low>>);

// tag_add adds or replaces; tag_subtract removes by type (no-op when absent).
using t3b = tag_add<t3, block_dim::b128>;
static_assert(std::is_same_v<t3b, tag<block_dim::b128, device_kind::cuda, dtype::f32, contiguity::contiguous>>);
static_assert(std::is_same_v<tag_add<t3b, block_dim::b512>,
                             tag<block_dim::b512, device_kind::cuda, dtype::f32, contiguity::contiguous>>);
static_assert(std::is_same_v<tag_add<t3, dtype::f16>, tag<device_kind::cuda, dtype::f16, contiguity::contiguous>>);
static_assert(std::is_same_v<tag_subtract<t3b, block_dim>, t3>);
static_assert(std::is_same_v<tag_subtract<t3, block_dim>, t3>);
static_assert(std::is_same_v<tag_subtract<tag_subtract<tag_subtract<t3, dtype>, device_kind>, contiguity>, tag<>>);

// tag_get, single and multiple.
static_assert(tag_get<dtype>(t3{}) == dtype::f32);
static_assert(tag_get<device_kind>(t3{}) == device_kind::cuda);
static_assert(tag_get<block_dim>(t3b{}) == block_dim::b128);
static_assert(tag_get<out_dtype>(tag<out_dtype(dtype::bf16)>{}) == out_dtype(dtype::bf16));
static_assert(tag_get<dtype, device_kind>(t3{}) == std::tuple{dtype::f32, device_kind::cuda});
static_assert(tag_has_type_v<t3, dtype> && !tag_has_type_v<t3, block_dim>);

// ------------------------------------------------------------ concepts ----

// Three levels of specificity; the most specific viable overload wins.
template <typename Tag>
requires with_type<Tag, dtype>
constexpr int specificity(Tag) { return 1; }
template <typename Tag>
requires with_value<Tag, dtype::f32>
constexpr int specificity(Tag) { return 2; }
template <typename Tag>
requires with_value<Tag, dtype::f32> && with_value<Tag, device_kind::cuda>
constexpr int specificity(Tag) { return 3; }

static_assert(specificity(tag<dtype::f16, device_kind::cuda>{}) == 1);
static_assert(specificity(tag<dtype::f32, device_kind::cpu>{}) == 2);
static_assert(specificity(tag<dtype::f32, device_kind::cuda>{}) == 3);
static_assert(specificity(tag_add<t3, block_dim::b64>{}) == 3);

// Named axes refine in the same way and stay distinct from their base type.
template <typename Tag>
requires with_type<Tag, out_dtype>
constexpr int cast_kind(Tag) { return 1; }
template <typename Tag>
requires with_value<Tag, out_dtype(dtype::f16)>
constexpr int cast_kind(Tag) { return 2; }
template <typename Tag>
requires with_value<Tag, out_dtype(dtype::f16)> && with_value<Tag, dtype::f32>
constexpr int cast_kind(Tag) { return 3; }
static_assert(cast_kind(tag<dtype::f16, out_dtype(dtype::f32)>{}) == 1);
static_assert(cast_kind(tag<dtype::f16, out_dtype(dtype::f16)>{}) == 2);
static_assert(cast_kind(tag<dtype::f32, out_dtype(dtype::f16)>{}) == 3);
static_assert(!with_value<tag<dtype::f16>, out_dtype(dtype::f16)>);
static_assert(!with_type<tag<dtype::f16>, out_dtype>);
static_assert(!with_type<int, dtype>);

// ---------------------------------------------------------------- axes ----

static_assert(float_dtype_axis::size == 4);
static_assert(float_dtype_axis::values[1] == dtype::bf16);
static_assert(float_dtype_axis::index_of(dtype::f32) == 2);
static_assert(float_dtype_axis::index_of(dtype::i32) == axis_npos);
static_assert(full_dtype_axis::size == 10 && full_device_axis::size == 4);
using precision_axis = axis<user::precision::high, user::precision::low>;
static_assert(precision_axis::index_of(user::precision::low) == 1);
static_assert(precision_axis::index_of(static_cast<user::precision>(0)) == axis_npos);

using space3 = axes<axis<device_kind::cpu, device_kind::cuda>, float_dtype_axis,
                    axis<contiguity::strided, contiguity::contiguous, contiguity{7}>>;
static_assert(space3::rank == 3 && space3::size == 2 * 4 * 3);
static_assert(space3::strides[0] == 12 && space3::strides[1] == 3 && space3::strides[2] == 1);
// Point 0 is the first value of every axis; the last point the last values.
static_assert(std::is_same_v<space3::point_tag<0>, tag<device_kind::cpu, dtype::f16, contiguity::strided>>);
static_assert(std::is_same_v<space3::point_tag<23>, tag<device_kind::cuda, dtype::f64, contiguity{7}>>);

// dtype mappings.
static_assert(std::is_same_v<dtype_storage_t<dtype::f16>, half>);
static_assert(std::is_same_v<dtype_storage_t<dtype::bf16>, bfloat16>);
static_assert(std::is_same_v<dtype_compute_t<dtype::f16>, float>);
static_assert(std::is_same_v<dtype_compute_t<dtype::bf16>, float>);
static_assert(std::is_same_v<dtype_compute_t<dtype::f64>, double>);
static_assert(std::is_same_v<dtype_storage_t<dtype::i64>, std::int64_t>);
static_assert(std::is_same_v<dtype_storage_t<dtype::boolean>, bool>);
static_assert(dtype_of_v<float> == dtype::f32 && dtype_of_v<bfloat16> == dtype::bf16);

TEST_CASE("dtype sizes match their storage types", "[core][dtype]") {
    auto check = [](auto tag_value) {
        constexpr dtype d = decltype(tag_value)::value;
        CHECK(dtype_size(d) == sizeof(dtype_storage_t<d>));
        CHECK(dtype_of_v<dtype_storage_t<d>> == d);
    };
    check(std::integral_constant<dtype, dtype::boolean>{});
    check(std::integral_constant<dtype, dtype::u8>{});
    check(std::integral_constant<dtype, dtype::i8>{});
    check(std::integral_constant<dtype, dtype::i16>{});
    check(std::integral_constant<dtype, dtype::i32>{});
    check(std::integral_constant<dtype, dtype::i64>{});
    check(std::integral_constant<dtype, dtype::f16>{});
    check(std::integral_constant<dtype, dtype::bf16>{});
    check(std::integral_constant<dtype, dtype::f32>{});
    check(std::integral_constant<dtype, dtype::f64>{});
    CHECK(is_floating(dtype::bf16));
    CHECK_FALSE(is_floating(dtype::i64));
}

TEST_CASE("enum names", "[core][enums]") {
    CHECK(to_string(device_kind::webgpu) == "webgpu");
    CHECK(to_string(dtype::boolean) == "bool");
    CHECK(to_string(dtype::bf16) == "bf16");
    CHECK(to_string(contiguity::strided) == "strided");
    CHECK(to_string(placement::out_of_place) == "out_of_place");
    CHECK(to_string(determinism::required) == "required");
    CHECK(to_string(scheduling::adaptive) == "adaptive");
    CHECK(to_string(block_dim::b1024) == "b1024");
    CHECK(block_threads(block_dim::b128) == 128);
    CHECK(coordinate_name(device_kind::cuda) == "device=cuda");
    CHECK(coordinate_name(out_dtype(dtype::bf16)) == "out_dtype=bf16");
    CHECK(coordinate_name(user::precision::high) == "precision=high");
    CHECK(value_name(contiguity{9}) == "unknown");
}

// ------------------------------------------------------ dispatch tables ----

// Each kernel returns a code built from its tag, so a test can tell which
// point (and which overload) ran.
constexpr int point_code(device_kind d, dtype t, contiguity c) {
    return static_cast<int>(d) * 10000 + static_cast<int>(t) * 100 + static_cast<int>(c);
}

struct code_op {
    template <typename Tag>
    requires with_type<Tag, device_kind> && with_type<Tag, dtype> && with_type<Tag, contiguity>
    static int op(Tag, int offset) {
        return offset + point_code(tag_get<device_kind>(Tag{}), tag_get<dtype>(Tag{}), tag_get<contiguity>(Tag{}));
    }
    // A more specific overload for one dtype.
    template <typename Tag>
    requires with_value<Tag, dtype::bf16> && with_type<Tag, device_kind> && with_type<Tag, contiguity>
    static int op(Tag, int) { return -1; }

    using space = space3;
    using subspaces = coverage<space>;
    using dispatcher = dispatch_table<space, int(int)>;
};

TEST_CASE("select and try_select reach every point of a 3-axis space", "[core][table]") {
    auto const table = dispatch_table_from_op<code_op>("code_op");
    CHECK(table.name() == "code_op");
    CHECK(table.covered_count() == space3::size);
    int visited = 0;
    for (auto d : {device_kind::cpu, device_kind::cuda})
        for (auto t : float_dtype_axis::values)
            for (auto c : {contiguity::strided, contiguity::contiguous, contiguity{7}}) {
                int const expected = t == dtype::bf16 ? -1 : 5 + point_code(d, t, c);
                // Coordinates in any order.
                CHECK(table.select(dispatch_set{d, t, c})(5) == expected);
                CHECK(table.select(dispatch_set{c, t, d})(5) == expected);
                auto const f = table.try_select(dispatch_set{t, c, d});
                REQUIRE(f != nullptr);
                CHECK(f(5) == expected);
                ++visited;
            }
    CHECK(visited == 24);
    CHECK(table.try_select(dispatch_set{device_kind::metal, dtype::f32, contiguity::strided}) == nullptr);
    CHECK(table.try_select(dispatch_set{device_kind::cpu, dtype::i8, contiguity::strided}) == nullptr);
    CHECK_THROWS_AS(table.select(dispatch_set{device_kind::cpu, dtype::i8, contiguity::strided}),
                    dispatch_lookup_error);
}

// A sparse 4-axis table with a named axis: subspaces and single points.
struct cast_op {
    template <typename Tag>
    requires with_type<Tag, dtype> && with_type<Tag, out_dtype>
    static std::string op(Tag, std::string const& prefix) {
        return prefix + value_name(tag_get<dtype>(Tag{})) + "->" + value_name(tag_get<out_dtype>(Tag{})) + "@" +
               value_name(tag_get<device_kind>(Tag{})) + "/" + value_name(tag_get<contiguity>(Tag{}));
    }
    using space = axes<axis<device_kind::cpu, device_kind::cuda>, float_dtype_axis, full_contiguity_axis,
                       axis<out_dtype(dtype::f16), out_dtype(dtype::f32), out_dtype(dtype::f64)>>;
    using subspaces = coverage<
        axes<axis<device_kind::cpu>, axis<dtype::f32, dtype::f64>, full_contiguity_axis, axis<out_dtype(dtype::f16)>>,
        // written with the axes in another order: same subspace semantics
        axes<axis<out_dtype(dtype::f32)>, axis<contiguity::contiguous>, axis<dtype::f16>, axis<device_kind::cuda>>,
        tag<device_kind::cuda, dtype::bf16, contiguity::strided, out_dtype(dtype::f64)>>;
    using dispatcher = dispatch_table<space, std::string(std::string const&)>;
};

TEST_CASE("sparse coverage instantiates and calls exactly the covered points", "[core][table][named]") {
    auto const table = dispatch_table_from_op<cast_op>("cast");
    CHECK(table.covered_count() == 4 + 1 + 1);

    std::set<std::string> covered;
    for (auto d : {device_kind::cpu, device_kind::cuda})
        for (auto t : float_dtype_axis::values)
            for (auto c : full_contiguity_axis::values)
                for (auto o : {out_dtype(dtype::f16), out_dtype(dtype::f32), out_dtype(dtype::f64)}) {
                    auto const f = table.try_select(dispatch_set{o, d, c, t});
                    if (f == nullptr) {
                        CHECK_THROWS_AS(table.select(dispatch_set{d, t, c, o}), dispatch_lookup_error);
                        continue;
                    }
                    std::string const got = f(">");
                    CHECK(got ==
                          ">" + value_name(t) + "->" + value_name(o) + "@" + value_name(d) + "/" + value_name(c));
                    covered.insert(got);
                }
    CHECK(covered == std::set<std::string>{">f32->f16@cpu/strided", ">f32->f16@cpu/contiguous", ">f64->f16@cpu/strided",
                                           ">f64->f16@cpu/contiguous", ">f16->f32@cuda/contiguous",
                                           ">bf16->f64@cuda/strided"});
}

TEST_CASE("lookup errors name the table, every coordinate and the coverage", "[core][table][errors]") {
    auto const table = dispatch_table_from_op<cast_op>("cast");

    SECTION("a value outside the space") {
        try {
            table.select(dispatch_set{device_kind::webgpu, dtype::f64, contiguity::strided, out_dtype(dtype::f16)});
            FAIL("select did not throw");
        } catch (dispatch_lookup_error const& e) {
            std::string const m = e.what();
            CHECK(e.why() == dispatch_lookup_error::reason::outside_space);
            CHECK(e.table() == "cast");
            CHECK(e.coordinates() == "device=webgpu, dtype=f64, contiguity=strided, out_dtype=f16");
            CHECK_THAT(m, Catch::Contains("dispatch table 'cast' has no kernel for device=webgpu, dtype=f64, "
                                          "contiguity=strided, out_dtype=f16"));
            CHECK_THAT(m, Catch::Contains("device=webgpu is outside the table's space (device takes cpu, cuda)"));
            CHECK_THAT(m, !Catch::Contains("dtype=f64 is outside"));
            CHECK_THAT(m, Catch::Contains("Covered: {device: cpu} x {dtype: f32, f64} x {contiguity: strided, "
                                          "contiguous} x {out_dtype: f16}; {device: cuda} x {dtype: f16} x "
                                          "{contiguity: contiguous} x {out_dtype: f32}; {device: cuda} x {dtype: "
                                          "bf16} x {contiguity: strided} x {out_dtype: f64}"));
        }
    }
    SECTION("a point inside the space that is not covered") {
        try {
            table.select(dispatch_set{device_kind::cuda, dtype::f64, contiguity::strided, out_dtype(dtype::f16)});
            FAIL("select did not throw");
        } catch (dispatch_lookup_error const& e) {
            CHECK(e.why() == dispatch_lookup_error::reason::not_covered);
            CHECK_THAT(std::string(e.what()),
                       Catch::Contains("device=cuda, dtype=f64, contiguity=strided, out_dtype=f16: the point is "
                                       "inside the table's space but not covered"));
        }
    }
    SECTION("it is a std::runtime_error") {
        CHECK_THROWS_AS(
            table.select(dispatch_set{device_kind::cpu, dtype::f16, contiguity::strided, out_dtype(dtype::f64)}),
            std::runtime_error);
    }
}

TEST_CASE("tables from visitors, empty tables and with()", "[core][table]") {
    using space = axes<axis<user::precision::low, user::precision::high>, axis<dtype::f32, dtype::f64>>;
    dispatch_table<space, int(int)> const empty("empty");
    CHECK(empty.covered_count() == 0);
    try {
        empty.select(dispatch_set{user::precision::low, dtype::f32});
        FAIL("select did not throw");
    } catch (dispatch_lookup_error const& e) {
        CHECK_THAT(std::string(e.what()), Catch::Contains("precision=low, dtype=f32: the point is inside the "
                                                          "table's space but not covered. Covered: nothing"));
    }

    dispatch_table<space, int(int)> const low(
        "scale", coverage<axes<axis<user::precision::low>, axis<dtype::f32, dtype::f64>>>{},
        [](auto tag, int x) { return x * static_cast<int>(sizeof(dtype_storage_t<tag_get<dtype>(decltype(tag){})>)); });
    CHECK(low.select(dispatch_set{user::precision::low, dtype::f64})(3) == 24);
    CHECK(low.try_select(dispatch_set{user::precision::high, dtype::f64}) == nullptr);

    // with() returns a new table; the original is unchanged; overlapping points rebind.
    auto const both =
        low.with(coverage<tag<user::precision::high, dtype::f32>, tag<user::precision::low, dtype::f32>>{},
                 [](auto, int x) { return -x; });
    CHECK(low.covered_count() == 2);
    CHECK(both.covered_count() == 3);
    CHECK(both.select(dispatch_set{user::precision::high, dtype::f32})(3) == -3);
    CHECK(both.select(dispatch_set{user::precision::low, dtype::f32})(3) == -3);
    CHECK(both.select(dispatch_set{user::precision::low, dtype::f64})(3) == 24);
    CHECK(low.select(dispatch_set{user::precision::low, dtype::f32})(3) == 12);

    // Copies are independent and usable.
    auto copy = both;
    CHECK(copy.select(dispatch_set{user::precision::high, dtype::f32})(4) == -4);
    copy = low;
    CHECK(copy.try_select(dispatch_set{user::precision::high, dtype::f32}) == nullptr);
}

TEST_CASE("arguments are forwarded as declared: references stay references", "[core][table]") {
    using space = axes<axis<dtype::f32>>;
    dispatch_table<space, void(int&, std::string&&)> const table("forward", coverage<space>{},
                                                                 [](auto, int& counter, std::string&& s) {
                                                                     counter += static_cast<int>(s.size());
                                                                     std::string sink = std::move(s);
                                                                 });
    int counter = 1;
    std::string text = "abc";
    table.select(dispatch_set{dtype::f32})(counter, std::move(text));
    CHECK(counter == 4);
}

// Signed one-byte enums take the 256-entry lookup path; negative values and
// values outside the axis must map correctly.
namespace user {
enum class code8 : std::int8_t { neg = -5, zero = 0, big = 127, low = -128 };
}
template <>
struct switchyard::type_label<user::code8> {
    static constexpr std::string_view value = "code8";
};

TEST_CASE("signed one-byte enums, including negative values", "[core][table]") {
    using space = axes<axis<user::code8::neg, user::code8::zero, user::code8::big, user::code8::low>,
                       axis<device_kind::cpu, device_kind::cuda>>;
    dispatch_table<space, int()> const table("code8", coverage<space>{}, [](auto tag) {
        return static_cast<int>(tag_get<user::code8>(decltype(tag){})) * 10 +
               static_cast<int>(tag_get<device_kind>(decltype(tag){}));
    });
    for (auto c : {user::code8::neg, user::code8::zero, user::code8::big, user::code8::low})
        for (auto d : {device_kind::cpu, device_kind::cuda})
            CHECK(table.select(dispatch_set{c, d})() == static_cast<int>(c) * 10 + static_cast<int>(d));
    CHECK(table.try_select(dispatch_set{user::code8{7}, device_kind::cpu}) == nullptr);
    CHECK(table.try_select(dispatch_set{user::code8{-1}, device_kind::cuda}) == nullptr);
    CHECK(table.try_select(dispatch_set{user::code8::neg, device_kind::webgpu}) == nullptr);
    CHECK(table.try_select(dispatch_set{user::code8{1}, device_kind::webgpu}) == nullptr);
    CHECK_THROWS_WITH(table.select(dispatch_set{user::code8{7}, device_kind::cpu}),
                      Catch::Contains("code8=7 is outside the table's space (code8 takes -5, 0, 127, -128)"));
}

// Value mappings used by views and for_each.
static_assert(core_dtype_v<dtype::bf16> == dtype::bf16);
static_assert(std::is_same_v<dtype_storage_t<dtype::bf16>, bfloat16>);
static_assert(std::is_same_v<dtype_compute_t<dtype::f16>, float>);
static_assert(core_device_v<device_kind::cuda> == device_kind::cuda);
static_assert(!dtype_enum_type<user::precision> && !device_enum_type<dtype>);

// Issue 18: a uint64_t enum value above INT64_MAX printed as a negative
// number in dispatch errors.
enum class big_key : std::uint64_t { low = 1, high = 0xFFFF'FFFF'FFFF'FFF0ull };
enum class signed_key : std::int64_t { minus = -3 };
template <>
struct switchyard::type_label<big_key> {
    static constexpr std::string_view value = "big_key";
};
template <>
struct switchyard::type_label<signed_key> {
    static constexpr std::string_view value = "signed_key";
};

// Issue 18: axis lookup subtracted int64 keys (k - min_key), which overflows
// for keys far apart.
enum class wide_key : std::int64_t {
    lowest = std::numeric_limits<std::int64_t>::min(),
    minus_two = -2,
    one = 1,
    highest = std::numeric_limits<std::int64_t>::max()
};
template <>
struct switchyard::type_label<wide_key> {
    static constexpr std::string_view value = "wide_key";
};

TEST_CASE("axis lookup over int64 keys far apart", "[core]") {
    using dense = switchyard::detail::axis_index<wide_key, wide_key::minus_two, wide_key::one>;
    STATIC_REQUIRE(dense::dense);
    STATIC_REQUIRE(dense::find(wide_key::one) == 1);
    STATIC_REQUIRE(dense::find(wide_key::highest) == switchyard::axis_npos);
    STATIC_REQUIRE(dense::find(wide_key::lowest) == switchyard::axis_npos);
    using sparse = switchyard::detail::axis_index<wide_key, wide_key::lowest, wide_key::highest>;
    STATIC_REQUIRE(!sparse::dense);
    STATIC_REQUIRE(sparse::find(wide_key::highest) == 1);
    wide_key const runtime = wide_key::highest;  // the same at run time (UBSan)
    CHECK(dense::find(runtime) == switchyard::axis_npos);
    CHECK(sparse::find(runtime) == 1);
}

TEST_CASE("value_name prints enum values as their underlying type", "[core]") {
    CHECK(switchyard::value_name(big_key::high) == "18446744073709551600");
    CHECK(switchyard::value_name(big_key::low) == "1");
    CHECK(switchyard::value_name(signed_key::minus) == "-3");
}
