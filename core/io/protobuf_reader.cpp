#include "core/io/protobuf_reader.h"

#include <cstring>

namespace dl {

bool ProtoReader::varint(std::uint64_t& v) {
    v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
        if (m_p == m_end) return fail("truncated varint");
        const std::uint8_t b = *m_p++;
        v |= std::uint64_t(b & 0x7f) << shift;
        if (!(b & 0x80)) return true;
    }
    return fail("varint longer than 10 bytes");
}

bool ProtoReader::next(ProtoField& f) {
    if (m_p == m_end) return false;
    std::uint64_t key = 0;
    if (!varint(key)) return false;
    if ((key >> 3) == 0 || (key >> 3) > 0x1fffffff) return fail("field number 0 or out of range");
    f.number = std::uint32_t(key >> 3);
    f.data = nullptr;
    f.size = 0;
    f.value = 0;
    switch (key & 7) {
        case 0:
            f.wire = WireType::Varint;
            return varint(f.value);
        case 1:
            if (m_end - m_p < 8) return fail("truncated fixed64");
            f.wire = WireType::Fixed64;
            std::memcpy(&f.value, m_p, 8);
            m_p += 8;
            return true;
        case 2: {
            std::uint64_t len = 0;
            if (!varint(len)) return false;
            if (len > std::uint64_t(m_end - m_p)) return fail("length-delimited field runs past the message");
            f.wire = WireType::Bytes;
            f.data = m_p;
            f.size = std::size_t(len);
            m_p += len;
            return true;
        }
        case 5: {
            if (m_end - m_p < 4) return fail("truncated fixed32");
            f.wire = WireType::Fixed32;
            std::uint32_t v = 0;
            std::memcpy(&v, m_p, 4);
            f.value = v;
            m_p += 4;
            return true;
        }
        default:
            return fail("unsupported wire type (groups 3/4 or 6/7)");
    }
}

bool readPackedVarints(const ProtoField& f, std::vector<std::uint64_t>& out) {
    if (f.wire == WireType::Varint) {
        out.push_back(f.value);
        return true;
    }
    if (f.wire != WireType::Bytes) return false;
    const std::uint8_t* p = f.data;
    const std::uint8_t* end = f.data + f.size;
    while (p < end) {
        std::uint64_t v = 0;
        int shift = 0;
        for (;; shift += 7) {
            if (p == end || shift >= 64) return false;
            const std::uint8_t b = *p++;
            v |= std::uint64_t(b & 0x7f) << shift;
            if (!(b & 0x80)) break;
        }
        out.push_back(v);
    }
    return true;
}

}  // namespace dl
