// Loads shared libraries built from state_library.cpp into one process, all
// with RTLD_GLOBAL (the way the first could interpose its symbols on the
// rest), and checks which process-wide state they share:
//     load_both separate LIB_A LIB_B   each has its own (the default)
//     load_both shared LIB_A LIB_B     one, shared (SWITCHYARD_SHARED_STATE)
// Both libraries must also still work: a parallel sum on each one's pool.
#include <dlfcn.h>

#include <cstdint>
#include <cstdio>
#include <cstring>

namespace {

using state_fn = int (*)(void const**, int);
using sum_fn = std::int64_t (*)(std::int64_t);
char const* const names[] = {"default_pool", "uniform_for_each_pool", "current CUDA stream", "active trace",
                             "in_parallel_region"};
constexpr int max_state = 8;

struct library {
    void const* state[max_state] = {};
    int count = 0;
    sum_fn sum = nullptr;
};

bool load(char const* path, library& lib) {
    void* handle = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
    if (handle == nullptr) {
        std::fprintf(stderr, "dlopen %s: %s\n", path, dlerror());
        return false;
    }
    auto const state = reinterpret_cast<state_fn>(dlsym(handle, "switchyard_state"));
    lib.sum = reinterpret_cast<sum_fn>(dlsym(handle, "switchyard_sum"));
    if (state == nullptr || lib.sum == nullptr) {
        std::fprintf(stderr, "%s lacks switchyard_state or switchyard_sum\n", path);
        return false;
    }
    lib.count = state(lib.state, max_state);
    return lib.count > 0 && lib.count <= max_state;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 4 || (std::strcmp(argv[1], "separate") != 0 && std::strcmp(argv[1], "shared") != 0)) {
        std::fprintf(stderr, "usage: %s separate|shared LIB_A LIB_B\n", argv[0]);
        return 2;
    }
    bool const want_shared = std::strcmp(argv[1], "shared") == 0;
    library a, b;
    if (!load(argv[2], a) || !load(argv[3], b) || a.count != b.count) return 1;
    int failures = 0;
    for (int i = 0; i < a.count; ++i) {
        bool const shared = a.state[i] == b.state[i];
        std::printf("%-22s %s\n", names[i], shared ? "shared" : "separate");
        if (shared != want_shared) ++failures;
    }
    std::int64_t const n = 1 << 20, expected = n * (n - 1) / 2;
    if (a.sum(n) != expected || b.sum(n) != expected) {
        std::fprintf(stderr, "a parallel sum on a library's pool is wrong\n");
        ++failures;
    }
    std::printf(failures ? "FAILED: expected every piece %s\n" : "ok: every piece %s\n",
                want_shared ? "shared" : "separate");
    return failures ? 1 : 0;
}
