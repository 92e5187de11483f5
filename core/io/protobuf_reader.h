#pragma once
// Minimal protobuf wire-format reader: walks the fields of one serialized message without a
// schema. Enough for CANN's DumpData header (docs/formats.md 2.2); never reads past the buffer.
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

namespace dl {

enum class WireType : std::uint8_t { Varint = 0, Fixed64 = 1, Bytes = 2, Fixed32 = 5 };

struct ProtoField {
    std::uint32_t number = 0;
    WireType wire = WireType::Varint;
    std::uint64_t value = 0;             // varint, fixed64 or fixed32 value
    const std::uint8_t* data = nullptr;  // Bytes: payload (a string, a message or packed values)
    std::size_t size = 0;
    std::string_view text() const { return {reinterpret_cast<const char*>(data), size}; }
};

class ProtoReader {
public:
    ProtoReader(const std::uint8_t* data, std::size_t size) : m_p(data), m_end(data + size) {}
    // Reads the next field. False at the end of the message or on malformed input; then
    // `error()` is non-empty for malformed input (truncated varint/bytes, field 0, group wire types).
    bool next(ProtoField& f);
    const char* error() const { return m_error; }
    bool atEnd() const { return m_p == m_end; }

private:
    bool varint(std::uint64_t& v);
    bool fail(const char* why) {
        m_error = why;
        m_p = m_end;
        return false;
    }
    const std::uint8_t* m_p;
    const std::uint8_t* m_end;
    const char* m_error = "";
};

// `repeated uint64` written packed (wire 2) or one field per value (wire 0): appends to `out`.
bool readPackedVarints(const ProtoField& f, std::vector<std::uint64_t>& out);

}  // namespace dl
