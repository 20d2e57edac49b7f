// The calling thread's current CUDA stream for switchyard, and a scope that
// sets it. for_each on CUDA launches there; the torch adapter sets it to
// PyTorch's current stream for the duration of an op. Deliberately free of
// CUDA headers (the stream is an opaque pointer, a cudaStream_t), so host-only
// code such as the torch adapter can set it without nvcc.
//
//     cuda_stream_scope scope(my_stream);   // until the end of the scope
//     for_each(tag<device_kind::cuda>{}, n, kernel);   // runs on my_stream
//
// The default is nullptr, CUDA's legacy default stream.
#pragma once

#include "switchyard/core/config.h"

namespace switchyard {

namespace detail {
SWITCHYARD_PROCESS_STATE inline void*& current_cuda_stream_slot() noexcept {
    thread_local void* stream = nullptr;
    return stream;
}
}  // namespace detail

// The current stream as an opaque pointer (a cudaStream_t).
inline void* cuda_current_stream_handle() noexcept { return detail::current_cuda_stream_slot(); }

// Sets the calling thread's current stream; the destructor restores the
// previous one. Scopes nest.
class cuda_stream_scope {
public:
    explicit cuda_stream_scope(void* stream) noexcept : previous_(detail::current_cuda_stream_slot()) {
        detail::current_cuda_stream_slot() = stream;
    }
    ~cuda_stream_scope() { detail::current_cuda_stream_slot() = previous_; }
    cuda_stream_scope(cuda_stream_scope const&) = delete;
    cuda_stream_scope& operator=(cuda_stream_scope const&) = delete;

private:
    void* previous_;
};

}  // namespace switchyard
