// statistic.csv (docs/formats.md 1.6): one draft per row, the row's figures packed into it. A
// statistics-only dump holds millions of rows and no tensor files; next to .npy files the rows
// give the figures of tensors whose files were not written.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <deque>
#include <span>
#include <string>
#include <vector>

#include "core/formats/mindspore/dump_metadata.h"
#include "core/formats/mindspore/statistic_csv.h"
#include "core/index/format_reader.h"
#include "core/index/shard_context.h"

namespace dl {
namespace {

// A statistic.csv kept across builds of its shard (ShardResume, the watch): its complete lines
// are parsed once, as they arrive; each build applies the rows kept and reads only the bytes
// added since the last. The rows' views point into `chunks` (one string per read, never moved).
struct CsvResume final : ShardResumeEntry {
    struct Row {
        std::string_view opType, opName, format;
        std::uint32_t taskId = 0, streamId = 0, line = 0;
        std::int64_t timestampUs = 0;
        Io io = Io::Output;
        std::uint16_t slot = 0;
        bool hasShape = false;
        std::uint8_t ndim = 0;
        DType dtype = DType::Unknown;
        std::uint32_t dims = 0;  // into `dims`
        std::uint64_t dataBytes = 0;
        TensorStats stats;
    };
    StatisticCsvStream stream;
    std::deque<std::string> chunks;
    std::vector<Row> rows;
    std::vector<std::int64_t> dims;
    std::uint64_t offset = 0;  // bytes consumed: just past the last complete line
    dev_t dev = 0;
    ino_t ino = 0;
    std::string before;      // the bytes just before `offset`: changed, the file was rewritten
    std::uint64_t tail = 0;  // bytes after the last line break at the last read

    // Reads what was added since the last call; false (error set) when the file cannot be read.
    // A file replaced, shortened or changed before `offset` is read again from its start.
    bool update(const std::string& path, std::uint64_t& bytesRead, std::string& error) {
        const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
        if (fd < 0) {
            error = path + ": " + std::strerror(errno);
            return false;
        }
        struct stat st {};
        bool ok = ::fstat(fd, &st) == 0;
        if (ok && offset > 0) {
            bool same = st.st_dev == dev && st.st_ino == ino && std::uint64_t(st.st_size) >= offset;
            if (same) {
                std::string now(before.size(), '\0');
                same = readAt(fd, now.data(), now.size(), offset - before.size()) == now.size() && now == before;
                bytesRead += now.size();
            }
            if (!same) *this = CsvResume();
        }
        dev = st.st_dev;
        ino = st.st_ino;
        std::string added;
        if (ok && std::uint64_t(st.st_size) > offset) {
            added.resize(std::size_t(std::uint64_t(st.st_size) - offset));
            const std::size_t got = readAt(fd, added.data(), added.size(), offset);
            ok = got == added.size() || errno == 0;
            added.resize(got);
            bytesRead += got;
        }
        const int readErrno = errno;
        ::close(fd);
        if (!ok) {
            error = path + ": " + std::strerror(readErrno);
            return false;
        }
        const std::size_t lastBreak = added.rfind('\n');
        tail = lastBreak == std::string::npos ? added.size() : added.size() - lastBreak - 1;
        if (lastBreak == std::string::npos) return true;
        added.resize(lastBreak + 1);  // the partial last line waits for the next read
        offset += added.size();
        const std::string& text = chunks.emplace_back(std::move(added));
        before.assign(text, text.size() - std::min<std::size_t>(text.size(), 64));
        stream.feed(text, [&](StatisticRow& r) {
            Row& k = rows.emplace_back();
            k.opType = r.opType, k.opName = r.opName, k.format = r.format;
            k.taskId = r.taskId, k.streamId = r.streamId, k.line = r.line, k.timestampUs = r.timestampUs;
            k.io = r.io, k.slot = r.slot, k.hasShape = r.hasShape, k.dtype = r.dtype, k.dataBytes = r.dataBytes;
            k.stats = r.stats;
            if (r.hasShape) {
                k.dims = std::uint32_t(dims.size());
                k.ndim = std::uint8_t(std::min<std::size_t>(r.shape.size(), 255));
                dims.insert(dims.end(), r.shape.begin(), r.shape.begin() + k.ndim);
            }
        });
        return true;
    }

