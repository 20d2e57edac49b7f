// A main for the fuzz targets where libFuzzer is not available (g++): runs
// every corpus file given (files or folders), then, with --random N, N
// inputs of random bytes (--seed S to repeat a run; the seed is printed).
// The asan preset runs each target this way, so the corpus stays a
// regression test under g++'s sanitizers and code paths (the per-level CPU
// rows are built by g++ only).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(std::uint8_t const* data, std::size_t size);

namespace {

void run_file(std::filesystem::path const& path) {
    std::ifstream f(path, std::ios::binary);
    std::vector<unsigned char> const bytes((std::istreambuf_iterator<char>(f)), {});
    LLVMFuzzerTestOneInput(bytes.data(), bytes.size());
}

}  // namespace

int main(int argc, char** argv) {
    long random_inputs = 0;
    std::uint64_t seed = std::random_device{}();
    std::size_t files = 0;
    for (int i = 1; i < argc; ++i) {
        std::string const arg = argv[i];
        if (arg == "--random" && i + 1 < argc) {
            random_inputs = std::atol(argv[++i]);
        } else if (arg == "--seed" && i + 1 < argc) {
            seed = std::strtoull(argv[++i], nullptr, 10);
        } else if (!std::filesystem::exists(arg)) {
            std::fprintf(stderr, "replay: no such corpus file or folder: %s\n", arg.c_str());
            return 2;
        } else if (std::filesystem::is_directory(arg)) {
            for (auto const& entry : std::filesystem::directory_iterator(arg))
                if (entry.is_regular_file()) {
                    run_file(entry.path());
                    ++files;
                }
        } else {
            run_file(arg);
            ++files;
        }
    }
    std::printf("replayed %zu corpus inputs\n", files);
    if (random_inputs > 0) {
        std::printf("random inputs: %ld, --seed %llu\n", random_inputs, static_cast<unsigned long long>(seed));
        std::fflush(stdout);
        std::mt19937_64 rng(seed);
        std::vector<std::uint8_t> bytes;
        for (long n = 0; n < random_inputs; ++n) {
            bytes.resize(rng() % 512);
            for (auto& b : bytes) b = static_cast<std::uint8_t>(rng());
            LLVMFuzzerTestOneInput(bytes.data(), bytes.size());
        }
    }
    return 0;
}
