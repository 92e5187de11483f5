#include "core/index/index_serializer.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>
#include <zstd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <new>
#include <stdexcept>
#include <filesystem>
#include <fstream>
#include <random>
#include <type_traits>

#include "core/io/regular_file.h"
#include "core/util/huge_pages.h"
#include "core/util/read_file.h"

namespace dl {
namespace {

constexpr char kMagic[8] = {'D', 'L', 'I', 'N', 'D', 'E', 'X', '\x1a'};
constexpr std::size_t kHeaderSize = 8 + 4 + 4 + 8 + 8 + 8;

// Streams the body into zstd: no uncompressed image of the index is built (at 10M tensors it
// would be another 1.1 GB at the peak). Without a context it only counts the bytes, so the frame
// can declare its content size (the reader checks it).
class Writer {
public:
    Writer(ZSTD_CCtx* cctx, std::vector<std::uint8_t>* out) : m_cctx(cctx), m_out(out), m_used(out ? out->size() : 0) {}
    template <class T> void pod(const T& v) {
        static_assert(std::is_trivially_copyable_v<T>);
        put(&v, sizeof(T));
    }
    template <class T> void vec(const std::vector<T>& v) {
        static_assert(std::is_trivially_copyable_v<T>);
        pod(std::uint64_t(v.size()));
        put(v.data(), v.size() * sizeof(T));
    }
    void str(const std::string& s) {
        pod(std::uint64_t(s.size()));
        put(s.data(), s.size());
    }
    std::uint64_t size() const { return m_size; }
    // Ends the frame; false on a zstd error.
    bool finish() {
        if (!m_cctx) return true;
        flushSmall();
        ZSTD_inBuffer in{nullptr, 0, 0};
        for (;;) {
            ZSTD_outBuffer o = room();
            const std::size_t r = ZSTD_compressStream2(m_cctx, &o, &in, ZSTD_e_end);
            m_out->resize(m_used += o.pos);
            if (ZSTD_isError(r)) return m_ok = false;
            if (r == 0) return m_ok;
        }
    }

private:
    static constexpr std::size_t kSmall = std::size_t(64) << 10;
    void put(const void* p, std::size_t n) {
        m_size += n;
        if (!m_cctx || n == 0) return;
        if (m_small.size() + n <= kSmall) {  // strings and fields: gathered, then compressed at once
            const auto* b = static_cast<const std::uint8_t*>(p);
            m_small.insert(m_small.end(), b, b + n);
            return;
        }
        flushSmall();
        compress(p, n);
    }
    void flushSmall() {
        if (m_small.empty()) return;
        compress(m_small.data(), m_small.size());
        m_small.clear();
    }
    ZSTD_outBuffer room() {
        const std::size_t chunk = ZSTD_CStreamOutSize();
        m_out->resize(m_used + chunk);
        return {m_out->data() + m_used, chunk, 0};
    }
    void compress(const void* p, std::size_t n) {
        ZSTD_inBuffer in{p, n, 0};
        while (m_ok && in.pos < in.size) {
            ZSTD_outBuffer o = room();
            const std::size_t r = ZSTD_compressStream2(m_cctx, &o, &in, ZSTD_e_continue);
            m_out->resize(m_used += o.pos);
            if (ZSTD_isError(r)) m_ok = false;
        }
    }
    ZSTD_CCtx* m_cctx;
    std::vector<std::uint8_t>* m_out;
    std::size_t m_used;   // bytes of *m_out holding output
    std::vector<std::uint8_t> m_small;
    std::uint64_t m_size = 0;
    bool m_ok = true;
};

// Decompresses straight into the destination arrays: no intermediate copy of the whole image.
class Reader {
public:
    Reader(const std::uint8_t* compressed, std::size_t size, std::uint64_t decompressedSize)
        : m_ds(ZSTD_createDStream()), m_in{compressed, size, 0}, m_remaining(decompressedSize) {
        ZSTD_initDStream(m_ds);
    }
    ~Reader() { ZSTD_freeDStream(m_ds); }
    Reader(const Reader&) = delete;
    Reader& operator=(const Reader&) = delete;

