#include "core/index/shard_builder.h"

#include <algorithm>
#include <string_view>
#include <set>
#include <tuple>

#include "core/index/dump_layout.h"
#include "core/index/msprobe_shard.h"
#include "core/index/shard_sources.h"
#include "core/io/dump_metadata.h"
#include "core/io/npy_file.h"
#include "core/io/statistic_csv.h"
#include "core/stats/stats_accumulator.h"
#include "core/util/huge_pages.h"

namespace dl {
namespace {

// What the tensor file gave: StatsJobResult without its (large, fixed-size) histogram.
struct TensorData {
    bool ok = false;
    DType dtype = DType::Unknown;
    bool bigEndian = false, fortranOrder = false;
    std::vector<std::int64_t> shape;
    std::vector<std::int64_t> origShape;  // DeviceFormat tensors (CANN raw)
    std::uint16_t flags = 0;              // DeviceFormat / Padding* bits
    std::uint64_t dataOffset = 0, dataBytes = 0;
    TensorStats stats;
    std::vector<std::uint8_t> hist;  // Log2Histogram::encode form
};

// What a tensor file gave and where it lies: only tensors with a file carry one (a
// statistics-only dump of millions of rows holds none).
struct FileSide {
    std::string fileRel;
    std::uint64_t fileSize = 0;
    std::int64_t stamp = 0;   // ScannedFile::stamp
    bool readError = false;
    std::string readErrorText;  // set by a worker; warned in job order by finish()
    TensorData data;
};

// One tensor as found in names and statistic.csv rows, before it is grouped into an op execution.
// Kept small (about 100 bytes): a statistics-only shard holds one per CSV row. Strings are ids in
// the builder's own pool, the CSV shape lies in Impl::csvDims, the CSV figures are packed.
struct Draft {
    StrId opType = 0, opName = 0, format = 0;  // ShardBuilder::Impl::keys
    std::uint32_t taskId = 0, streamId = 0;
    std::int64_t timestampUs = 0;
    Io io = Io::Output;
    std::uint16_t slot = 0;
    DType origDtype = DType::Unknown;
    std::uint32_t folder = 0;
    bool hasFile = false;
    std::unique_ptr<FileSide> file;  // set with hasFile, before any worker runs
    // From statistic.csv:
    bool hasCsv = false;
    bool csvHasShape = false;
    bool csvWide = false;             // csvStats.count indexes Impl::csvWide
    std::uint8_t csvNdim = 0;
    DType csvDtype = DType::Unknown;
    std::uint32_t csvDims = 0;        // first dim in Impl::csvDims
    std::uint64_t csvBytes = 0;
    PackedStats csvStats;

