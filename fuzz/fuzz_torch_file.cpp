// libFuzzer target: dl::parseTorchTensorHeader (ZIP directory + pickle) on arbitrary bytes, and
// the pickle reader alone.
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/io/pickle_reader.h"
#include "core/io/torch_file.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    dl::NpyHeader h;
    std::string err;
    if (dl::parseTorchTensorHeader(data, size, h, err)) {
        // A header that parses must describe a payload inside the archive.
        if (h.dataOffset > size || h.dataBytes > size - h.dataOffset) __builtin_trap();
    }
    dl::PickleTree tree;
    dl::unpickle(data, size, tree, err);
    return 0;
}
