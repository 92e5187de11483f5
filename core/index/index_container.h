#pragma once
// The container of index format 8: a table of typed sections, each at a 4 KiB-aligned file
// offset and cut into independent chunks with their own XXH3 checksum. A chunk is stored raw (the
// array's bytes as they are in memory) or as one zstd frame. Chunks decode in parallel straight
// into the final arrays, and a raw section is byte for byte the array, so a reader can also map
// it instead of copying it (see docs/formats.md 9.1). Layout: formats.md; the DumpIndex sections
// themselves: index_serializer.cpp.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace dl::container {

inline constexpr char kMagic[8] = {'D', 'L', 'I', 'N', 'D', 'E', 'X', '\x1a'};
inline constexpr std::size_t kHeaderBytes = 64, kSectionEntryBytes = 48, kChunkEntryBytes = 32;
inline constexpr std::uint64_t kAlign = 4096;
inline constexpr std::size_t kChunkBytes = std::size_t(8) << 20;          // what the writer cuts
inline constexpr std::uint64_t kMaxChunkBytes = std::uint64_t(64) << 20;  // what a reader accepts
inline constexpr std::uint32_t kMaxSections = 64;

enum class Storage : std::uint32_t { Raw = 0, Zstd = 1 };

// Compressed (zstd at `zstdLevel`) or raw. Raw is what reads fastest on the machine that wrote it;
// zstd is what travels.
struct Encoding {
    bool raw = false;
    int zstdLevel = 3;
};

// Whole sections in, one file out: the chunks are compressed in parallel, then written in order
// through `sink` (header, tables, each section at its aligned offset, zero padding between).
class Writer {
public:
    explicit Writer(std::uint32_t version) : m_version(version) {}
    // `data` must stay valid until write(); `small` sections (fields, warnings) are always zstd.
    void add(std::uint32_t id, std::uint32_t elemSize, const void* data, std::uint64_t count, Encoding enc);
    using Sink = std::function<bool(const void*, std::size_t)>;
    bool write(const Sink& sink, std::string& error);

private:
    struct Chunk {
        const std::uint8_t* raw = nullptr;
        std::uint64_t rawBytes = 0;
        std::unique_ptr<std::uint8_t[]> packed;  // zstd output, or null for a raw chunk
        std::uint64_t storedBytes = 0, offset = 0, hash = 0;
    };
    struct Section {
        std::uint32_t id = 0, elemSize = 0;
        std::uint64_t count = 0, offset = 0, stored = 0;
        Encoding enc;
        std::size_t firstChunk = 0, chunks = 0;
    };
    std::uint32_t m_version;
    std::vector<Section> m_sections;
    std::vector<Chunk> m_chunks;
};

// Where the bytes come from: a file read with pread, or memory (a buffer the caller holds).
class Source {
public:
    virtual ~Source() = default;
    virtual std::uint64_t size() const = 0;
    // Bytes in place when the source is memory, else null (then read() copies them).
    virtual const std::uint8_t* view(std::uint64_t offset, std::size_t n) const = 0;
    virtual bool read(std::uint64_t offset, void* dst, std::size_t n, std::string& error) const = 0;
};
std::unique_ptr<Source> memorySource(const std::uint8_t* data, std::size_t size);
std::unique_ptr<Source> fileSource(int fd, std::uint64_t size);  // fd stays the caller's

struct SectionInfo {
    std::uint32_t id = 0, elemSize = 0;
    Storage storage = Storage::Raw;
    std::uint64_t count = 0, bytes = 0, offset = 0, stored = 0;
    std::uint32_t firstChunk = 0, chunks = 0;
};

class Reader {
public:
    using NameFn = const char* (*)(std::uint32_t id);  // section names for the errors
    explicit Reader(NameFn name) : m_name(name) {}
    // Checks the header, the version (the error says which it found), the file size, the tables'
    // checksum, and that every chunk lies inside the file and the chunks add up to their section.
    bool open(const Source& src, std::uint32_t version, std::string& error);
    const SectionInfo* find(std::uint32_t id) const;
    const std::vector<SectionInfo>& sections() const { return m_sections; }
    // False when the section's chunks would inflate far beyond what they store (a crafted file):
    // such a section is decoded chunk by chunk into memory that grows as its bytes really appear.
    bool plausible(const SectionInfo& s) const;
    // One chunk (its index within the section) into dst (exactly its raw bytes): checksum, then
    // copy or decompress, the decompressed size checked.
    bool decodeChunk(const SectionInfo& s, std::uint32_t chunk, void* dst, std::string& error) const;
    std::uint64_t chunkBytes(const SectionInfo& s, std::uint32_t chunk) const;
    struct Job {
        const SectionInfo* section;
        std::uint8_t* dst;
    };
    // Every chunk of every job, on all cores; on failure the first error (by section, then chunk).
    bool decodeAll(const std::vector<Job>& jobs, std::string& error) const;

private:
    struct ChunkInfo {
        std::uint64_t offset = 0, stored = 0, raw = 0, hash = 0;
    };
    std::string where(const SectionInfo& s) const;
    NameFn m_name;
    const Source* m_src = nullptr;
    std::vector<SectionInfo> m_sections;
    std::vector<ChunkInfo> m_chunks;
};

}  // namespace dl::container
