#include "core/index/index_container.h"

#include <oneapi/tbb/enumerable_thread_specific.h>
#include <xxhash.h>
#include <zstd.h>

#include <algorithm>
#include <atomic>
#include <cstring>

#include "core/util/parallel_for.h"
#include "core/util/read_file.h"

namespace dl::container {
namespace {

template <class T>
void putAt(std::uint8_t* p, T v) {
    std::memcpy(p, &v, sizeof v);
}
template <class T>
T getAt(const std::uint8_t* p) {
    T v;
    std::memcpy(&v, p, sizeof v);
    return v;
}
std::uint64_t alignUp(std::uint64_t v) { return (v + kAlign - 1) / kAlign * kAlign; }

struct CCtx {
    ZSTD_CCtx* p = ZSTD_createCCtx();
    ~CCtx() { ZSTD_freeCCtx(p); }
};
struct DCtx {
    ZSTD_DCtx* p = ZSTD_createDCtx();
    ~DCtx() { ZSTD_freeDCtx(p); }
};

// Checksum of the header (but its own 8 bytes at 32) and the tables after it: any flipped bit in the layout is
// caught before a single offset is followed.
std::uint64_t tablesHash(const std::uint8_t* header, const std::uint8_t* tables, std::size_t n) {
    XXH3_state_t* st = XXH3_createState();
    XXH3_64bits_reset(st);
    XXH3_64bits_update(st, header, 32);
    XXH3_64bits_update(st, header + 40, kHeaderBytes - 40);  // all of the header but the hash itself
    XXH3_64bits_update(st, tables, n);
    const std::uint64_t h = XXH3_64bits_digest(st);
    XXH3_freeState(st);
    return h;
}

class MemorySource final : public Source {
public:
    MemorySource(const std::uint8_t* d, std::size_t n) : m_data(d), m_size(n) {}
    std::uint64_t size() const override { return m_size; }
    const std::uint8_t* view(std::uint64_t offset, std::size_t) const override { return m_data + offset; }
    bool read(std::uint64_t offset, void* dst, std::size_t n, std::string&) const override {
        if (n) std::memcpy(dst, m_data + offset, n);
        return true;
    }

private:
    const std::uint8_t* m_data;
    std::size_t m_size;
};

class FileSource final : public Source {
public:
    FileSource(int fd, std::uint64_t n) : m_fd(fd), m_size(n) {}
    std::uint64_t size() const override { return m_size; }
    const std::uint8_t* view(std::uint64_t, std::size_t) const override { return nullptr; }
    bool read(std::uint64_t offset, void* dst, std::size_t n, std::string& error) const override {
        return readFileAt(m_fd, static_cast<std::uint8_t*>(dst), n, offset, error);
    }

private:
    int m_fd;
    std::uint64_t m_size;
};

}  // namespace

std::unique_ptr<Source> memorySource(const std::uint8_t* data, std::size_t size) {
    return std::make_unique<MemorySource>(data, size);
}
std::unique_ptr<Source> fileSource(int fd, std::uint64_t size) { return std::make_unique<FileSource>(fd, size); }

void Writer::add(std::uint32_t id, std::uint32_t elemSize, const void* data, std::uint64_t count, Encoding enc) {
    Section s;
    s.id = id;
    s.elemSize = elemSize;
    s.count = count;
    s.enc = enc;
    s.firstChunk = m_chunks.size();
    const auto* p = static_cast<const std::uint8_t*>(data);
    const std::uint64_t bytes = count * elemSize;
    for (std::uint64_t at = 0; at < bytes; at += kChunkBytes) {
        Chunk c;
        c.raw = p + at;
        c.rawBytes = std::min<std::uint64_t>(kChunkBytes, bytes - at);
        m_chunks.push_back(std::move(c));
    }
    s.chunks = m_chunks.size() - s.firstChunk;
    m_sections.push_back(s);
}

bool Writer::write(const Sink& sink, std::string& error) {
    std::vector<const Section*> owner(m_chunks.size());
    for (const Section& s : m_sections)
        for (std::size_t i = 0; i < s.chunks; ++i) owner[s.firstChunk + i] = &s;
    // Compress and checksum every chunk on all cores; a raw chunk is hashed where it lies.
    tbb::enumerable_thread_specific<CCtx> cctxs;
    std::atomic<bool> failed{false};
    parallelFor(std::size_t(0), m_chunks.size(), [&](std::size_t i) {
        Chunk& c = m_chunks[i];
        const Section& s = *owner[i];
        if (s.enc.raw) {
            c.storedBytes = c.rawBytes;
            c.hash = XXH3_64bits(c.raw, c.rawBytes);
            return;
        }
        const std::size_t bound = ZSTD_compressBound(c.rawBytes);
        c.packed.reset(new std::uint8_t[bound]);  // uninitialised: only the bytes written are touched
        ZSTD_CCtx* cctx = cctxs.local().p;
        ZSTD_CCtx_reset(cctx, ZSTD_reset_session_and_parameters);
        ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, s.enc.zstdLevel);
        const std::size_t n = ZSTD_compress2(cctx, c.packed.get(), bound, c.raw, c.rawBytes);
        if (ZSTD_isError(n)) {
            failed = true;
            return;
        }
        c.storedBytes = n;
        c.hash = XXH3_64bits(c.packed.get(), n);
    });
    if (failed) {
        error = "zstd could not compress the index";
        return false;
    }
    // Layout: the tables, then each section at a 4 KiB boundary, its chunks back to back.
    const std::size_t tableBytes = m_sections.size() * kSectionEntryBytes + m_chunks.size() * kChunkEntryBytes;
    // The file ends with the last stored byte (no padding after it), and an empty section has
    // offset 0, so every byte from the first section on that is not padding is under a checksum.
    std::uint64_t at = alignUp(kHeaderBytes + tableBytes), fileSize = kHeaderBytes + tableBytes;
    for (Section& s : m_sections) {
        if (s.chunks == 0) continue;
        s.offset = at;
        for (std::size_t i = 0; i < s.chunks; ++i) {
            Chunk& c = m_chunks[s.firstChunk + i];
            c.offset = at;
            at += c.storedBytes;
        }
        s.stored = at - s.offset;
        fileSize = at;
        at = alignUp(at);
    }
    std::vector<std::uint8_t> head(alignUp(kHeaderBytes + tableBytes), 0);
    std::uint8_t* h = head.data();
    std::memcpy(h, kMagic, 8);
    putAt<std::uint32_t>(h + 8, m_version);
    putAt<std::uint32_t>(h + 12, std::uint32_t(m_sections.size()));
    putAt<std::uint64_t>(h + 16, fileSize);
    putAt<std::uint32_t>(h + 24, std::uint32_t(m_chunks.size()));
    std::uint8_t* t = h + kHeaderBytes;
    for (const Section& s : m_sections) {
        putAt<std::uint32_t>(t, s.id);
        putAt<std::uint32_t>(t + 4, std::uint32_t(s.enc.raw ? Storage::Raw : Storage::Zstd));
        putAt<std::uint32_t>(t + 8, s.elemSize);
        putAt<std::uint32_t>(t + 12, std::uint32_t(s.chunks));
        putAt<std::uint64_t>(t + 16, s.count);
        putAt<std::uint64_t>(t + 24, s.offset);
        putAt<std::uint64_t>(t + 32, s.stored);
        putAt<std::uint32_t>(t + 40, std::uint32_t(s.firstChunk));
        t += kSectionEntryBytes;
    }
    for (const Chunk& c : m_chunks) {
        putAt<std::uint64_t>(t, c.offset);
        putAt<std::uint64_t>(t + 8, c.storedBytes);
        putAt<std::uint64_t>(t + 16, c.rawBytes);
        putAt<std::uint64_t>(t + 24, c.hash);
        t += kChunkEntryBytes;
    }
    putAt<std::uint64_t>(h + 32, tablesHash(h, h + kHeaderBytes, tableBytes));
    // Header, tables and padding up to the first section; then the chunks, padded to each boundary.
    const std::size_t headBytes = std::size_t(std::min<std::uint64_t>(fileSize, head.size()));
    if (!sink(head.data(), headBytes)) return false;
    static const std::uint8_t zeros[kAlign] = {};
    std::uint64_t written = headBytes;
    for (const Section& s : m_sections) {
        if (s.chunks == 0) continue;
        if (s.offset > written && !sink(zeros, std::size_t(s.offset - written))) return false;
        written = s.offset;
        for (std::size_t i = 0; i < s.chunks; ++i) {
            const Chunk& c = m_chunks[s.firstChunk + i];
            if (!sink(c.packed ? c.packed.get() : c.raw, std::size_t(c.storedBytes))) return false;
            written += c.storedBytes;
        }
    }
    return true;
}

