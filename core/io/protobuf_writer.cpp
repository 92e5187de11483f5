#include "core/io/protobuf_writer.h"

#include <cstring>

namespace dl {

void ProtoWriter::appendVarint(std::string& out, std::uint64_t v) {
    while (v >= 0x80) {
        out += char((v & 0x7f) | 0x80);
        v >>= 7;
    }
    out += char(v);
}

void ProtoWriter::varint(std::uint32_t field, std::uint64_t v) {
    appendVarint(m_buf, std::uint64_t(field) << 3 | 0);
    appendVarint(m_buf, v);
}

void ProtoWriter::bytes(std::uint32_t field, std::string_view data) {
    appendVarint(m_buf, std::uint64_t(field) << 3 | 2);
    appendVarint(m_buf, data.size());
    m_buf.append(data);
}

void ProtoWriter::packed(std::uint32_t field, const std::vector<std::uint64_t>& values) {
    std::string body;
    for (auto v : values) appendVarint(body, v);
    bytes(field, body);
}

void ProtoWriter::fixed64(std::uint32_t field, std::uint64_t v) {
    appendVarint(m_buf, std::uint64_t(field) << 3 | 1);
    char b[8];
    std::memcpy(b, &v, 8);
    m_buf.append(b, 8);
}

void ProtoWriter::fixed32(std::uint32_t field, std::uint32_t v) {
    appendVarint(m_buf, std::uint64_t(field) << 3 | 5);
    char b[4];
    std::memcpy(b, &v, 4);
    m_buf.append(b, 4);
}

}  // namespace dl