    static std::size_t readAt(int fd, char* p, std::size_t n, std::uint64_t at) {
        std::size_t got = 0;
        errno = 0;
        while (got < n) {
            const ssize_t r = ::pread(fd, p + got, n - got, off_t(at + got));
            if (r < 0 && errno == EINTR) continue;
            if (r <= 0) break;
            got += std::size_t(r);
        }
        return got;
    }
};

class StatisticCsvReader final : public ShardReader {
public:
    using ShardReader::ShardReader;

    // The bytes of all statistic.csv files of the shard: the first file's bytes per line then
    // size the drafts for all of them at once (one allocation, no moves of the drafts).
    void scanShard(const std::vector<const ScannedFile*>& files, std::vector<char>&) override {
        for (const ScannedFile* f : files)
            if (f->rel == "statistic.csv" || f->rel.ends_with("/statistic.csv")) csvBytesLeft += f->size;
    }

    // Offered by its name (the row's fileName) before *.csv files are set aside.
    bool scanFile(const ScannedFile& f, const DumpFileName&) override {
        if (f.rel != "statistic.csv" && !f.rel.ends_with("/statistic.csv")) return false;
        read(f);
        return true;
    }

private:
    // A parsed row waiting for its draft: the table slot of its key is prefetched when it is
    // parsed and looked up one row later, when the slot has arrived in the cache.
    struct Pending {
        DraftKey key{};
        std::uint64_t hash = 0;
        std::uint32_t line = 0;
        TensorStats stats;
        bool hasShape = false;
        std::vector<std::int64_t> shape;
        DType dtype = DType::Unknown;
        std::uint64_t dataBytes = 0;
        std::string_view format;  // into the file's text, alive until the file is done
    };
    void read(const ScannedFile& f);
    void reserveFor(const std::string& text, std::uint64_t fileBytes);
    void apply(const Pending& p, const std::string& fileRel);
    void applyFields(const DraftKey& key, std::uint64_t hash, std::uint32_t line, const TensorStats& stats,
                     bool hasShape, std::span<const std::int64_t> shape, DType dtype, std::uint64_t dataBytes,
                     std::string_view format, const std::string& fileRel);
    void readResumed(const ScannedFile& f);
    std::uint64_t csvBytesLeft = 0;
    std::string text;  // reused: a fresh buffer per file was a fresh page-zeroing per file
};

void StatisticCsvReader::reserveFor(const std::string& text, std::uint64_t fileBytes) {
    const std::size_t lines = countLines(text) + 1;
    std::size_t want = s.drafts.size() + lines;
    if (csvBytesLeft > fileBytes && !text.empty())  // the other files at this file's bytes per line, +10%
        want += std::size_t(double(csvBytesLeft - fileBytes) * double(lines) / double(text.size()) * 1.1);
    csvBytesLeft = csvBytesLeft > fileBytes ? csvBytesLeft - fileBytes : 0;
    if (s.drafts.size() + lines > s.drafts.capacity())
        s.reserveDrafts(std::max(want, s.drafts.capacity() + s.drafts.capacity() / 2));
}

void StatisticCsvReader::apply(const Pending& p, const std::string& fileRel) {
    applyFields(p.key, p.hash, p.line, p.stats, p.hasShape, p.shape, p.dtype, p.dataBytes, p.format, fileRel);
}

void StatisticCsvReader::applyFields(const DraftKey& key, std::uint64_t hash, std::uint32_t line,
                                     const TensorStats& stats, bool hasShape, std::span<const std::int64_t> shape,
                                     DType dtype, std::uint64_t dataBytes, std::string_view format,
                                     const std::string& fileRel) {
    const auto id = s.draftAt(key, hash);
    Draft& d = s.drafts[id];
    if (d.hasCsv) {
        s.warn(fileRel, "line " + std::to_string(line) + ": duplicate row for the same tensor, kept the first",
               WarningSeverity::Note);
        return;
    }
    d.hasCsv = true;
    if (!d.csvStats.pack(stats)) {
        d.csvStats = PackedStats();
        d.csvWide = true;
        d.csvStats.count = std::uint32_t(s.csvWide.size());
        s.csvWide.push_back(stats);
    }
    if (hasShape) {
        d.csvHasShape = true;
        d.csvDims = std::uint32_t(s.csvDims.size());
        d.csvNdim = std::uint8_t(std::min<std::size_t>(shape.size(), 255));
        s.csvDims.insert(s.csvDims.end(), shape.begin(), shape.begin() + d.csvNdim);
    }
    d.csvDtype = dtype;
    d.csvBytes = dataBytes;
    if (d.origDtype == DType::Unknown) d.origDtype = dtype;
    if (d.format == 0 && !format.empty()) d.format = s.keys.intern(format);
}

// With a resume store: only the bytes added since the last build are read and parsed; the rows
// kept from before are applied again (the drafts are the builder's own, made anew each build).
void StatisticCsvReader::readResumed(const ScannedFile& f) {
    auto& slot = s.resume()->entries[f.rel];
    auto* r = dynamic_cast<CsvResume*>(slot.get());
    if (!r) {
        slot = std::make_unique<CsvResume>();
        r = static_cast<CsvResume*>(slot.get());
    }
    std::string error;
    if (!r->update(s.absPath(f), s.resume()->bytesRead, error)) {
        slot.reset();
        s.warn(f.rel, error, WarningSeverity::Unreadable);
        return;
    }
    const std::uint32_t folder = s.folderOf(f.rel);
    if (s.drafts.size() + r->rows.size() > s.drafts.capacity())
        s.reserveDrafts(std::max(s.drafts.size() + r->rows.size(), s.drafts.capacity() + s.drafts.capacity() / 2));
    for (const CsvResume::Row& row : r->rows) {
        const DraftKey key =
            s.keyFor(folder, row.opType, row.opName, row.taskId, row.streamId, row.timestampUs, row.io, row.slot);
        applyFields(key, hashKey(key), row.line, row.stats, row.hasShape,
                    std::span<const std::int64_t>(r->dims.data() + row.dims, row.hasShape ? row.ndim : 0), row.dtype,
                    row.dataBytes, row.format, f.rel);
    }
    if (!r->rows.empty()) s.noteRankFormat(DumpFormat::MindSporeStatsOnly);
    if (!r->stream.ok(error)) s.warn(f.rel, error, WarningSeverity::Unreadable);
    for (const auto& w : r->stream.warnings())
        s.warn(f.rel, (w.line ? "line " + std::to_string(w.line) + ": " : std::string()) + w.reason, w.severity);
    if (r->tail)
        s.warn(f.rel,
               "line " + std::to_string(r->stream.lines() + 1) +
                   " has no line break yet: not read until it has one (a row being written)",
               WarningSeverity::Unreadable);
}

void StatisticCsvReader::read(const ScannedFile& f) {
    if (s.resume()) {
        readResumed(f);
        return;
    }
    const std::uint32_t folder = s.folderOf(f.rel);
    std::vector<std::string> columns;
    std::vector<StatisticCsvWarning> warnings;
    std::string error;
    if (!readSmallTextFile(s.absPath(f), text, error, std::size_t(16) << 30)) {
        s.warn(f.rel, error, WarningSeverity::Unreadable);
        return;
    }
    reserveFor(text, f.size);
    Pending pending[2];
    int cur = 0;
    bool waiting = false;  // pending[cur ^ 1] holds the previous row
    bool anyRow = false;
    const bool ok = parseStatisticCsv(
        text,
        [&](StatisticRow& row) {
            anyRow = true;
            Pending& p = pending[cur];
            p.key =
                s.keyFor(folder, row.opType, row.opName, row.taskId, row.streamId, row.timestampUs, row.io, row.slot);
            p.hash = hashKey(p.key);
            s.prefetch(p.hash);
            p.line = row.line;
            p.stats = row.stats;
            p.hasShape = row.hasShape;
            if (row.hasShape) p.shape.assign(row.shape.begin(), row.shape.end());
            p.dtype = row.dtype;
            p.dataBytes = row.dataBytes;
            p.format = row.format;
            if (waiting) apply(pending[cur ^ 1], f.rel);
            waiting = true;
            cur ^= 1;
        },
        columns, warnings, error);
    if (waiting) apply(pending[cur ^ 1], f.rel);
    if (anyRow) s.noteRankFormat(DumpFormat::MindSporeStatsOnly);
    if (!ok) s.warn(f.rel, error, WarningSeverity::Unreadable);
    for (const auto& w : warnings)
        s.warn(f.rel, (w.line ? "line " + std::to_string(w.line) + ": " : std::string()) + w.reason, w.severity);
}

}  // namespace

// Its rank's format: what the shard's readers recorded (ShardContext::noteRankFormat, fillRankInfo).
extern const FormatReader kStatisticCsvReader{.format = DumpFormat::MindSporeStatsOnly,
                                              .name = "MindSpore statistic.csv",
                                              .open = openReader<StatisticCsvReader>,
                                              .fileName = "statistic.csv"};

}  // namespace dl
