// libFuzzer target: the protobuf wire reader on arbitrary bytes, descending into every
// length-delimited field as if it were a message (bounded depth) and reading packed varints.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/io/protobuf_reader.h"

static void walk(const std::uint8_t* data, std::size_t size, int depth) {
    dl::ProtoReader r(data, size);
    dl::ProtoField f;
    std::vector<std::uint64_t> values;
    while (r.next(f)) {
        if (f.wire != dl::WireType::Bytes) continue;
        if (f.size && (f.data < data || f.data + f.size > data + size)) __builtin_trap();
        values.clear();
        dl::readPackedVarints(f, values);
        if (depth < 4) walk(f.data, f.size, depth + 1);
    }
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    walk(data, size, 0);
    return 0;
}
