#include "core/index/index_serializer.h"

#include <oneapi/tbb/blocked_range.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <iterator>
#include <new>
#include <stdexcept>
#include <type_traits>

#include "core/index/atomic_file.h"
#include "core/io/regular_file.h"
#include "core/util/huge_pages.h"
#include "core/util/parallel_for.h"
#include "core/util/read_file.h"

namespace dl {
namespace {

using container::Encoding;

// Section ids of format 8. Arrays are their records as in memory; the fields and the warnings are
// small byte streams (lengths + bytes) of their own.
enum SectionId : std::uint32_t {
    kFields = 1,
    kWarnings,
    kStringBlob,
    kStringOffsets,
    kOps,
    kTensors,
    kSides,
    kDims,
    kHistBytes,
    kOverflows,
    kWideStats,
};

const char* sectionName(std::uint32_t id) {
    static const char* const names[] = {nullptr,          "fields",     "warnings",  "string blob",
                                        "string offsets", "ops",        "tensors",   "sides",
                                        "dims",           "histograms", "overflows", "wide statistics"};
    return id < std::size(names) ? names[id] : nullptr;
}

// Byte stream of the small sections.
class Bytes {
public:
    template <class T>
    void pod(const T& v) {
        static_assert(std::is_trivially_copyable_v<T>);
        const auto* p = reinterpret_cast<const std::uint8_t*>(&v);
        m_b.insert(m_b.end(), p, p + sizeof(T));
    }
    void str(const std::string& s) {
        pod(std::uint64_t(s.size()));
        m_b.insert(m_b.end(), s.begin(), s.end());
    }
    const std::vector<std::uint8_t>& bytes() const { return m_b; }

private:
    std::vector<std::uint8_t> m_b;
};

// Reads it back; every length is checked against the bytes left first.
class BytesReader {
public:
    explicit BytesReader(const std::vector<std::uint8_t>& b) : m_p(b.data()), m_left(b.size()) {}
    template <class T>
    bool pod(T& v) {
        if (m_left < sizeof(T)) return false;
        std::memcpy(&v, m_p, sizeof(T));
        m_p += sizeof(T);
        m_left -= sizeof(T);
        return true;
    }
    bool str(std::string& s) {
        std::uint64_t n = 0;
        if (!pod(n) || n > m_left) return false;
        s.assign(reinterpret_cast<const char*>(m_p), std::size_t(n));
        m_p += n;
        m_left -= n;
        return true;
    }
    // A count of records each at least `minBytes` long: false when the bytes left cannot hold them.
    bool count(std::uint64_t& n, std::uint64_t minBytes) { return pod(n) && n <= m_left / minBytes; }
    bool atEnd() const { return m_left == 0; }

private:
    const std::uint8_t* m_p;
    std::size_t m_left;
};

Bytes writeFields(const DumpIndex& idx, const FolderFingerprint& fp) {
    Bytes w;
    w.pod(fp);
    w.str(idx.root);
    w.pod(std::uint64_t(idx.ranks.size()));
    for (const auto& r : idx.ranks) {
        w.pod(r.rank);
        w.str(r.folder);
        w.pod(r.format);
        w.str(r.host);
        w.str(r.deviceId);
        w.str(r.indexedOn);
        w.str(r.dataRoot);
        w.str(r.orderSource);
    }
    w.str(idx.meta.frameworkVersion);
    w.str(idx.meta.deviceTarget);
    w.str(idx.meta.dumpMode);
    w.str(idx.meta.dumpConfigJson);
    w.pod(idx.meta.opDebugMode);
    return w;
}

bool readFields(BytesReader& r, DumpIndex& idx, FolderFingerprint& fp) {
    std::uint64_t n = 0;
    if (!r.pod(fp) || !r.str(idx.root)) return false;
    // A rank record is at least its 4-byte id, a format byte and six length fields.
    if (!r.count(n, 4 + 1 + 6 * 8) || n > (1u << 20)) return false;
    idx.ranks.resize(std::size_t(n));
    for (auto& rk : idx.ranks)
        if (!r.pod(rk.rank) || !r.str(rk.folder) || !r.pod(rk.format) || !r.str(rk.host) || !r.str(rk.deviceId) ||
            !r.str(rk.indexedOn) || !r.str(rk.dataRoot) || !r.str(rk.orderSource))
            return false;
    return r.str(idx.meta.frameworkVersion) && r.str(idx.meta.deviceTarget) && r.str(idx.meta.dumpMode) &&
        r.str(idx.meta.dumpConfigJson) && r.pod(idx.meta.opDebugMode) && r.atEnd();
}

// The warnings section, both directions in one place (a field added to IndexWarning changes only these two).
Bytes writeWarnings(const std::vector<IndexWarning>& warnings) {
    Bytes w;
    w.pod(std::uint64_t(warnings.size()));
    for (const auto& wr : warnings) {
        w.str(wr.path);
        w.str(wr.reason);
        w.pod(wr.severity);
    }
    return w;
}

bool readWarnings(BytesReader& r, std::vector<IndexWarning>& warnings) {
    std::uint64_t n = 0;
    if (!r.count(n, 2 * 8 + 1)) return false;
    warnings.clear();
    warnings.reserve(std::size_t(n));
    for (std::uint64_t i = 0; i < n; ++i) {
        IndexWarning w;
        if (!r.str(w.path) || !r.str(w.reason) || !r.pod(w.severity)) return false;
        if (w.severity != WarningSeverity::Unreadable && w.severity != WarningSeverity::Note) return false;
        warnings.push_back(std::move(w));
    }
    return r.atEnd();
}

// Every id and offset must point inside its table, or a corrupt file could crash a reader later.
// Checked on all cores: at 10M tensors it is a pass over 1.1 GB.
bool validate(const DumpIndex& idx) {
    const auto ns = idx.strings.size();
    std::atomic<bool> bad{false};
    const auto blocks = [&](std::size_t n, auto&& check) {
        parallelFor(tbb::blocked_range<std::size_t>(0, n, 1u << 16), [&](const auto& range) {
            if (bad.load(std::memory_order_relaxed)) return;
            for (std::size_t i = range.begin(); i != range.end(); ++i)
                if (!check(i)) {
                    bad = true;
                    return;
                }
        });
    };
    blocks(idx.ops.size(), [&](std::size_t i) {
        const OpRecord& op = idx.ops[i];
        return op.type < ns && op.name < ns && op.scope < ns && op.net < ns &&
            std::uint64_t(op.firstTensor) + op.tensorCount <= idx.tensors.size() &&
            op.overflow < std::int64_t(idx.overflows.size()) && op.tensorNames < ns;  // msprobe names (format 6)
    });
    for (const auto& s : idx.sides)
        if (s.file >= ns) return false;
    blocks(idx.tensors.size(), [&](std::size_t i) {
        const TensorRecord& t = idx.tensors[i];
        if (t.op >= idx.ops.size() || t.format >= ns || t.side > idx.sides.size()) return false;
        const TensorSide& s = idx.side(t);
        const std::uint64_t run = std::uint64_t(t.ndim) + ((t.flags & DeviceFormat) ? s.origNdim : 0);
        if (std::uint64_t(t.shapeOffset) + run > idx.dims.size()) return false;
        if ((t.flags & HasHistogram) && s.histOffset >= idx.histBytes.size()) return false;
        return !(t.packedStats.wide && t.packedStats.count >= idx.wideStats.size());
    });
    for (const auto& o : idx.overflows)
        if (o.file >= ns) return false;
    return !bad;
}

// The sections of an index in file order. `fields` and `warnings` must outlive the writer's write().
void addSections(container::Writer& w, const DumpIndex& idx, const Bytes& fields, const Bytes& warnings, Encoding enc) {
    const Encoding small{false, std::max(enc.zstdLevel, 3)};
    const auto array = [&](SectionId id, const auto& v) {
        using T = std::remove_cvref_t<decltype(*v.data())>;
        static_assert(std::is_trivially_copyable_v<T>);
        w.add(id, sizeof(T), v.data(), v.size(), enc);
    };
    w.add(kFields, 1, fields.bytes().data(), fields.bytes().size(), small);
    w.add(kWarnings, 1, warnings.bytes().data(), warnings.bytes().size(), small);
    w.add(kStringBlob, 1, idx.strings.blob().data(), idx.strings.blob().size(), small);
    w.add(kStringOffsets, 4, idx.strings.offsets().data(), idx.strings.offsets().size(), small);
    array(kOps, idx.ops);
    array(kTensors, idx.tensors);
    array(kSides, idx.sides);
    array(kDims, idx.dims);
    array(kHistBytes, idx.histBytes);
    array(kOverflows, idx.overflows);
    array(kWideStats, idx.wideStats);
}

bool writeIndex(const DumpIndex& idx, const FolderFingerprint& fp, Encoding enc, const container::Writer::Sink& sink,
                std::string& error) {
    const Bytes fields = writeFields(idx, fp), warnings = writeWarnings(idx.warnings);
    container::Writer w(kIndexFormatVersion);
    addSections(w, idx, fields, warnings, enc);
    return w.write(sink, error);
}

// Sizes an empty vector for n records with its pages faulted in on all cores first: zeroing ~1.1 GB
// of fresh pages (the kernel's, on first touch) is the largest cost of a 10M-tensor reopen, and
// resize() alone would pay it on one thread. Only an optimisation: where the advice is refused,
// resize() faults the pages as before. Only for sections decoded whole (IndexReader::array).
template <class V>
void allocateFaulted(V& v, std::size_t n) {
    using T = std::remove_reference_t<decltype(*v.data())>;
    v.reserve(n);
    const std::size_t bytes = n * sizeof(T);
    adviseHugePages(v.data(), bytes);
#ifdef MADV_POPULATE_WRITE
    constexpr std::uintptr_t k2M = std::uintptr_t(2) << 20, kSlice = std::uintptr_t(32) << 20;
    const auto p = reinterpret_cast<std::uintptr_t>(v.data());
    const std::uintptr_t b = (p + k2M - 1) & ~(k2M - 1), e = (p + bytes) & ~(std::uintptr_t(4095));
    if (bytes >= 2 * kSlice && e > b)
        parallelFor(std::uintptr_t(0), (e - b + kSlice - 1) / kSlice, [&](std::uintptr_t i) {
            const std::uintptr_t from = b + i * kSlice, to = std::min(e, from + kSlice);
            ::madvise(reinterpret_cast<void*>(from), to - from, MADV_POPULATE_WRITE);
        });
#endif
    // Every byte is decoded over next: a RecordVector skips writing default records first.
    const SkipRecordInit decodedNext;
    v.resize(n);
}

// Reads the sections of an open container into `out`: arrays sized once (huge pages), then every
// chunk of every array decoded on all cores straight into place.
class IndexReader {
public:
    IndexReader(const container::Reader& r, std::string& error) : m_r(r), m_error(error) {}

