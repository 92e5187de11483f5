// Raw CANN dump files (docs/formats.md 2): one op execution per file, a protobuf header listing
// its inputs and outputs, then their payloads. Its tensors are known only once the header was read
// (on a worker), so they become drafts in finish().
#include <string>
#include <vector>

#include "core/formats/cann/cann_stats.h"
#include "core/index/format_reader.h"
#include "core/index/shard_context.h"

namespace dl {
namespace {

// A raw CANN file: one op execution whose tensors are only known once its header is read.
struct RawFile {
    std::uint32_t folder = 0;
    DumpFileName name;
    std::string rel;
    std::uint64_t size = 0;
    std::int64_t stamp = 0;  // ScannedFile::stamp
    StatsJobResult result;
};

class CannRawReader final : public ShardReader {
public:
    using ShardReader::ShardReader;

    bool scanFile(const ScannedFile& f, const DumpFileName& name) override {
        if (name.kind != DumpFileKind::CannRaw) return false;
        add(f, name);
        return true;
    }
    StatsJobResult run(const StatsJob& job, std::vector<std::uint8_t>& scratch) const override {
        StatsJobResult r;
        runCannRawJob(job, scratch, r);
        return r;
    }
    void apply(const StatsJob& job, StatsJobResult&& result) override {
        rawFiles[job.draft].result = std::move(result);
    }
    void finishDrafts(DumpIndex&) override {
        for (RawFile& raw : rawFiles) materialize(raw);
    }

private:
    void add(const ScannedFile& f, const DumpFileName& name);
    void materialize(RawFile& raw);
    std::vector<RawFile> rawFiles;
};

void CannRawReader::add(const ScannedFile& f, const DumpFileName& name) {
    RawFile raw;
    raw.folder = s.folderOf(f.rel);
    s.noteGrammarFolder(raw.folder);
    s.noteFormat(raw.folder, DumpFormat::CannRaw);
    raw.name = name;
    raw.rel = f.rel;
    raw.size = f.size;
    raw.stamp = f.stamp;
    const auto id = std::uint32_t(rawFiles.size());
    // Unchanged raw file: every tensor it held comes back from the previous index.
    if (const auto previous = s.previousTensors(f.rel); !previous.empty()) {
        const DumpIndex& prev = *s.previousIndex();
        bool same = true;
        for (const TensorRecord* t : previous)
            same =
                same && prev.side(*t).fileSize == f.size && prev.side(*t).fileStamp == f.stamp && (t->flags & HasData);
        if (same) {
            raw.result.ok = true;
            for (const TensorRecord* t : previous) {
                StatsJobPart p;
                p.io = t->io;
                p.slot = t->slot;
                p.dtype = t->dtype;
                p.format = prev.strings.str(t->format);
                p.shape = prev.shape(*t);
                if (t->flags & DeviceFormat) p.originalShape = prev.originalShape(*t);
                p.dataOffset = prev.side(*t).dataOffset;
                p.dataBytes = prev.side(*t).dataBytes;
                p.flags = t->flags & (DeviceFormat | PaddingExcluded | PaddingIncluded);
                p.stats = prev.stats(*t);
                p.hasStats = p.stats.known != 0;
                prev.histogram(*t, p.hist);
                raw.result.parts.push_back(std::move(p));
            }
            rawFiles.push_back(std::move(raw));
            s.countReused();
            return;
        }
    }
    rawFiles.push_back(std::move(raw));
    s.queueJob({id, s.absPath(f), f.size, DType::Unknown, this});
}

// Turns the parts of a raw file into tensor drafts (after the parallel jobs: drafts may grow here).
void CannRawReader::materialize(RawFile& raw) {
    if (!raw.result.ok) {
        s.warn(raw.rel, "raw CANN dump unreadable: " + raw.result.error, WarningSeverity::Unreadable);
        return;
    }
    for (const auto& note : raw.result.notes) s.warn(raw.rel, note, WarningSeverity::Unreadable);
    const DumpFileName& n = raw.name;
    for (StatsJobPart& p : raw.result.parts) {
        const auto id = s.draftFor(raw.folder, n.opType, n.opName, n.taskId, n.streamId, n.timestampUs, p.io, p.slot);
        Draft& d = s.drafts[id];
        if (d.hasFile) continue;
        if (!p.note.empty())
            s.warn(raw.rel,
                   std::string(p.io == Io::Input ? "input " : "output ") + std::to_string(p.slot) + ": " + p.note,
                   WarningSeverity::Unreadable);
        d.hasFile = true;
        FileSide& fs = d.fileSide();
        fs.fileRel = raw.rel;
        fs.fileSize = raw.size;
        fs.stamp = raw.stamp;
        d.format = s.keys.intern(p.format);
        d.origDtype = p.dtype;
        TensorData& t = fs.data;
        t.ok = true;
        t.dtype = p.dtype;
        t.shape = std::move(p.shape);
        t.origShape = std::move(p.originalShape);
        t.flags = p.flags;
        t.dataOffset = p.dataOffset;
        t.dataBytes = p.dataBytes;
        if (p.hasStats) {
            t.stats = p.stats;
            if (t.stats.has(stat::Histogram)) p.hist.encode(t.hist);
        }
    }
}

}  // namespace

// A folder of raw CANN files names its rank's format.
extern const FormatReader kCannRawReader{
    .format = DumpFormat::CannRaw, .name = "CANN raw", .namesRankFormat = true, .open = openReader<CannRawReader>};

}  // namespace dl
