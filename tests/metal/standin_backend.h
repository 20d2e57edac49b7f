// A metal_backend (switchyard/device/metal/backend.h) for tests, with no GPU:
// buffers are host memory, a pipeline is the MSL compiled by clang as C++
// against the stand-in standard library beside this file (metal_stdlib) and
// loaded with dlopen, and a command buffer is a list of dispatches run, in
// order, on the CPU when it is committed: every thread of every threadgroup
// of 256 (those past the count included), one call each, one threadgroup
// after another; a kernel with threadgroup barriers runs the 256 threads of
// a group concurrently (a std::thread each, meeting at a std::barrier), so
// its threadgroup memory and barriers behave as on a GPU. So a test sees
// what Metal would show: nothing runs before a commit.
#pragma once

#include <dlfcn.h>
#include <unistd.h>

#include <barrier>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <span>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <switchyard/device/device.h>
#include <switchyard/device/metal/backend.h>

namespace standin_metal {

// MSL compiled under the stand-in: the function `entry`, called with its
// buffers, the uniform words and a thread position.
class compiled_kernel {
public:
    // Throws switchyard::device_error with clang's messages if it does not
    // compile. `flags` are added to clang's (e.g. FMA contraction).
    compiled_kernel(std::string const& msl, std::string const& entry, std::string const& flags = "") {
        static int serial = 0;
        auto const dir = std::filesystem::temp_directory_path() /
                         ("switchyard_msl_" + std::to_string(::getpid()) + "_" + std::to_string(serial++));
        std::filesystem::create_directories(dir);
        std::ofstream(dir / "kernel.metal") << msl;
        std::string const command = std::string(SWITCHYARD_MSL_TEST_COMPILER) +
                                    " -std=c++20 -O1 -fPIC -shared -Wno-unknown-attributes " + flags + " -x c++ -I" +
                                    SWITCHYARD_TEST_DIR + "/metal -I" + SWITCHYARD_INCLUDE_DIR + " " +
                                    (dir / "kernel.metal").string() + " -o " + (dir / "kernel.so").string() + " 2> " +
                                    (dir / "errors.txt").string();
        int const status = std::system(command.c_str());
        std::stringstream errors;
        errors << std::ifstream(dir / "errors.txt").rdbuf();
        if (status == 0) library_ = ::dlopen((dir / "kernel.so").c_str(), RTLD_NOW | RTLD_LOCAL);
        std::filesystem::remove_all(dir);
        if (status != 0)
            throw switchyard::device_error("the MSL does not compile under the stand-in:\n" + errors.str() + "\n" +
                                           msl);
        if (!library_) throw switchyard::device_error(std::string("dlopen of the compiled MSL failed: ") + ::dlerror());
        entry_ = ::dlsym(library_, entry.c_str());
        if (!entry_) throw switchyard::device_error("the compiled MSL has no function '" + entry + "'");
        if (msl.find("threadgroup_barrier(") != std::string::npos)
            barrier_hook_ = static_cast<void (**)()>(::dlsym(library_, "standin_threadgroup_barrier"));
    }
    compiled_kernel(compiled_kernel const&) = delete;
    compiled_kernel& operator=(compiled_kernel const&) = delete;
    ~compiled_kernel() {
        if (library_) ::dlclose(library_);
    }

    // Every thread position of [0, grid), grid a whole number of threadgroups.
    void run(std::span<void* const> buffers, void const* uniforms, std::uint64_t grid) const {
        if (buffers.size() > 30) throw switchyard::device_error("the stand-in calls kernels of at most 30 buffers");
        if (!barrier_hook_) {
            for (std::uint64_t i = 0; i < grid; ++i) call(buffers, uniforms, static_cast<unsigned>(i));
            return;
        }
        constexpr unsigned group = switchyard::metal_backend::threadgroup_size;
        *barrier_hook_ = [] { current_barrier->arrive_and_wait(); };
        std::barrier<> barrier(group);
        std::vector<std::thread> threads;
        for (unsigned lane = 0; lane < group; ++lane)
            threads.emplace_back([&, lane] {
                current_barrier = &barrier;
                for (std::uint64_t first = 0; first < grid; first += group) {
                    call(buffers, uniforms, static_cast<unsigned>(first + lane));
                    barrier.arrive_and_wait();  // the next group reuses the threadgroup memory
                }
            });
        for (std::thread& t : threads) t.join();
    }

private:
    static inline thread_local std::barrier<>* current_barrier = nullptr;

    // The kernel's parameters are pointers and one uint: called through a
    // pointer type of the same shape.
    template <std::size_t... K>
    void call_with(std::span<void* const> b, void const* u, unsigned i, std::index_sequence<K...>) const {
        using fn = void (*)(decltype((void)K, static_cast<void*>(nullptr))..., void const*, unsigned);
        (void)b;  // unused for a kernel of no buffers
        reinterpret_cast<fn>(entry_)(b[K]..., u, i);
    }
    template <std::size_t N = 0>
    void call(std::span<void* const> b, void const* u, unsigned i) const {
        if constexpr (N > 30) {
            throw switchyard::device_error("the stand-in calls kernels of at most 30 buffers");
        } else {
            if (b.size() == N) return call_with(b, u, i, std::make_index_sequence<N>{});
            call<N + 1>(b, u, i);
        }
    }

    void* library_ = nullptr;
    void* entry_ = nullptr;
    void (**barrier_hook_)() = nullptr;  // the kernel's standin_threadgroup_barrier, if it has barriers
};

class backend final : public switchyard::metal_backend {
public:
    std::string name() const override { return "stand-in (MSL as C++ on the CPU)"; }

    std::uint64_t max_buffer_length() const override { return std::uint64_t{1} << 32; }
    void* new_buffer(std::uint64_t bytes) override { return std::calloc(bytes, 1); }
    void* contents(void* buffer) override { return buffer; }
    void release_buffer(void* buffer) override { std::free(buffer); }

    void* new_pipeline(std::string const& msl, std::string const& entry) override {
        return new compiled_kernel(msl, entry);
    }
    void release_pipeline(void* pipeline) override { delete static_cast<compiled_kernel*>(pipeline); }

    void encode_dispatch(void* pipeline, std::span<void* const> buffers, std::span<std::uint64_t const> offsets,
                         std::span<std::byte const> uniforms, std::uint64_t threads) override {
        std::vector<void*> bound;
        for (std::size_t j = 0; j < buffers.size(); ++j) bound.push_back(static_cast<char*>(buffers[j]) + offsets[j]);
        recorded_.push_back(
            {static_cast<compiled_kernel*>(pipeline), std::move(bound), {uniforms.begin(), uniforms.end()}, threads});
    }

    void commit_and_wait() override {
        std::vector<dispatch> work = std::move(recorded_);
        recorded_.clear();
        for (dispatch const& d : work) {
            constexpr std::uint64_t group = switchyard::metal_backend::threadgroup_size;
            std::uint64_t const grid =
                (d.threads + group - 1) / group * group;  // whole threadgroups, as Metal runs them
            d.kernel->run(d.buffers, d.uniforms.data(), grid);
        }
        ++commits_run;
    }

    int commits_run = 0;

private:
    struct dispatch {
        compiled_kernel const* kernel;
        std::vector<void*> buffers;
        std::vector<std::byte> uniforms;
        std::uint64_t threads;
    };
    std::vector<dispatch> recorded_;
};

}  // namespace standin_metal
