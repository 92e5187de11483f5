// statistic.csv (docs/formats.md 1.6): one draft per row, the row's figures packed into it. A
// statistics-only dump holds millions of rows and no tensor files; next to .npy files the rows
// give the figures of tensors whose files were not written.
#include <algorithm>
#include <string>
#include <vector>

#include "core/formats/mindspore/dump_metadata.h"
#include "core/formats/mindspore/statistic_csv.h"
#include "core/index/format_reader.h"
#include "core/index/shard_context.h"

namespace dl {
namespace {

class StatisticCsvReader final : public ShardReader {
public:
    explicit StatisticCsvReader(ShardContext& shard) : s(shard) {}

    // The bytes of all statistic.csv files of the shard: the first file's bytes per line then
    // size the drafts for all of them at once (one allocation, no moves of the drafts).
    void collect(const std::vector<const ScannedFile*>& files, std::vector<char>&) override {
        for (const ScannedFile* f : files)
            if (f->rel == "statistic.csv" || f->rel.ends_with("/statistic.csv")) csvBytesLeft += f->size;
    }

    bool addNamed(const ScannedFile& f, std::string_view base) override {
        if (base != "statistic.csv") return false;
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
    ShardContext& s;
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
    const auto id = s.draftAt(p.key, p.hash);
    Draft& d = s.drafts[id];
    if (d.hasCsv) {
        s.warn(fileRel, "line " + std::to_string(p.line) + ": duplicate row for the same tensor, kept the first",
               WarningSeverity::Note);
        return;
    }
    d.hasCsv = true;
    if (!d.csvStats.pack(p.stats)) {
        d.csvStats = PackedStats();
        d.csvWide = true;
        d.csvStats.count = std::uint32_t(s.csvWide.size());
        s.csvWide.push_back(p.stats);
    }
    if (p.hasShape) {
        d.csvHasShape = true;
        d.csvDims = std::uint32_t(s.csvDims.size());
        d.csvNdim = std::uint8_t(std::min<std::size_t>(p.shape.size(), 255));
        s.csvDims.insert(s.csvDims.end(), p.shape.begin(), p.shape.begin() + d.csvNdim);
    }
    d.csvDtype = p.dtype;
    d.csvBytes = p.dataBytes;
    if (d.origDtype == DType::Unknown) d.origDtype = p.dtype;
    if (d.format == 0 && !p.format.empty()) d.format = s.keys.intern(p.format);
}

void StatisticCsvReader::read(const ScannedFile& f) {
    const std::uint32_t folder = s.folderOf(f.rel);
    std::vector<std::string> columns;
    std::vector<StatisticCsvWarning> warnings;
    std::string error;
    if (!readSmallTextFile(s.rootAbs + "/" + f.rel, text, error, std::size_t(16) << 30)) {
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
    if (anyRow) s.rankFormats.insert(DumpFormat::MindSporeStatsOnly);
    if (!ok) s.warn(f.rel, error, WarningSeverity::Unreadable);
    for (const auto& w : warnings)
        s.warn(f.rel, (w.line ? "line " + std::to_string(w.line) + ": " : std::string()) + w.reason, w.severity);
}

}  // namespace

// Its rank's format: what the shard's readers recorded (ShardContext::rankFormats, fillRankInfo).
extern const FormatReader kStatisticCsvReader{
    DumpFormat::MindSporeStatsOnly, "MindSpore statistic.csv", false,
    [](ShardContext& s) -> std::unique_ptr<ShardReader> { return std::make_unique<StatisticCsvReader>(s); }};

}  // namespace dl
