// cuda_scratch_pool(ordinal): the stream-ordered memory pool switchyard takes
// its own temporaries from on one GPU (transform's hoisted inputs,
// device_array.h), created on first use and kept for the process.
//
// Not CUDA's default pool: that one returns freed memory to the driver at
// every synchronization unless its owner raised the release threshold, and
// re-mapping it cost a broadcast op 70-80 us per call on an H100
// (docs/benchmarks.md). Changing the default pool's threshold would change
// the user's allocations too, so switchyard keeps a pool of its own that
// holds up to cuda_scratch_keep_bytes of freed memory.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "switchyard/core/config.h"
#include "switchyard/device/cuda/error.h"

namespace switchyard {

inline constexpr std::uint64_t cuda_scratch_keep_bytes = std::uint64_t{64} << 20;

SWITCHYARD_PROCESS_STATE inline cudaMemPool_t cuda_scratch_pool(int ordinal) {
    static std::mutex mutex;
    static std::vector<cudaMemPool_t> pools;
    std::lock_guard<std::mutex> const lock(mutex);
    auto const index = static_cast<std::size_t>(ordinal);
    if (pools.size() <= index) pools.resize(index + 1, nullptr);
    if (pools[index] == nullptr) {
        cudaMemPoolProps props{};
        props.allocType = cudaMemAllocationTypePinned;
        props.location.type = cudaMemLocationTypeDevice;
        props.location.id = ordinal;
        std::string const context = "switchyard scratch pool, cuda:" + std::to_string(ordinal);
        cudaMemPool_t pool = nullptr;
        cuda_check(cudaMemPoolCreate(&pool, &props), "cudaMemPoolCreate", context);
        std::uint64_t keep = cuda_scratch_keep_bytes;
        cuda_check(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep), "cudaMemPoolSetAttribute",
                   context);
        pools[index] = pool;
    }
    return pools[index];
}

}  // namespace switchyard
