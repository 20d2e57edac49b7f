// The WebGPU tests' main: exits 77 (ctest: skipped) when the machine has no
// WebGPU adapter, rather than failing or passing.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <switchyard/device/webgpu.h>

#include <cstdio>

int main(int argc, char** argv) {
    try {
        switchyard::webgpu_device probe;
        std::printf("webgpu adapter: %s (shader-f16: %s)\n", probe.adapter_name().c_str(),
                    probe.has_f16() ? "yes" : "no");
    } catch (switchyard::device_error const& e) {
        std::printf("skipped: %s\n", e.what());
        return 77;
    }
    return Catch::Session().run(argc, argv);
}
