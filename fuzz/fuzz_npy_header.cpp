// libFuzzer target: dl::parseNpyHeader on arbitrary bytes, with and without a bf16 hint.
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/io/npy_file.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    dl::NpyHeader h;
    std::string err;
    if (dl::parseNpyHeader(data, size, size, h, err)) {
        // A header that parses must describe a payload inside what it claims the file holds.
        if (h.dataOffset > size) __builtin_trap();
    }
    dl::parseNpyHeader(data, size, std::uint64_t(size) * 3, h, err, dl::DType::BFloat16);
    return 0;
}
