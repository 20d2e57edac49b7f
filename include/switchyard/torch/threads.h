// PyTorch's intra-op threads as switchyard's team (parallel/team_pool.h), so
// the CPU kernels of a torch op run where PyTorch's own ops run:
//
//   torch_team_scope scope;   // until destroyed, CPU kernels and parallel_for
//                             // on this thread run through at::parallel_for
//
// op_args (torch/tensor.h) holds one for CPU tensors. The thread count is
// at::get_num_threads() (torch.set_num_threads), as for PyTorch's ops; an op
// called inside an at::parallel_for region runs on its caller alone, as
// PyTorch's do.
//
// at::parallel_for is inline: it runs on PyTorch's threads only in code
// compiled with the flag of PyTorch's CPU backend (-fopenmp for the OpenMP
// builds that pip installs), which defines INTRA_OP_PARALLEL. Without it the
// scope does nothing and kernels run on switchyard's own pool
// (SWITCHYARD_NUM_THREADS). The class has one layout either way, so files
// of one extension built with and without the flag may share op_args.
#pragma once

#include <ATen/Parallel.h>

#include <cstddef>
#include <cstdint>
#include <optional>

#include "switchyard/parallel/team_pool.h"
#include "switchyard/parallel/thread_pool.h"

namespace switchyard {

namespace detail {
#if defined(INTRA_OP_PARALLEL)
inline void run_on_torch_threads(void*, job_base& job, std::size_t threads) noexcept {
    // One index per member with grain 1: at::parallel_for gives each of its
    // threads a block of members, and each member takes chunks until none is
    // left, so how PyTorch splits the members does not matter. Members do
    // not throw (job_base::work is noexcept), so neither does this.
    at::parallel_for(0, static_cast<std::int64_t>(threads), 1, [&job](std::int64_t first, std::int64_t last) {
        for (std::int64_t slot = first; slot < last; ++slot) job.work(job, static_cast<std::size_t>(slot));
    });
}
#endif
}  // namespace detail

class torch_team_scope {
public:
    torch_team_scope() {
#if defined(INTRA_OP_PARALLEL)
        team_.emplace(static_cast<std::size_t>(at::get_num_threads()), &detail::run_on_torch_threads);
        scope_.emplace(*team_);
#endif
    }
    torch_team_scope(torch_team_scope const&) = delete;
    torch_team_scope& operator=(torch_team_scope const&) = delete;

private:
    std::optional<team_pool> team_;
    std::optional<team_scope> scope_;  // after team_: ends first
};

}  // namespace switchyard