std::string Reader::where(const SectionInfo& s) const {
    const char* n = m_name ? m_name(s.id) : nullptr;
    return n ? std::string("index section '") + n + "'" : "index section " + std::to_string(s.id);
}

bool Reader::open(const Source& src, std::uint32_t version, std::string& error) {
    m_src = &src;
    m_sections.clear();
    m_chunks.clear();
    const std::uint64_t size = src.size();
    std::uint8_t h[kHeaderBytes] = {};
    if (size < 12 || !src.read(0, h, std::size_t(std::min<std::uint64_t>(size, kHeaderBytes)), error) ||
        std::memcmp(h, kMagic, 8) != 0) {
        error = "not a DumpLens index file (bad magic)";
        return false;
    }
    const auto found = getAt<std::uint32_t>(h + 8);
    if (found != version) {
        error = "index format version " + std::to_string(found) + ", this build reads " + std::to_string(version);
        return false;
    }
    const auto declared = getAt<std::uint64_t>(h + 16);
    if (size < kHeaderBytes || declared != size) {
        error = "index file truncated or padded (" + std::to_string(size) + " bytes, header says " +
            std::to_string(declared) + ")";
        return false;
    }
    const auto nSections = getAt<std::uint32_t>(h + 12), nChunks = getAt<std::uint32_t>(h + 24);
    const std::uint64_t tableBytes =
        std::uint64_t(nSections) * kSectionEntryBytes + std::uint64_t(nChunks) * kChunkEntryBytes;
    if (nSections > kMaxSections || tableBytes > size - kHeaderBytes) {
        error = "index tables larger than the file (" + std::to_string(nSections) + " sections, " +
            std::to_string(nChunks) + " chunks in " + std::to_string(size) + " bytes)";
        return false;
    }
    std::vector<std::uint8_t> tables(static_cast<std::size_t>(tableBytes));
    if (!src.read(kHeaderBytes, tables.data(), tables.size(), error)) return false;
    if (tablesHash(h, tables.data(), tables.size()) != getAt<std::uint64_t>(h + 32)) {
        error = "index checksum mismatch in its section table (file corrupt)";
        return false;
    }
    const std::uint8_t* c = tables.data() + std::size_t(nSections) * kSectionEntryBytes;
    m_chunks.resize(nChunks);
    for (ChunkInfo& ch : m_chunks) {
        ch = {getAt<std::uint64_t>(c), getAt<std::uint64_t>(c + 8), getAt<std::uint64_t>(c + 16),
              getAt<std::uint64_t>(c + 24)};
        c += kChunkEntryBytes;
    }
    const std::uint8_t* t = tables.data();
    for (std::uint32_t i = 0; i < nSections; ++i, t += kSectionEntryBytes) {
        SectionInfo s;
        s.id = getAt<std::uint32_t>(t);
        const auto storage = getAt<std::uint32_t>(t + 4);
        s.elemSize = getAt<std::uint32_t>(t + 8);
        s.chunks = getAt<std::uint32_t>(t + 12);
        s.count = getAt<std::uint64_t>(t + 16);
        s.offset = getAt<std::uint64_t>(t + 24);
        s.stored = getAt<std::uint64_t>(t + 32);
        s.firstChunk = getAt<std::uint32_t>(t + 40);
        s.storage = Storage(storage);
        const std::string name = where(s);
        if (find(s.id)) {
            error = name + " appears twice (file corrupt)";
            return false;
        }
        if (storage > 1 || s.elemSize == 0 || s.elemSize > (1u << 16) ||
            s.count > (std::uint64_t(1) << 40) / s.elemSize) {
            error = name + ": unknown storage or record size (file corrupt)";
            return false;
        }
        s.bytes = s.count * s.elemSize;
        if (s.offset % kAlign != 0 || s.offset > size || s.stored > size - s.offset) {
            error = name + " lies past the end of the file (truncated) or off its 4 KiB boundary";
            return false;
        }
        if (std::uint64_t(s.firstChunk) + s.chunks > nChunks) {
            error = name + ": chunk table out of range (file corrupt)";
            return false;
        }
        std::uint64_t sum = 0;
        for (std::uint32_t k = 0; k < s.chunks; ++k) {
            const ChunkInfo& ch = m_chunks[s.firstChunk + k];
            const bool inside = ch.offset >= s.offset && ch.offset - s.offset <= s.stored &&
                ch.stored <= s.stored - (ch.offset - s.offset);
            if (!inside || ch.raw == 0 || ch.raw > kMaxChunkBytes || ch.stored == 0 ||
                (s.storage == Storage::Raw && ch.stored != ch.raw)) {
                error =
                    name + " chunk " + std::to_string(k) + ": outside its section or of a wrong size (file corrupt)";
                return false;
            }
            sum += ch.raw;
        }
        if (sum != s.bytes) {
            error = name + ": its chunks hold " + std::to_string(sum) + " bytes, the section declares " +
                std::to_string(s.bytes) + " (file corrupt)";
            return false;
        }
        m_sections.push_back(s);
    }
    return true;
}

