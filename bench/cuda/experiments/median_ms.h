// median_ms(launch, repeats): the median time of one launch, in ms, by CUDA
// events on the default stream, after one untimed launch. Each sample times
// 8 launches back to back, so the host's work for a launch overlaps the
// previous one's kernels, as in a stream of work (bench/cuda_report.py times
// the same way), instead of adding to a lone kernel's time. Shared by the
// experiments in this folder.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <vector>

template <typename Launch>
float median_ms(Launch&& launch, int repeats = 30) {
    cudaEvent_t a, b;
    cudaEventCreate(&a);
    cudaEventCreate(&b);
    launch();
    std::vector<float> t;
    for (int r = 0; r < repeats; ++r) {
        cudaEventRecord(a);
        for (int k = 0; k < 8; ++k) launch();
        cudaEventRecord(b);
        cudaEventSynchronize(b);
        float ms = 0;
        cudaEventElapsedTime(&ms, a, b);
        t.push_back(ms / 8);
    }
    cudaEventDestroy(a);
    cudaEventDestroy(b);
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
}
