// dispatch_lookup_error: thrown by dispatch_table::select when a table has no
// kernel for the requested coordinates. The message names the table, every
// coordinate, whether the point lies outside the space or inside it but not
// covered, and what the table covers:
//
//   dispatch table 'softplus' has no kernel for device=webgpu, dtype=f64,
//   contiguity=strided: dtype=f64 is outside the table's space (dtype takes
//   f16, bf16, f32). Covered: {device: cpu, cuda} x {dtype: f16, bf16, f32}
//   x {contiguity: strided, contiguous}
#pragma once

#include <stdexcept>
#include <string>
#include <utility>

namespace switchyard {

class dispatch_lookup_error : public std::runtime_error {
public:
    enum class reason { outside_space, not_covered };

    dispatch_lookup_error(std::string table, std::string coordinates, reason why, std::string const& message)
        : std::runtime_error(message), table_(std::move(table)), coordinates_(std::move(coordinates)), why_(why) {}

    // The table's name, as given when it was built.
    std::string const& table() const noexcept { return table_; }
    // "device=webgpu, dtype=f64, contiguity=strided"
    std::string const& coordinates() const noexcept { return coordinates_; }
    reason why() const noexcept { return why_; }

private:
    std::string table_;
    std::string coordinates_;
    reason why_;
};

}  // namespace switchyard