    template <class T> bool pod(T& v) { return read(&v, sizeof(T)); }
    // A declared length is checked against the bytes left and then allocated only as its bytes
    // actually decompress (in steps), so a lying length costs what the file really holds.
    template <class T> bool vec(std::vector<T>& v) {
        std::uint64_t n = 0;
        if (!pod(n) || n > m_remaining / sizeof(T)) return fail();
        return fill(v, std::size_t(n));
    }
    bool str(std::string& s) {
        std::uint64_t n = 0;
        if (!pod(n) || n > m_remaining) return fail();
        return fill(s, std::size_t(n));
    }
    // A count of records each at least `minBytes` long: false when the bytes left cannot hold them.
    bool count(std::uint64_t& n, std::uint64_t minBytes) { return pod(n) && (n <= m_remaining / minBytes || fail()); }
    bool atEnd() const { return m_ok && m_remaining == 0; }

private:
    static constexpr std::size_t kStepBytes = std::size_t(16) << 20;
    static constexpr std::uint64_t kMaxRatio = 256;   // real indexes compress 5-15x
    template <class V> bool fill(V& v, std::size_t n) {
        using T = std::remove_reference_t<decltype(*v.data())>;
        v.clear();
        const std::size_t step = kStepBytes / sizeof(T);
        // Sized at once (huge pages, no regrowth) when the compressed bytes left could plausibly
        // hold it; a length far beyond them grows in steps as its bytes really decompress.
        if (n <= step || std::uint64_t(n) * sizeof(T) / kMaxRatio <= m_in.size - m_in.pos) {
            allocateHuge(v, n);
            return read(v.data(), n * sizeof(T));
        }
        for (std::size_t done = 0; done < n;) {
            const std::size_t k = std::min(n - done, std::max(step, done));   // doubling: amortised copies
            v.resize(done + k);
            if (!read(v.data() + done, k * sizeof(T))) return false;
            done += k;
        }
        return true;
    }
    bool read(void* dst, std::size_t n) {
        if (!m_ok || n > m_remaining) return fail();
        ZSTD_outBuffer out{dst, n, 0};
        while (out.pos < out.size) {
            const std::size_t before = out.pos, inBefore = m_in.pos;
            const std::size_t r = ZSTD_decompressStream(m_ds, &out, &m_in);
            if (ZSTD_isError(r) || (out.pos == before && m_in.pos == inBefore)) return fail();
        }
        m_remaining -= n;
        return true;
    }
    bool fail() { m_ok = false; return false; }
    ZSTD_DStream* m_ds;
    ZSTD_inBuffer m_in;
    std::uint64_t m_remaining;
    bool m_ok = true;
};

void writeBody(Writer& w, const DumpIndex& idx, const FolderFingerprint& fp) {
    w.pod(fp);
    w.str(idx.root);
    w.str(idx.strings.blob());
    w.vec(idx.strings.offsets());
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
    w.vec(idx.ops);
    w.vec(idx.tensors);
    w.vec(idx.sides);
    w.vec(idx.dims);
    w.vec(idx.histBytes);
    w.vec(idx.overflows);
    w.vec(idx.wideStats);
    w.pod(std::uint64_t(idx.warnings.size()));
    for (const auto& wr : idx.warnings) {
        w.str(wr.path);
        w.str(wr.reason);
        w.pod(wr.severity);
    }
    w.str(idx.meta.frameworkVersion);
    w.str(idx.meta.deviceTarget);
    w.str(idx.meta.dumpMode);
    w.str(idx.meta.dumpConfigJson);
    w.pod(idx.meta.opDebugMode);
}

bool readBody(Reader& r, DumpIndex& idx, FolderFingerprint& fp) {
    std::uint64_t n = 0;
    std::string blob;
    std::vector<std::uint32_t> offsets;
    if (!r.pod(fp) || !r.str(idx.root) || !r.str(blob) || !r.vec(offsets)) return false;
    if (!idx.strings.assign(std::move(blob), std::move(offsets))) return false;
    // A rank record is at least its 4-byte id, a format byte and five length fields.
    if (!r.count(n, 4 + 1 + 5 * 8) || n > (1u << 20)) return false;
    idx.ranks.resize(std::size_t(n));
    for (auto& rk : idx.ranks)
        if (!r.pod(rk.rank) || !r.str(rk.folder) || !r.pod(rk.format) || !r.str(rk.host) || !r.str(rk.deviceId) ||
            !r.str(rk.indexedOn) || !r.str(rk.dataRoot) || !r.str(rk.orderSource))
            return false;
    if (!r.vec(idx.ops) || !r.vec(idx.tensors) || !r.vec(idx.sides) || !r.vec(idx.dims) || !r.vec(idx.histBytes) ||
        !r.vec(idx.overflows) || !r.vec(idx.wideStats) || !r.count(n, 2 * 8 + 1))
        return false;
    idx.warnings.clear();
    idx.warnings.reserve(std::size_t(std::min<std::uint64_t>(n, 1u << 16)));
    for (std::uint64_t i = 0; i < n; ++i) {
        IndexWarning w;
        if (!r.str(w.path) || !r.str(w.reason) || !r.pod(w.severity)) return false;
        if (w.severity != WarningSeverity::Unreadable && w.severity != WarningSeverity::Note) return false;
        idx.warnings.push_back(std::move(w));
    }
    return r.str(idx.meta.frameworkVersion) && r.str(idx.meta.deviceTarget) && r.str(idx.meta.dumpMode) &&
           r.str(idx.meta.dumpConfigJson) && r.pod(idx.meta.opDebugMode) && r.atEnd();
}

// Every id and offset must point inside its table, or a corrupt file could crash a reader later.
bool validate(const DumpIndex& idx) {
    const auto ns = idx.strings.size();
    for (const auto& op : idx.ops) {
        if (op.type >= ns || op.name >= ns || op.scope >= ns || op.net >= ns) return false;
        if (std::uint64_t(op.firstTensor) + op.tensorCount > idx.tensors.size()) return false;
        if (op.overflow >= std::int64_t(idx.overflows.size())) return false;
        if (op.tensorNames >= ns) return false;  // msprobe tensor names (format 6)
    }
    for (const auto& s : idx.sides)
        if (s.file >= ns) return false;
    for (const auto& t : idx.tensors) {
        if (t.op >= idx.ops.size() || t.format >= ns || t.side > idx.sides.size()) return false;
        const TensorSide& s = idx.side(t);
        const std::uint64_t run = std::uint64_t(t.ndim) + ((t.flags & DeviceFormat) ? s.origNdim : 0);
        if (std::uint64_t(t.shapeOffset) + run > idx.dims.size()) return false;
        if ((t.flags & HasHistogram) && s.histOffset >= idx.histBytes.size()) return false;
        if (t.packedStats.wide && t.packedStats.count >= idx.wideStats.size()) return false;
    }
    for (const auto& o : idx.overflows)
        if (o.file >= ns) return false;
    return true;
}

}  // namespace

std::vector<std::uint8_t> serializeIndex(const DumpIndex& index, const FolderFingerprint& fp, int zstdLevel) {
    Writer counter(nullptr, nullptr);
    writeBody(counter, index, fp);
    const std::uint64_t usize = counter.size();
    std::vector<std::uint8_t> out;
    // Address space for the worst case; only the pages written are ever touched.
    out.reserve(kHeaderSize + ZSTD_compressBound(usize));
    out.resize(kHeaderSize);
    ZSTD_CCtx* cctx = ZSTD_createCCtx();
    ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, zstdLevel);
    ZSTD_CCtx_setPledgedSrcSize(cctx, usize);   // the frame declares its size, as the reader expects
    Writer w(cctx, &out);   // appends after the header
    writeBody(w, index, fp);
    const bool ok = w.finish();
    ZSTD_freeCCtx(cctx);
    if (!ok) out.resize(kHeaderSize);   // an empty payload: the reader refuses it
    const std::uint64_t cs = out.size() - kHeaderSize;
    const std::uint64_t hash = XXH64(out.data() + kHeaderSize, cs, 0);
    std::uint8_t* h = out.data();
    std::memcpy(h, kMagic, 8);
    std::memcpy(h + 8, &kIndexFormatVersion, 4);
    std::memset(h + 12, 0, 4);
    std::memcpy(h + 16, &usize, 8);
    std::memcpy(h + 24, &cs, 8);
    std::memcpy(h + 32, &hash, 8);
    return out;
}

