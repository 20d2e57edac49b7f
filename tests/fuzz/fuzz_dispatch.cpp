// Fuzz target: dispatch coordinates. A sparse table over four axes (device,
// dtype, a signed one-byte user enum, and int64 keys far apart, which take
// the linear lookup) is asked for arbitrary raw values in any order of the
// coordinates. The kernel it returns must be the one for exactly those
// coordinates; it must return none exactly where a naive predicate (written
// here, not derived from the table) says the point is outside the space or
// not covered; and select's error must say which and name every coordinate.
#include <switchyard/core.h>

#include <cstdint>
#include <limits>
#include <string>

#include "fuzz_bytes.h"

namespace sy = switchyard;
using sy::device_kind;
using sy::dtype;

namespace user {
enum class level : std::int8_t { low = -128, mid = 0, high = 127 };
enum class key : std::int64_t {
    lowest = std::numeric_limits<std::int64_t>::min(),
    minus = -3,
    highest = std::numeric_limits<std::int64_t>::max()
};
}  // namespace user
template <>
struct sy::type_label<user::level> {
    static constexpr std::string_view value = "level";
};
template <>
struct sy::type_label<user::key> {
    static constexpr std::string_view value = "key";
};

namespace {

using device_axis = sy::axis<device_kind::cpu, device_kind::cuda, device_kind::webgpu>;
using dtype_axis = sy::axis<dtype::f16, dtype::bf16, dtype::f32, dtype::i64>;
using level_axis = sy::axis<user::level::low, user::level::mid, user::level::high>;
using key_axis = sy::axis<user::key::lowest, user::key::minus, user::key::highest>;
using space = sy::axes<device_axis, dtype_axis, level_axis, key_axis>;

// Covered: everything on the CPU with an f32 or i64 dtype; CUDA's f16 and
// bf16 at the mid level; one WebGPU point.
using covered = sy::coverage<
    sy::axes<sy::axis<device_kind::cpu>, sy::axis<dtype::f32, dtype::i64>, level_axis, key_axis>,
    sy::axes<sy::axis<user::level::mid>, sy::axis<dtype::f16, dtype::bf16>, sy::axis<device_kind::cuda>, key_axis>,
    sy::tag<device_kind::webgpu, dtype::bf16, user::level::high, user::key::lowest>>;

struct point {
    std::uint8_t device, type;
    std::int8_t level;
    std::int64_t key;
};

bool in_space(point const& p) {
    bool const d = p.device == 0 || p.device == 1 || p.device == 3;
    bool const t = p.type == 6 || p.type == 7 || p.type == 8 || p.type == 5;
    bool const l = p.level == -128 || p.level == 0 || p.level == 127;
    bool const k = p.key == std::numeric_limits<std::int64_t>::min() || p.key == -3 ||
                   p.key == std::numeric_limits<std::int64_t>::max();
    return d && t && l && k;
}
bool is_covered(point const& p) {
    if (!in_space(p)) return false;
    if (p.device == 0) return p.type == 8 || p.type == 5;
    if (p.device == 1) return p.level == 0 && (p.type == 6 || p.type == 7);
    return p.type == 7 && p.level == 127 && p.key == std::numeric_limits<std::int64_t>::min();
}

std::string code(point const& p) {
    return std::to_string(p.device) + "/" + std::to_string(p.type) + "/" + std::to_string(p.level) + "/" +
           std::to_string(p.key);
}

struct visitor {
    template <typename Tag>
    std::string operator()(Tag) const {
        return code({static_cast<std::uint8_t>(sy::tag_get<device_kind>(Tag{})),
                     static_cast<std::uint8_t>(sy::tag_get<dtype>(Tag{})),
                     static_cast<std::int8_t>(sy::tag_get<user::level>(Tag{})),
                     static_cast<std::int64_t>(sy::tag_get<user::key>(Tag{}))});
    }
};

sy::dispatch_table<space, std::string()> const& table() {
    static sy::dispatch_table<space, std::string()> const t("fuzzed", covered{}, visitor{});
    return t;
}

// A coordinate: usually one of the axis' values (so covered points are
// reached), sometimes any raw value.
std::uint8_t read_device(fuzz::bytes& in) {
    constexpr std::uint8_t values[] = {0, 1, 3};
    return in.in(0, 3) < 3 ? values[in.in(0, 2)] : static_cast<std::uint8_t>(in.in(0, 255));
}
std::uint8_t read_type(fuzz::bytes& in) {
    constexpr std::uint8_t values[] = {5, 6, 7, 8};
    return in.in(0, 3) < 3 ? values[in.in(0, 3)] : static_cast<std::uint8_t>(in.in(0, 255));
}
std::int8_t read_level(fuzz::bytes& in) {
    constexpr std::int8_t values[] = {-128, 0, 127};
    return in.in(0, 3) < 3 ? values[in.in(0, 2)] : static_cast<std::int8_t>(in.in(-128, 127));
}
std::int64_t read_key(fuzz::bytes& in) {
    constexpr std::int64_t values[] = {std::numeric_limits<std::int64_t>::min(), -3,
                                       std::numeric_limits<std::int64_t>::max()};
    return in.in(0, 3) < 3 ? values[in.in(0, 2)] : in.any_int64();
}

template <typename Set>
void check(point const& p, Set const& set) {
    auto const& t = table();
    auto const f = t.try_select(set);
    FUZZ_CHECK((f != nullptr) == is_covered(p));
    if (f != nullptr) {
        FUZZ_CHECK(f() == code(p));
        FUZZ_CHECK(t.select(set)() == code(p));
        return;
    }
    try {
        (void)t.select(set);
        FUZZ_CHECK(!"select did not throw");
    } catch (sy::dispatch_lookup_error const& e) {
        FUZZ_CHECK(e.why() == (in_space(p) ? sy::dispatch_lookup_error::reason::not_covered
                                           : sy::dispatch_lookup_error::reason::outside_space));
        std::string const coords = e.coordinates();
        FUZZ_CHECK(coords.find("device=" + sy::value_name(static_cast<device_kind>(p.device))) != std::string::npos);
        FUZZ_CHECK(coords.find("dtype=" + sy::value_name(static_cast<dtype>(p.type))) != std::string::npos);
        FUZZ_CHECK(coords.find("level=" + std::to_string(p.level)) != std::string::npos);
        FUZZ_CHECK(coords.find("key=" + sy::value_name(static_cast<user::key>(p.key))) != std::string::npos);
        FUZZ_CHECK(std::string(e.what()).find("'fuzzed'") != std::string::npos);
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(std::uint8_t const* data, std::size_t size) {
    fuzz::bytes in(data, size);
    while (!in.empty()) {
        point const p{read_device(in), read_type(in), read_level(in), read_key(in)};
        auto const d = static_cast<device_kind>(p.device);
        auto const t = static_cast<dtype>(p.type);
        auto const l = static_cast<user::level>(p.level);
        auto const k = static_cast<user::key>(p.key);
        // The coordinates in several orders: the set is keyed by type.
        switch (in.in(0, 3)) {
            case 0: check(p, sy::dispatch_set{d, t, l, k}); break;
            case 1: check(p, sy::dispatch_set{k, l, t, d}); break;
            case 2: check(p, sy::dispatch_set{t, k, d, l}); break;
            default: check(p, sy::dispatch_set{l, d, k, t}); break;
        }
    }
    return 0;
}
