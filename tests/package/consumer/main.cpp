// Uses the package the way a downstream project would: one include, one table.
#include <switchyard/switchyard.h>

#include <cstdio>

using namespace switchyard;

int main() {
    using space = axes<axis<device_kind::cpu>, float_dtype_axis>;
    dispatch_table<space, int()> const table("size_of", coverage<space>{}, [](auto tag) {
        return static_cast<int>(sizeof(dtype_storage_t<tag_get<dtype>(decltype(tag){})>));
    });
    int const bytes = table.select(dispatch_set{dtype::bf16, device_kind::cpu})();
    std::printf("consumer: bf16 takes %d bytes\n", bytes);
    return bytes == 2 ? 0 : 1;
}