const SectionInfo* Reader::find(std::uint32_t id) const {
    for (const SectionInfo& s : m_sections)
        if (s.id == id) return &s;
    return nullptr;
}

bool Reader::plausible(const SectionInfo& s) const {
    constexpr std::uint64_t kMaxRatio = 1024;  // real index chunks compress 5-15x
    return s.storage == Storage::Raw || s.bytes <= s.stored * kMaxRatio;
}

std::uint64_t Reader::chunkBytes(const SectionInfo& s, std::uint32_t chunk) const {
    return m_chunks[s.firstChunk + chunk].raw;
}

bool Reader::decodeChunk(const SectionInfo& s, std::uint32_t chunk, void* dst, std::string& error) const {
    const ChunkInfo& c = m_chunks[s.firstChunk + chunk];
    const auto fail = [&](const std::string& why) {
        error = where(s) + " chunk " + std::to_string(chunk) + ": " + why;
        return false;
    };
    std::string readError;
    if (s.storage == Storage::Raw) {  // read straight into the array, then checked where it lies
        if (!m_src->read(c.offset, dst, std::size_t(c.raw), readError)) return fail(readError);
        if (XXH3_64bits(dst, std::size_t(c.raw)) != c.hash) return fail("checksum mismatch (file corrupt)");
        return true;
    }
    const std::uint8_t* p = m_src->view(c.offset, std::size_t(c.stored));
    thread_local std::unique_ptr<std::uint8_t[]> buffer;
    thread_local std::size_t capacity = 0;
    if (!p) {
        if (capacity < c.stored) {
            buffer.reset(new std::uint8_t[std::size_t(c.stored)]);
            capacity = std::size_t(c.stored);
        }
        if (!m_src->read(c.offset, buffer.get(), std::size_t(c.stored), readError)) return fail(readError);
        p = buffer.get();
    }
    if (XXH3_64bits(p, std::size_t(c.stored)) != c.hash) return fail("checksum mismatch (file corrupt)");
    if (ZSTD_getFrameContentSize(p, std::size_t(c.stored)) != c.raw)
        return fail("its zstd frame declares another size (file corrupt)");
    thread_local DCtx dctx;
    const std::size_t n = ZSTD_decompressDCtx(dctx.p, dst, std::size_t(c.raw), p, std::size_t(c.stored));
    if (ZSTD_isError(n) || n != c.raw) return fail("does not decompress to its declared size (file corrupt)");
    return true;
}

bool Reader::decodeAll(const std::vector<Job>& jobs, std::string& error) const {
    struct Item {
        const SectionInfo* s;
        std::uint32_t chunk;
        std::uint8_t* dst;
    };
    std::vector<Item> items;
    for (const Job& j : jobs) {
        std::uint64_t at = 0;
        for (std::uint32_t k = 0; k < j.section->chunks; ++k) {
            items.push_back({j.section, k, j.dst + at});
            at += chunkBytes(*j.section, k);
        }
    }
    std::vector<std::string> errors(items.size());
    std::atomic<bool> failed{false};
    parallelFor(std::size_t(0), items.size(), [&](std::size_t i) {
        if (failed.load(std::memory_order_relaxed)) return;
        if (!decodeChunk(*items[i].s, items[i].chunk, items[i].dst, errors[i])) failed = true;
    });
    if (!failed) return true;
    for (std::string& e : errors)
        if (!e.empty()) {
            error = std::move(e);
            break;
        }
    return false;
}

}  // namespace dl::container