namespace {

bool deserializeChecked(const std::uint8_t* data, std::size_t size, DumpIndex& out, FolderFingerprint& fp,
                        std::string& error) {
    if (size < kHeaderSize || std::memcmp(data, kMagic, 8) != 0) {
        error = "not a DumpLens index file (bad magic)";
        return false;
    }
    std::uint32_t version = 0;
    std::uint64_t usize = 0, csize = 0, hash = 0;
    std::memcpy(&version, data + 8, 4);
    std::memcpy(&usize, data + 16, 8);
    std::memcpy(&csize, data + 24, 8);
    std::memcpy(&hash, data + 32, 8);
    if (version != kIndexFormatVersion) {
        error = "index format version " + std::to_string(version) + ", this build reads " +
                std::to_string(kIndexFormatVersion);
        return false;
    }
    if (csize != size - kHeaderSize) {
        error = "index file truncated or padded (payload " + std::to_string(size - kHeaderSize) + " bytes, header says " +
                std::to_string(csize) + ")";
        return false;
    }
    if (XXH64(data + kHeaderSize, csize, 0) != hash) {
        error = "index checksum mismatch (file corrupt)";
        return false;
    }
    const auto frame = ZSTD_getFrameContentSize(data + kHeaderSize, csize);
    if (frame != usize || usize > (std::uint64_t(1) << 40)) {
        error = "index payload size mismatch";
        return false;
    }
    Reader r(data + kHeaderSize, csize, usize);
    out = DumpIndex();
    if (!readBody(r, out, fp) || !validate(out)) {
        out = DumpIndex();
        error = "index payload is inconsistent (corrupt or written by another build)";
        return false;
    }
    return true;
}

}  // namespace