    FileSide& fileSide() {
        if (!file) file = std::make_unique<FileSide>();
        return *file;
    }
};

// The fields that tell two tensors apart, with string ids from the builder's pool.
struct DraftKey {
    std::uint32_t folder;
    StrId opType, opName;
    std::uint32_t taskId, streamId;
    std::int64_t timestampUs;
    Io io;
    std::uint16_t slot;
};

std::uint64_t hashKey(const DraftKey& k) {
    std::uint64_t h = 0x9e3779b97f4a7c15ull;
    auto mix = [&h](std::uint64_t v) {
        h ^= v;
        h *= 0xff51afd7ed558ccdull;
        h ^= h >> 32;
    };
    mix(std::uint64_t(k.folder) << 32 | k.opName);
    mix(std::uint64_t(k.opType) << 32 | k.taskId);
    mix(std::uint64_t(k.streamId) << 32 | (std::uint64_t(k.io) << 16) | k.slot);
    mix(std::uint64_t(k.timestampUs));
    return h;
}

bool sameKey(const Draft& d, const DraftKey& k) {
    return d.timestampUs == k.timestampUs && d.opName == k.opName && d.slot == k.slot && d.io == k.io &&
           d.opType == k.opType && d.taskId == k.taskId && d.streamId == k.streamId && d.folder == k.folder;
}

}  // namespace

// A raw CANN file: one op execution whose tensors are only known once its header is read.
struct RawFile {
    std::uint32_t folder = 0;
    DumpFileName name;
    std::string rel;
    std::uint64_t size = 0;
    std::int64_t stamp = 0;   // ScannedFile::stamp
    StatsJobResult result;
};

struct ShardBuilder::Impl {
    std::string rootAbs, shardRel;
    std::unordered_map<std::string, std::vector<const TensorRecord*>> previous;
    const DumpIndex* previousIndex = nullptr;
    std::vector<Draft> drafts;
    std::vector<DumpFileName> jobNames;
    StringPool keys;                       // op types, names and formats of the drafts
    std::vector<std::uint32_t> table;      // open addressing over drafts: id + 1, 0 = empty
    std::vector<std::int64_t> csvDims;     // shapes from statistic.csv rows (Draft::csvDims)
    std::vector<TensorStats> csvWide;      // CSV figures a PackedStats cannot hold exactly
    std::vector<StrId> toOut;              // keys id -> out.strings id, filled by finish()
    std::vector<std::uint32_t> textRank;   // keys id -> rank of its text among all keys
    std::vector<std::uint32_t> seen;       // emitFolder scratch
    // The last op type and name interned: a CSV row repeats them for every tensor of an op.
    std::string lastType, lastName;
    StrId lastTypeId = 0, lastNameId = 0;
    std::vector<FolderInfo> folders;
    std::map<std::string, std::uint32_t> folderIds;
    ShardSources sources;
    DumpIndex out;
    std::vector<RawFile> rawFiles;
    std::vector<const ScannedFile*> strayNpy;      // .npy names outside every dump grammar
    std::set<std::uint32_t> grammarFolders;        // folders holding dump-grammar files
    std::map<std::uint32_t, DumpFormat> folderFormat;
    std::set<DumpFormat> formats;
    MsprobeShard msprobe;

    std::uint32_t folderOf(const std::string& fileRel) {
        const auto slash = fileRel.rfind('/');
        const std::string dir = slash == std::string::npos ? std::string() : fileRel.substr(0, slash);
        auto [it, inserted] = folderIds.emplace(dir, std::uint32_t(folders.size()));
        if (inserted) {
            FolderInfo f;
            f.rel = dir;
            auto dirs = splitPath(rootAbs);
            auto rel = splitPath(dir);
            dirs.insert(dirs.end(), rel.begin(), rel.end());
            f.loc = locateDumpFolder(dirs);
            folders.push_back(std::move(f));
        }
        return it->second;
    }

    StrId keyOf(std::string_view v, std::string& last, StrId& lastId) {
        if (v != last) {
            last.assign(v);
            lastId = keys.intern(v);
        }
        return lastId;
    }

    void reserveDrafts(std::size_t n) {
        if (n > drafts.capacity()) {
            drafts.reserve(n);
            adviseHugePages(drafts.data(), n * sizeof(Draft));
        }
        std::size_t cap = 16;
        while (cap < 2 * n) cap <<= 1;
        if (cap > table.size()) rehash(cap);
    }

    void rehash(std::size_t cap) {
        table.assign(cap, 0);
        for (std::uint32_t id = 0; id < drafts.size(); ++id) {
            const Draft& d = drafts[id];
            const DraftKey k{d.folder, d.opType, d.opName, d.taskId, d.streamId, d.timestampUs, d.io, d.slot};
            for (std::size_t i = hashKey(k) & (cap - 1);; i = (i + 1) & (cap - 1))
                if (!table[i]) { table[i] = id + 1; break; }
        }
    }

    // The draft of a tensor, made on first sight. No allocation per call beyond the drafts' growth.
    std::uint32_t draftFor(std::uint32_t folder, std::string_view opType, std::string_view opName, std::uint32_t taskId,
                           std::uint32_t streamId, std::int64_t timestampUs, Io io, std::uint16_t slot) {
        const DraftKey k{folder, keyOf(opType, lastType, lastTypeId), keyOf(opName, lastName, lastNameId),
                         taskId, streamId, timestampUs, io, slot};
        if (2 * (drafts.size() + 1) > table.size()) rehash(std::max<std::size_t>(16, table.size() * 2));
        const std::size_t mask = table.size() - 1;
        std::size_t i = hashKey(k) & mask;
        for (; table[i]; i = (i + 1) & mask)
            if (sameKey(drafts[table[i] - 1], k)) return table[i] - 1;
        const auto id = std::uint32_t(drafts.size());
        table[i] = id + 1;
        Draft& d = drafts.emplace_back();
        d.folder = folder;
        d.opType = k.opType;
        d.opName = k.opName;
        d.taskId = taskId;
        d.streamId = streamId;
        d.timestampUs = timestampUs;
        d.io = io;
        d.slot = slot;
        return id;
    }

