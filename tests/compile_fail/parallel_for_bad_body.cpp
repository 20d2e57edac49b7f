// parallel_for's f takes the chunk's begin and end.
// expect: parallel_for: f must be callable as f(std::int64_t chunk_begin, std::int64_t chunk_end)
#include <switchyard/parallel.h>
void run(switchyard::work_stealing_pool& pool) {
    pool.parallel_for(0, 10, 1, [](std::int64_t) {});
}