bool deserializeIndex(const std::uint8_t* data, std::size_t size, DumpIndex& out, FolderFingerprint& fp,
                      std::string& error) {
    // Last resort: every length is checked before it is allocated, but an index that is merely
    // large for this machine must still be an error, not an abort.
    try {
        return deserializeChecked(data, size, out, fp, error);
    } catch (const std::bad_alloc&) {
        error = "index too large for the memory available";
    } catch (const std::length_error&) {
        error = "index declares a length beyond what this machine can hold";
    }
    out = DumpIndex();
    return false;
}

namespace {

// Temporary files "<name>.tmp<random>.<pid>" left by a writer that was killed: removed when their
// process is gone (a live writer, even of another run, keeps its file).
void removeStaleTemporaries(const std::filesystem::path& target) {
    namespace fs = std::filesystem;
    std::error_code ec;
    const std::string prefix = target.filename().string() + ".tmp";
    const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
        const std::string name = it->path().filename().string();
        if (!name.starts_with(prefix)) continue;
        const auto dot = name.rfind('.');
        if (dot == std::string::npos || dot + 1 >= name.size() || dot < prefix.size()) continue;
        const std::string pidText = name.substr(dot + 1);
        if (pidText.find_first_not_of("0123456789") != std::string::npos || pidText.size() > 9) continue;
        const pid_t pid = pid_t(std::stol(pidText));
        std::error_code removeError;   // a file another cleaner removed first is fine
        if (pid > 0 && ::kill(pid, 0) != 0 && errno == ESRCH) fs::remove(it->path(), removeError);
    }
}

}  // namespace

bool writeFileAtomically(const std::string& path, const std::vector<std::uint8_t>& bytes, std::string& error) {
    namespace fs = std::filesystem;
    std::error_code ec;
    const fs::path target(path);
    if (target.has_parent_path()) fs::create_directories(target.parent_path(), ec);
    removeStaleTemporaries(target);
    std::random_device rd;
    const std::string tmp = path + ".tmp" + std::to_string(rd()) + "." + std::to_string(::getpid());
    const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0) {
        error = "cannot create " + tmp + ": " + std::strerror(errno);
        return false;
    }
    std::size_t done = 0;
    while (done < bytes.size()) {
        const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            error = "cannot write " + tmp + ": " + std::strerror(errno);
            ::close(fd);
            ::unlink(tmp.c_str());
            return false;
        }
        done += std::size_t(n);
    }
    const bool synced = ::fsync(fd) == 0;
    ::close(fd);
    if (!synced || ::rename(tmp.c_str(), path.c_str()) != 0) {
        error = "cannot move " + tmp + " to " + path + ": " + std::strerror(errno);
        ::unlink(tmp.c_str());
        return false;
    }
    return true;
}

bool readWholeFile(const std::string& path, std::vector<std::uint8_t>& out, std::string& error) {
    out.clear();
    const int fd = openRegularFile(path, error);   // a FIFO or folder in place of an index: refused
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
