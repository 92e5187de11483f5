#pragma once
// Reads the central directory of a ZIP archive (with ZIP64) and locates an entry's bytes. Enough
// for torch.save files, which store their records uncompressed; no decompression here. Reads go
// through a callback so the same code serves a file (pread of the few ranges it needs) and a
// buffer (fuzzing, small files).
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace dl {

struct ZipEntry {
    std::string name;
    std::uint16_t method = 0;  // 0 stored, 8 deflate, ...
    std::uint64_t compressedSize = 0, size = 0;
    std::uint64_t localHeaderOffset = 0;
};

// Copies `n` bytes at `offset` into `out`; false when they are not there.
using ByteReader = std::function<bool(std::uint64_t offset, std::size_t n, std::uint8_t* out)>;

class ZipDirectory {
public:
    // false with a reason when the archive's end records or directory are missing or malformed.
    bool read(const ByteReader& reader, std::uint64_t archiveSize, std::string& error);
    const std::vector<ZipEntry>& entries() const { return m_entries; }
    const ZipEntry* find(const std::string& name) const;
    // Absolute offset of a stored entry's first data byte (after its local header); false with a
    // reason when the entry is compressed or its header does not fit the archive.
    bool dataOffset(const ZipEntry& e, std::uint64_t& offset, std::string& error) const;

private:
    ByteReader m_reader;
    std::uint64_t m_size = 0;
    std::vector<ZipEntry> m_entries;
};

}  // namespace dl
