#pragma once
// Protobuf wire-format writer, the counterpart of ProtoReader: builds DumpData headers for tests,
// benchmarks and fuzz corpora (docs/formats.md 2.2).
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace dl {

class ProtoWriter {
public:
    void varint(std::uint32_t field, std::uint64_t v);
    void bytes(std::uint32_t field, std::string_view data);
    void message(std::uint32_t field, const ProtoWriter& sub) { bytes(field, sub.str()); }
    void packed(std::uint32_t field, const std::vector<std::uint64_t>& values);
    void fixed64(std::uint32_t field, std::uint64_t v);
    void fixed32(std::uint32_t field, std::uint32_t v);
    const std::string& str() const { return m_buf; }

    static void appendVarint(std::string& out, std::uint64_t v);

private:
    std::string m_buf;
};

}  // namespace dl