    void warn(const std::string& path, const std::string& reason) { out.warnings.push_back({path, reason}); }

    void addTensorFile(const ScannedFile& f, const DumpFileName& name, std::vector<StatsJob>& jobs,
                       std::size_t& reused);
    void addRawFile(const ScannedFile& f, const DumpFileName& name, std::vector<StatsJob>& jobs, std::size_t& reused);
    void addPlainNpy(const ScannedFile& f, std::vector<StatsJob>& jobs, std::size_t& reused);
    bool reuse(const ScannedFile& f, Draft& d);
    void materializeRaw(RawFile& raw);
    void orderPlainNpy();
    void noteFormat(std::uint32_t folder, DumpFormat f) {
        formats.insert(f);
        folderFormat.emplace(folder, f);
    }
    void addStatisticCsv(const ScannedFile& f);
    DumpIndex finish();
    void emitFolder(std::uint32_t folderId, std::vector<std::uint32_t>& draftIds);
    std::uint32_t addTensor(const Draft& d, std::uint32_t opIndex);
};

ShardBuilder::ShardBuilder(std::string rootAbs, std::string shardRel, const DumpIndex* previous)
    : m(std::make_unique<Impl>()) {
    m->rootAbs = std::move(rootAbs);
    m->shardRel = std::move(shardRel);
    m->previousIndex = previous;
    if (previous)
        for (const auto& t : previous->tensors)
            if (previous->side(t).file) m->previous[previous->strings.str(previous->side(t).file)].push_back(&t);
}

ShardBuilder::~ShardBuilder() = default;

const DumpFileName& ShardBuilder::jobName(const StatsJob& job) const {
    if (job.kind == StatsJobKind::CannRaw) return m->rawFiles[job.draft].name;
    static const DumpFileName kNoName;
    if (isLinkedJob(job.kind)) return kNoName;
    return m->jobNames[job.draft];
}

bool ShardBuilder::scan(const std::vector<const ScannedFile*>& files, std::stop_token stop) {
    if (stop.stop_requested()) return false;
    m->sources.collect(m->rootAbs, files, m->out.warnings);
    m->out.meta = m->sources.meta;
    m->jobNames.clear();
    m->msprobe.collect(m->rootAbs, files, m->out, m_jobs, m->out.warnings);
    if (m->msprobe.found()) m->formats.insert(DumpFormat::Msprobe);
    // About one draft per tensor file: reserving avoids moving every draft as the vector grows.
    m->reserveDrafts(m->drafts.size() + files.size());
    for (const ScannedFile* f : files) {
        if (stop.stop_requested()) return false;   // one atomic load a file; a statistic.csv takes far longer
        const auto slash = f->rel.rfind('/');
        const std::string base = slash == std::string::npos ? f->rel : f->rel.substr(slash + 1);
        if (m->msprobe.owns(f->rel)) continue;
        if (base == "statistic.csv") {
            m->addStatisticCsv(*f);
            continue;
        }
        if (m->sources.isAuxiliary(f->rel)) continue;
        DumpFileName name;
        parseDumpFileName(base, name);
        if (name.kind == DumpFileKind::Mapped) {
            const std::string original = m->sources.mappedName(f->rel, name.mappedKey);
            if (original.empty()) {
                m->warn(f->rel, "numeric file name but no mapping.csv entry for it in its folder");
                continue;
            }
            DumpFileName mapped;
            if (!parseDumpFileName(original, mapped)) {
                m->warn(f->rel, "mapping.csv names it '" + original + "', which does not parse: " + mapped.reason);
                continue;
            }
            name = std::move(mapped);
        }
        switch (name.kind) {
        case DumpFileKind::MindSporeNpy:
        case DumpFileKind::ConvertedNpy:
        case DumpFileKind::MindSporeBin:
            m->addTensorFile(*f, name, m_jobs, m_reused);
            break;
        case DumpFileKind::CannRaw:
            m->addRawFile(*f, name, m_jobs, m_reused);
            break;
        case DumpFileKind::OpdebugJson:
        case DumpFileKind::OpdebugRaw:
            m->sources.addOpdebug(m->rootAbs, *f, name, m->folderOf(f->rel), m->out);
            break;
        case DumpFileKind::Unknown:
            if (f->rel.ends_with(".npy")) m->strayNpy.push_back(f);
            else if (f->rel.ends_with(".bin"))
                m->warn(f->rel, "tensor file name does not follow the dump grammar: " + name.reason);
            break;
        default:
            m->warn(f->rel, std::string("dump file kind '") + std::string(dumpFileKindName(name.kind)) +
                                "' is not indexed by this version");
            break;
        }
    }
    // A folder of .npy files that follow no dump grammar is a user's own np.save dump (one op per
    // file); next to dump-grammar files such a name is a malformed dump file instead.
    for (const ScannedFile* f : m->strayNpy) {
        if (m->grammarFolders.count(m->folderOf(f->rel))) {
            DumpFileName name;
            parseDumpFileName(f->rel.substr(f->rel.rfind('/') + 1), name);
            m->warn(f->rel, "tensor file name does not follow the dump grammar: " + name.reason);
        } else {
            m->addPlainNpy(*f, m_jobs, m_reused);
        }
    }
    return true;
}

void ShardBuilder::Impl::addTensorFile(const ScannedFile& f, const DumpFileName& name, std::vector<StatsJob>& jobs,
                                       std::size_t& reused) {
    const std::uint32_t folder = folderOf(f.rel);
    grammarFolders.insert(folder);
    noteFormat(folder, name.kind == DumpFileKind::MindSporeBin ? DumpFormat::MindSporeBin : DumpFormat::MindSporeNpy);
    const auto id = draftFor(folder, name.opType, name.opName, name.taskId, name.streamId, name.timestampUs,
                             name.hasIo ? name.io : Io::Output, name.slot);
    Draft& d = drafts[id];
    if (d.hasFile) {
        warn(f.rel, "same tensor as " + d.file->fileRel + " (identical name fields); kept the first");
        return;
    }
    d.hasFile = true;
    FileSide& fs = d.fileSide();
    fs.fileRel = f.rel;
    fs.fileSize = f.size;
    fs.stamp = f.stamp;
    d.format = keys.intern(name.format);
    d.origDtype = name.dtype;
    if (jobNames.size() <= id) jobNames.resize(drafts.size());
    jobNames[id] = name;
    if (reuse(f, d)) {
        ++reused;
        return;
    }
    jobs.push_back({id, rootAbs + "/" + f.rel, f.size, name.dtype,
                    name.kind == DumpFileKind::MindSporeBin ? StatsJobKind::RawBin : StatsJobKind::Npy});
}

// Statistics of an unchanged file from the previous index of this shard.
bool ShardBuilder::Impl::reuse(const ScannedFile& f, Draft& d) {
    const auto it = previous.find(f.rel);
    if (it == previous.end() || it->second.size() != 1) return false;
    const TensorRecord& t = *it->second.front();
    if (previousIndex->side(t).fileSize != f.size || previousIndex->side(t).fileStamp != f.stamp || !(t.flags & HasData)) return false;
    TensorData& r = d.fileSide().data;
    r.ok = true;
    r.dtype = t.dtype;
    r.bigEndian = t.flags & BigEndian;
    r.fortranOrder = t.flags & FortranOrder;
    r.shape = previousIndex->shape(t);
    r.dataOffset = previousIndex->side(t).dataOffset;
    r.dataBytes = previousIndex->side(t).dataBytes;
    r.stats = previousIndex->stats(t);
    Log2Histogram h;
    if ((t.flags & HasHistogram) && previousIndex->histogram(t, h)) h.encode(r.hist);
    return true;
}

void ShardBuilder::Impl::addPlainNpy(const ScannedFile& f, std::vector<StatsJob>& jobs, std::size_t& reused) {
    const std::uint32_t folder = folderOf(f.rel);
    noteFormat(folder, DumpFormat::PlainNpy);
    std::string stem = f.rel.substr(f.rel.rfind('/') + 1);
    stem.resize(stem.size() - 4);
    // The modification time orders the ops (np.save calls in program order); the name breaks ties.
    const auto id = draftFor(folder, "npy", stem, 0, 0, f.mtimeNs / 1000, Io::Output, 0);
    Draft& d = drafts[id];
    d.hasFile = true;
    FileSide& fs = d.fileSide();
    fs.fileRel = f.rel;
    fs.fileSize = f.size;
    fs.stamp = f.stamp;
    if (jobNames.size() <= id) jobNames.resize(drafts.size());
    if (reuse(f, d)) {
        ++reused;
        return;
    }
    jobs.push_back({id, rootAbs + "/" + f.rel, f.size, DType::Unknown, StatsJobKind::Npy});
}

void ShardBuilder::Impl::addRawFile(const ScannedFile& f, const DumpFileName& name, std::vector<StatsJob>& jobs,
                                    std::size_t& reused) {
    RawFile raw;
    raw.folder = folderOf(f.rel);
    grammarFolders.insert(raw.folder);
    noteFormat(raw.folder, DumpFormat::CannRaw);
    raw.name = name;
    raw.rel = f.rel;
    raw.size = f.size;
    raw.stamp = f.stamp;
    const auto id = std::uint32_t(rawFiles.size());
    // Unchanged raw file: every tensor it held comes back from the previous index.
    if (auto it = previous.find(f.rel); it != previous.end()) {
        bool same = true;
        for (const TensorRecord* t : it->second)
            same = same && previousIndex->side(*t).fileSize == f.size && previousIndex->side(*t).fileStamp == f.stamp && (t->flags & HasData);
        if (same) {
            raw.result.ok = true;
            for (const TensorRecord* t : it->second) {
                StatsJobPart p;
                p.io = t->io;
                p.slot = t->slot;
                p.dtype = t->dtype;
                p.format = previousIndex->strings.str(t->format);
                p.shape = previousIndex->shape(*t);
                if (t->flags & DeviceFormat) p.originalShape = previousIndex->originalShape(*t);
                p.dataOffset = previousIndex->side(*t).dataOffset;
                p.dataBytes = previousIndex->side(*t).dataBytes;
                p.flags = t->flags & (DeviceFormat | PaddingExcluded | PaddingIncluded);
                p.stats = previousIndex->stats(*t);
                p.hasStats = p.stats.known != 0;
                previousIndex->histogram(*t, p.hist);
                raw.result.parts.push_back(std::move(p));
            }
            rawFiles.push_back(std::move(raw));
            ++reused;
            return;
        }
    }
    rawFiles.push_back(std::move(raw));
    jobs.push_back({id, rootAbs + "/" + f.rel, f.size, DType::Unknown, StatsJobKind::CannRaw});
}

// Turns the parts of a raw file into tensor drafts (after the parallel jobs: drafts may grow here).
// Plain .npy ops of all folders form one sequence: modification time, then name.
void ShardBuilder::Impl::orderPlainNpy() {
    const StrId npyType = out.strings.intern("npy");
    std::vector<std::uint32_t> ids;
    for (std::uint32_t i = 0; i < out.ops.size(); ++i)
        if (out.ops[i].type == npyType && out.ops[i].taskId == 0 && out.ops[i].streamId == 0) ids.push_back(i);
    std::sort(ids.begin(), ids.end(), [&](std::uint32_t a, std::uint32_t b) {
        const OpRecord &x = out.ops[a], &y = out.ops[b];
        return std::tuple(x.startUs, out.strings.view(x.name)) < std::tuple(y.startUs, out.strings.view(y.name));
    });
    for (std::uint32_t k = 0; k < ids.size(); ++k) out.ops[ids[k]].execPos = k;
}

void ShardBuilder::Impl::materializeRaw(RawFile& raw) {
    if (!raw.result.ok) {
        warn(raw.rel, "raw CANN dump unreadable: " + raw.result.error);
        return;
    }
    for (const auto& note : raw.result.notes) warn(raw.rel, note);
    const DumpFileName& n = raw.name;
    for (StatsJobPart& p : raw.result.parts) {
        const auto id = draftFor(raw.folder, n.opType, n.opName, n.taskId, n.streamId, n.timestampUs, p.io, p.slot);
        Draft& d = drafts[id];
        if (d.hasFile) continue;
        if (!p.note.empty())
            warn(raw.rel, std::string(p.io == Io::Input ? "input " : "output ") + std::to_string(p.slot) + ": " + p.note);
        d.hasFile = true;
        FileSide& fs = d.fileSide();
        fs.fileRel = raw.rel;
        fs.fileSize = raw.size;
        fs.stamp = raw.stamp;
        d.format = keys.intern(p.format);
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

void ShardBuilder::Impl::addStatisticCsv(const ScannedFile& f) {
    const std::uint32_t folder = folderOf(f.rel);
    std::vector<std::string> columns;
    std::vector<StatisticCsvWarning> warnings;
    std::string error, text;
    if (!readSmallTextFile(rootAbs + "/" + f.rel, text, error, std::size_t(16) << 30)) {
        warn(f.rel, error);
        return;
    }
    // Room for every line of the file at once (one move of the drafts, not several).
    const std::size_t lines = std::size_t(std::count(text.begin(), text.end(), '\n')) + 1;
    if (drafts.size() + lines > drafts.capacity())
        reserveDrafts(std::max(drafts.size() + lines, drafts.capacity() + drafts.capacity() / 2));
    const bool ok = parseStatisticCsv(
        text,
        [&](StatisticRow& row) {
            const auto id = draftFor(folder, row.opType, row.opName, row.taskId, row.streamId, row.timestampUs,
                                     row.io, row.slot);
            Draft& d = drafts[id];
            if (d.hasCsv) {
                warn(f.rel, "line " + std::to_string(row.line) + ": duplicate row for the same tensor, kept the first");
                return;
            }
            d.hasCsv = true;
            if (!d.csvStats.pack(row.stats)) {
                d.csvStats = PackedStats();
                d.csvWide = true;
                d.csvStats.count = std::uint32_t(csvWide.size());
                csvWide.push_back(row.stats);
            }
            if (row.hasShape) {
                d.csvHasShape = true;
                d.csvDims = std::uint32_t(csvDims.size());
                d.csvNdim = std::uint8_t(std::min<std::size_t>(row.shape.size(), 255));
                csvDims.insert(csvDims.end(), row.shape.begin(), row.shape.begin() + d.csvNdim);
            }
            d.csvDtype = row.dtype;
            d.csvBytes = row.dataBytes;
            if (d.origDtype == DType::Unknown) d.origDtype = row.dtype;
            if (d.format == 0 && !row.format.empty()) d.format = keys.intern(row.format);
        },
        columns, warnings, error);
    if (!ok) warn(f.rel, error);
    for (const auto& w : warnings)
        warn(f.rel, (w.line ? "line " + std::to_string(w.line) + ": " : std::string()) + w.reason);
}

void ShardBuilder::applyJob(const StatsJob& job, StatsJobResult&& result) {
    if (job.kind == StatsJobKind::CannRaw) {
        m->rawFiles[job.draft].result = std::move(result);
        return;
    }
    if (isLinkedJob(job.kind)) {
        m->msprobe.apply(job, std::move(result));
        return;
    }
    FileSide& fs = *m->drafts[job.draft].file;  // made by scan() for every job
    if (!result.ok) {  // worker thread: only this job's draft is written, warned in finish()
        fs.readError = true;
        fs.readErrorText = std::move(result.error);
        return;
    }
    TensorData& t = fs.data;
    t.ok = true;
    t.dtype = result.dtype;
    t.bigEndian = result.bigEndian;
    t.fortranOrder = result.fortranOrder;
    t.shape = std::move(result.shape);
    t.dataOffset = result.dataOffset;
    t.dataBytes = result.dataBytes;
    t.stats = result.stats;
    if (t.stats.has(stat::Histogram)) result.hist.encode(t.hist);
}

DumpIndex ShardBuilder::finish() {
    // Read errors in job order: the same warnings in the same order whatever the thread count.
    for (const StatsJob& job : m_jobs)
        if (job.kind != StatsJobKind::CannRaw && !isLinkedJob(job.kind) && m->drafts[job.draft].file->readError)
            m->warn(m->drafts[job.draft].file->fileRel, m->drafts[job.draft].file->readErrorText);
    return m->finish();
}

std::set<DumpFormat> ShardBuilder::formats() const { return m->formats; }

DumpIndex ShardBuilder::Impl::finish() {
    for (RawFile& raw : rawFiles) materializeRaw(raw);
    msprobe.finish(out);
    out.tensors.reserve(out.tensors.size() + drafts.size());
    adviseHugePages(out.tensors.data(), out.tensors.capacity() * sizeof(TensorRecord));
    table = {};  // the lookup is done: free it before the records grow
    // Each key string once into the index; ranks by text let the folder sorts compare ids.
    toOut.resize(keys.size());
    for (StrId i = 0; i < keys.size(); ++i) toOut[i] = out.strings.intern(keys.view(i));
    std::vector<StrId> byText(keys.size());
    for (StrId i = 0; i < keys.size(); ++i) byText[i] = i;
    std::sort(byText.begin(), byText.end(), [&](StrId a, StrId b) { return keys.view(a) < keys.view(b); });
    textRank.resize(keys.size());
    for (std::uint32_t r = 0; r < byText.size(); ++r) textRank[byText[r]] = r;
    // Drafts by folder, by counting (no vector per folder growing row by row).
    std::vector<std::uint32_t> start(folders.size() + 1, 0), ids(drafts.size());
    for (const Draft& d : drafts) ++start[d.folder + 1];
    for (std::size_t f = 0; f < folders.size(); ++f) start[f + 1] += start[f];
    {
        std::vector<std::uint32_t> fill(start.begin(), start.end() - 1);
        for (std::uint32_t i = 0; i < drafts.size(); ++i) ids[fill[drafts[i].folder]++] = i;
    }
    out.ops.reserve(out.ops.size() + drafts.size() / 2);
    adviseHugePages(out.ops.data(), out.ops.capacity() * sizeof(OpRecord));
    for (std::uint32_t f = 0; f < folders.size(); ++f)
        if (start[f + 1] > start[f]) {
            std::vector<std::uint32_t> folderIds(ids.begin() + start[f], ids.begin() + start[f + 1]);
            emitFolder(f, folderIds);
        }
    orderPlainNpy();
    sources.attachOverflows(folders, out);
    sources.fillRankInfo(shardRel, folders, out);
    msprobe.fillRankInfo(shardRel, out);
    // The writer seen in each rank's folders wins over the file-extension guess.
    for (RankInfo& r : out.ranks)
        for (const auto& [folder, f] : folderFormat)
            if (folders[folder].loc.rank.value_or(0) == r.rank && (f == DumpFormat::CannRaw || f == DumpFormat::PlainNpy))
                r.format = f;
    for (RankInfo& r : out.ranks) {  // orders not set by the execution order rules
        if (r.format == DumpFormat::PlainNpy) r.orderSource = "modification_time";
        else if (r.format == DumpFormat::Msprobe && r.orderSource.empty()) r.orderSource = "dump_json";
    }
    out.finalize();
    return std::move(out);
}

std::uint32_t ShardBuilder::Impl::addTensor(const Draft& d, std::uint32_t opIndex) {
    TensorRecord t;
    t.op = opIndex;
    t.io = d.io;
    t.slot = d.slot;
    t.format = toOut[d.format];
    t.timestampUs = d.timestampUs;
    t.origDtype = d.origDtype;
    const std::vector<std::int64_t>* shape = nullptr;
    const FileSide* fs = d.file.get();
    if (d.hasFile && !fs->readError && fs->data.ok) {
        const auto& r = fs->data;
        t.flags |= HasData | r.flags;
        if (r.bigEndian) t.flags |= BigEndian;
        if (r.fortranOrder) t.flags |= FortranOrder;
        out.editSide(t).file = out.strings.intern(fs->fileRel);
        t.dtype = r.dtype;
        out.editSide(t).dataOffset = r.dataOffset;
        out.editSide(t).dataBytes = r.dataBytes;
        out.setStats(t, r.stats);
        if (!r.hist.empty()) {
            out.editSide(t).histOffset = std::uint32_t(out.histBytes.size());
            out.histBytes.insert(out.histBytes.end(), r.hist.begin(), r.hist.end());
            t.flags |= HasHistogram;
        }
        shape = &r.shape;
    } else {
        if (d.hasFile) {
            out.editSide(t).file = out.strings.intern(fs->fileRel);
            t.flags |= ReadError;
        }
        t.dtype = d.csvDtype;
        if (!d.hasCsv) out.setStats(t, TensorStats{});
        else if (d.csvWide) out.setStats(t, csvWide[d.csvStats.count]);
        else t.packedStats = d.csvStats;  // packed once when the row was read, exactly as setStats would
    }
    if (d.hasCsv) t.flags |= HasCsvStats;
    if (t.origDtype == DType::Unknown) t.origDtype = t.dtype;
    if (fs) {
        out.editSide(t).fileSize = fs->fileSize;
        out.editSide(t).fileStamp = fs->stamp;
    }
    if (!shape && d.csvHasShape && !(t.flags & HasData)) {
        t.shapeOffset = std::uint32_t(out.dims.size());
        t.ndim = d.csvNdim;
        out.dims.insert(out.dims.end(), csvDims.begin() + d.csvDims, csvDims.begin() + d.csvDims + d.csvNdim);
    } else if (shape) {
        t.shapeOffset = std::uint32_t(out.dims.size());
        t.ndim = std::uint8_t(std::min<std::size_t>(shape->size(), 255));
        out.dims.insert(out.dims.end(), shape->begin(), shape->begin() + t.ndim);
        if (t.flags & DeviceFormat) {  // the original shape follows the stored one
            const auto& o = fs->data.origShape;
            out.editSide(t).origNdim = std::uint8_t(std::min<std::size_t>(o.size(), 255));
            out.dims.insert(out.dims.end(), o.begin(), o.begin() + out.side(t).origNdim);
        }
    }
    out.tensors.push_back(t);
    return std::uint32_t(out.tensors.size() - 1);
}

// Groups the folder's tensors into op executions: same (type, name, task, stream), ordered by
// time, a new execution whenever an (io, slot) repeats. MindSpore-written files carry a fresh
// timestamp per tensor while CANN shares one per execution; this rule handles both.
void ShardBuilder::Impl::emitFolder(std::uint32_t folderId, std::vector<std::uint32_t>& ids) {
    const FolderInfo& folder = folders[folderId];
    std::sort(ids.begin(), ids.end(), [&](std::uint32_t a, std::uint32_t b) {
        const Draft &x = drafts[a], &y = drafts[b];
        return std::tie(textRank[x.opType], textRank[x.opName], x.taskId, x.streamId, x.timestampUs, x.io, x.slot) <
               std::tie(textRank[y.opType], textRank[y.opName], y.taskId, y.streamId, y.timestampUs, y.io, y.slot);
    });
    const StrId net = out.strings.intern(folder.loc.net);
    const auto opsBegin = out.ops.size();
    std::size_t i = 0;
    while (i < ids.size()) {
        const Draft& head = drafts[ids[i]];
        OpRecord op;
        op.type = toOut[head.opType];
        op.name = toOut[head.opName];
        op.rank = folder.loc.rank.value_or(0);
        op.graph = folder.loc.graph;
        op.iteration = folder.loc.iteration.value_or(0);
        op.net = net;
        op.taskId = head.taskId;
        op.streamId = head.streamId;
        op.startUs = head.timestampUs;
        op.endUs = head.timestampUs;
        op.firstTensor = std::uint32_t(out.tensors.size());
        const auto opIndex = std::uint32_t(out.ops.size());
        seen.clear();  // (io, slot) pairs of this execution: a handful, a linear scan is enough
        for (; i < ids.size(); ++i) {
            const Draft& d = drafts[ids[i]];
            const auto ioSlot = std::uint32_t(d.io) << 16 | d.slot;
            if (d.opType != head.opType || d.opName != head.opName || d.taskId != head.taskId ||
                d.streamId != head.streamId || std::find(seen.begin(), seen.end(), ioSlot) != seen.end())
                break;
            seen.push_back(ioSlot);
            addTensor(d, opIndex);
            op.startUs = std::min(op.startUs, d.timestampUs);
            op.endUs = std::max(op.endUs, d.timestampUs);
        }
        op.tensorCount = std::uint32_t(out.tensors.size()) - op.firstTensor;
        out.ops.push_back(op);
    }
    sources.orderOps(folder, out, opsBegin, out.ops.size());
}

}  // namespace dl
