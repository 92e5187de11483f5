// statistic.csv (docs/formats.md 1.6): one draft per row, the row's figures packed into it. A
// statistics-only dump holds millions of rows and no tensor files; next to .npy files the rows
// give the figures of tensors whose files were not written.
#include <algorithm>
#include <string>
#include <vector>

#include "core/index/readers/format_reader.h"
#include "core/index/shard_context.h"
#include "core/io/dump_metadata.h"
#include "core/io/statistic_csv.h"

namespace dl {
namespace {

class StatisticCsvReader final : public ShardReader {
public:
    explicit StatisticCsvReader(ShardContext& shard) : s(shard) {}

    bool addNamed(const ScannedFile& f, std::string_view base) override {
        if (base != "statistic.csv") return false;
        read(f);
        return true;
    }

private:
    void read(const ScannedFile& f);
    ShardContext& s;
};

void StatisticCsvReader::read(const ScannedFile& f) {
    const std::uint32_t folder = s.folderOf(f.rel);
    std::vector<std::string> columns;
    std::vector<StatisticCsvWarning> warnings;
    std::string error, text;
    if (!readSmallTextFile(s.rootAbs + "/" + f.rel, text, error, std::size_t(16) << 30)) {
        s.warn(f.rel, error, WarningSeverity::Unreadable);
        return;
    }
    // Room for every line of the file at once (one move of the drafts, not several).
    const std::size_t lines = std::size_t(std::count(text.begin(), text.end(), '\n')) + 1;
    if (s.drafts.size() + lines > s.drafts.capacity())
        s.reserveDrafts(std::max(s.drafts.size() + lines, s.drafts.capacity() + s.drafts.capacity() / 2));
    const bool ok = parseStatisticCsv(
        text,
        [&](StatisticRow& row) {
            const auto id = s.draftFor(folder, row.opType, row.opName, row.taskId, row.streamId, row.timestampUs,
                                     row.io, row.slot);
            Draft& d = s.drafts[id];
            if (d.hasCsv) {
                s.warn(f.rel,
                       "line " + std::to_string(row.line) + ": duplicate row for the same tensor, kept the first",
                       WarningSeverity::Note);
                return;
            }
            d.hasCsv = true;
            if (!d.csvStats.pack(row.stats)) {
                d.csvStats = PackedStats();
                d.csvWide = true;
                d.csvStats.count = std::uint32_t(s.csvWide.size());
                s.csvWide.push_back(row.stats);
            }
            if (row.hasShape) {
                d.csvHasShape = true;
                d.csvDims = std::uint32_t(s.csvDims.size());
                d.csvNdim = std::uint8_t(std::min<std::size_t>(row.shape.size(), 255));
                s.csvDims.insert(s.csvDims.end(), row.shape.begin(), row.shape.begin() + d.csvNdim);
            }
            d.csvDtype = row.dtype;
            d.csvBytes = row.dataBytes;
            if (d.origDtype == DType::Unknown) d.origDtype = row.dtype;
            if (d.format == 0 && !row.format.empty()) d.format = s.keys.intern(row.format);
        },
        columns, warnings, error);
    if (!ok) s.warn(f.rel, error, WarningSeverity::Unreadable);
    for (const auto& w : warnings)
        s.warn(f.rel, (w.line ? "line " + std::to_string(w.line) + ": " : std::string()) + w.reason, w.severity);
}


}  // namespace

// Its rank's format is the shard's guess from the tensors it found (ShardSources::fillRankInfo).
extern const FormatReader kStatisticCsvReader{DumpFormat::MindSporeStatsOnly, "MindSpore statistic.csv", false,
                                              [](ShardContext& s) -> std::unique_ptr<ShardReader> {
                                                  return std::make_unique<StatisticCsvReader>(s);
                                              }};

}  // namespace dl
