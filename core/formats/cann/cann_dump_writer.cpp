#include "core/formats/cann/cann_dump_writer.h"

#include <cstring>

#include "core/io/protobuf_writer.h"

namespace dl {
namespace {

ProtoWriter shapeMessage(const std::vector<std::uint64_t>& dims, bool packed) {
    ProtoWriter s;
    if (packed)
        s.packed(1, dims);
    else
        for (auto d : dims) s.varint(1, d);
    return s;
}

}  // namespace

std::string buildCannDumpFile(const std::vector<CannTensorSpec>& tensors, std::string_view opName,
                              std::uint64_t dumpTime, const std::vector<std::string>& buffers) {
    ProtoWriter msg;
    msg.bytes(1, "2.0");
    msg.varint(2, dumpTime);
    std::string inputs, outputs;
    for (const auto& t : tensors) {
        const bool in = t.io == Io::Input;
        const std::uint32_t kSize = in ? 5 : 6;
        ProtoWriter m;
        m.varint(1, t.dataType);
        m.varint(2, t.format);
        m.message(3, shapeMessage(t.shape, t.packedDims));
        if (!in && !t.originalOpName.empty()) {
            ProtoWriter o;
            o.bytes(1, t.originalOpName);
            o.varint(2, 0);
            m.message(4, o);
        }
        m.varint(kSize, t.payload.size());
        if (!t.originalShape.empty()) m.message(kSize + 1, shapeMessage(t.originalShape, t.packedDims));
        msg.message(in ? 4 : 3, m);
        (in ? inputs : outputs) += t.payload;
    }
    for (const auto& b : buffers) {
        ProtoWriter m;
        m.varint(1, 0);
        m.varint(3, b.size());
        msg.message(5, m);
    }
    msg.bytes(6, opName);
    std::string file(8, '\0');
    const std::uint64_t len = msg.str().size();
    std::memcpy(file.data(), &len, 8);
    file += msg.str();
    file += inputs;
    file += outputs;
    for (const auto& b : buffers) file += b;
    return file;
}

}  // namespace dl