    template <class V>
    bool array(std::uint32_t id, V& v) {
        using T = std::remove_reference_t<decltype(*v.data())>;
        const container::SectionInfo* s = m_r.find(id);
        if (!s) return fail(std::string("index section '") + sectionName(id) + "' missing (file corrupt)");
        if (s->elemSize != sizeof(T))
            return fail(std::string("index section '") + sectionName(id) + "' holds " + std::to_string(s->elemSize) +
                        "-byte records, this build reads " + std::to_string(sizeof(T)) + " (written by another build)");
        v.clear();
        if (m_r.plausible(*s)) {
            allocateFaulted(v, std::size_t(s->count));
            m_jobs.push_back({s, reinterpret_cast<std::uint8_t*>(v.data())});
            return true;
        }
        // Far more than its chunks could plausibly inflate to (a crafted file): grown chunk by
        // chunk, so a lying length costs only what really decompresses.
        std::uint64_t done = 0;
        for (std::uint32_t k = 0; k < s->chunks; ++k) {
            const std::uint64_t n = m_r.chunkBytes(*s, k);
            v.resize(std::size_t((done + n + sizeof(T) - 1) / sizeof(T)));
            if (!m_r.decodeChunk(*s, k, reinterpret_cast<std::uint8_t*>(v.data()) + done, m_error)) return false;
            done += n;
        }
        return true;
    }
    bool decode() { return m_r.decodeAll(m_jobs, m_error); }

private:
    bool fail(std::string e) {
        m_error = std::move(e);
        return false;
    }
    const container::Reader& m_r;
    std::string& m_error;
    std::vector<container::Reader::Job> m_jobs;
};

bool readIndex(const container::Source& src, DumpIndex& out, FolderFingerprint& fp, std::string& error) {
    container::Reader r(sectionName);
    if (!r.open(src, kIndexFormatVersion, error)) return false;
    for (const auto& s : r.sections())
        if (!sectionName(s.id)) {
            error = "index section " + std::to_string(s.id) + " unknown to this build (written by another build)";
            return false;
        }
    out = DumpIndex();
    std::vector<std::uint8_t> fields, warnings;
    std::string blob;
    std::vector<std::uint32_t> offsets;
    IndexReader ir(r, error);
    if (!ir.array(kFields, fields) || !ir.array(kWarnings, warnings) || !ir.array(kStringBlob, blob) ||
        !ir.array(kStringOffsets, offsets) || !ir.array(kOps, out.ops) || !ir.array(kTensors, out.tensors) ||
        !ir.array(kSides, out.sides) || !ir.array(kDims, out.dims) || !ir.array(kHistBytes, out.histBytes) ||
        !ir.array(kOverflows, out.overflows) || !ir.array(kWideStats, out.wideStats) || !ir.decode())
        return false;
    BytesReader fr(fields), wr(warnings);
    if (!readFields(fr, out, fp) || !readWarnings(wr, out.warnings) ||
        !out.strings.assign(std::move(blob), std::move(offsets)) || !validate(out)) {
        error = "index payload is inconsistent (corrupt or written by another build)";
        return false;
    }
    return true;
}

// Last resort around a read: every length is checked before it is allocated, but an index that is
// merely large for this machine must still be an error, not an abort.
template <class F>
bool guarded(DumpIndex& out, std::string& error, F&& read) {
    try {
        if (read()) return true;
    } catch (const std::bad_alloc&) {
        error = "index too large for the memory available";
    } catch (const std::length_error&) {
        error = "index declares a length beyond what this machine can hold";
    }
    out = DumpIndex();
    return false;
}

}  // namespace

std::vector<std::uint8_t> serializeIndex(const DumpIndex& index, const FolderFingerprint& fp, IndexEncoding enc) {
    std::vector<std::uint8_t> out;
    std::string error;
    writeIndex(
        index, fp, enc,
        [&](const void* p, std::size_t n) {
            const auto* b = static_cast<const std::uint8_t*>(p);
            out.insert(out.end(), b, b + n);
            return true;
        },
        error);
    return out;  // empty when zstd failed: a reader refuses it
}

std::vector<std::uint8_t> serializeIndex(const DumpIndex& index, const FolderFingerprint& fp, int zstdLevel) {
    return serializeIndex(index, fp, IndexEncoding{false, zstdLevel});
}

bool deserializeIndex(const std::uint8_t* data, std::size_t size, DumpIndex& out, FolderFingerprint& fp,
                      std::string& error) {
    const auto src = container::memorySource(data, size);
    return guarded(out, error, [&] { return readIndex(*src, out, fp, error); });
}

bool writeIndexFile(const std::string& path, const DumpIndex& index, const FolderFingerprint& fp, IndexEncoding enc,
                    std::string& error) {
    AtomicFile file;
    if (!file.open(path, error)) return false;
    std::string writeError;
    const bool ok = writeIndex(
        index, fp, enc, [&](const void* p, std::size_t n) { return file.write(p, n, writeError); }, error);
    if (!ok) {
        if (!writeError.empty()) error = writeError;
        return false;
    }
    return file.commit(error);
}

bool readIndexFile(const std::string& path, DumpIndex& out, FolderFingerprint& fp, std::string& error) {
    const int fd = openRegularFile(path, error);  // a FIFO or folder in place of an index: refused
    if (fd < 0) return false;
    struct stat st {};
    bool ok = ::fstat(fd, &st) == 0;
    if (!ok) error = std::string("cannot stat: ") + std::strerror(errno);
    if (ok) {
        const auto src = container::fileSource(fd, std::uint64_t(st.st_size));
        ok = guarded(out, error, [&] { return readIndex(*src, out, fp, error); });
    }
    ::close(fd);
    return ok;
}

bool writeFileAtomically(const std::string& path, const std::vector<std::uint8_t>& bytes, std::string& error) {
    AtomicFile file;
    return file.open(path, error) && file.write(bytes.data(), bytes.size(), error) && file.commit(error);
}

bool readWholeFile(const std::string& path, std::vector<std::uint8_t>& out, std::string& error) {
    out.clear();
    const int fd = openRegularFile(path, error);  // a FIFO or folder in place of an index: refused
    if (fd < 0) {
        error = path + ": " + error;
        return false;
    }
    struct stat st {};
    bool ok = ::fstat(fd, &st) == 0;
    if (!ok) error = "cannot stat " + path + ": " + std::strerror(errno);
    try {
        if (ok) allocateHuge(out, std::size_t(st.st_size));
    } catch (const std::bad_alloc&) {
        ok = false;
        error = path + ": " + std::to_string(st.st_size) + " bytes do not fit in memory";
    }
    if (ok && !readFileAt(fd, out.data(), out.size(), 0, error)) {
        ok = false;
        error = "cannot read " + path + ": " + error;
    }
    ::close(fd);
    return ok;
}

}  // namespace dl
