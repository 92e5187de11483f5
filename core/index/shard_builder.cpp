#include "core/index/shard_builder.h"

#include <algorithm>
#include <map>
#include <string_view>

#include "core/formats/reader_registry.h"
#include "core/index/format_reader.h"
#include "core/index/shard_context.h"

namespace dl {

struct ShardBuilder::Impl : ShardContext {
    std::vector<const FormatReader*> table;
    std::vector<std::unique_ptr<ShardReader>> readers;  // one per row of `table`, in its order

    const FormatReader* readerOf(DumpFormat f) const {
        const auto it = std::find_if(table.begin(), table.end(), [&](const FormatReader* r) { return r->format == f; });
        return it == table.end() ? nullptr : *it;
    }
};

ShardBuilder::ShardBuilder(std::string rootAbs, std::string shardRel, const DumpIndex* previous)
    : ShardBuilder(std::move(rootAbs), std::move(shardRel), previous, formatReaders()) {}

ShardBuilder::ShardBuilder(std::string rootAbs, std::string shardRel, const DumpIndex* previous,
                           std::span<const FormatReader* const> readers)
    : m(std::make_unique<Impl>()) {
    m->rootAbs = std::move(rootAbs);
    m->shardRel = std::move(shardRel);
    m->previousIndex = previous;
    if (previous)
        for (const auto& t : previous->tensors)
            if (previous->side(t).file) m->previous[previous->strings.str(previous->side(t).file)].push_back(&t);
    m->table.assign(readers.begin(), readers.end());
    for (const FormatReader* r : readers) m->readers.push_back(r->open(*m));
}

ShardBuilder::~ShardBuilder() = default;

std::vector<StatsJob>& ShardBuilder::jobs() { return m->jobs; }

void ShardBuilder::setResume(ShardResume* resume) { m->resume = resume; }

std::size_t ShardBuilder::reusedFiles() const { return m->reused; }

bool ShardBuilder::scan(const std::vector<const ScannedFile*>& files, std::stop_token stop) {
    if (stop.stop_requested()) return false;
    m->sources.collect(m->rootAbs, files, m->out.warnings);
    m->out.meta = m->sources.meta;
    std::vector<char> taken(files.size(), 0);  // by a reader of whole folders
    for (auto& r : m->readers) r->collect(files, taken);
    // {graph}/constants/Parameter.data-{n}....npy (MindSpore 1.6+ CPU/GPU; real 2.0.0 writes them,
    // 2.7.0 and 2.10.0 do not): values the graph was compiled with, written once per graph and part
    // of no iteration, so they are no op's execution. Said once per folder rather than skipped silently.
    std::map<std::string, std::size_t> constants;  // folder -> .npy files
    for (const ScannedFile* f : files)
        if (const auto at = f->rel.rfind("/constants/");
            at != std::string::npos && f->rel.ends_with(".npy") && f->rel.find('/', at + 11) == std::string::npos)
            ++constants[f->rel.substr(0, at + 10)];
    for (const auto& [folder, n] : constants)
        m->warn(folder,
                std::to_string(n) +
                    " graph constant file(s) (Parameter.data-N): values the graph was compiled "
                    "with, written once and part of no iteration; not indexed as op executions (read one with "
                    "dumplens-cli inspect FILE)",
                WarningSeverity::Note);
    // About one draft per tensor file: reserving avoids moving every draft as the vector grows.
    m->reserveDrafts(m->drafts.size() + files.size());
    for (std::size_t i = 0; i < files.size(); ++i) {
        const ScannedFile* f = files[i];
        if (stop.stop_requested()) return false;  // one atomic load a file; a statistic.csv takes far longer
        if (taken[i]) continue;
        const auto slash = f->rel.rfind('/');
        const std::string base = slash == std::string::npos ? f->rel : f->rel.substr(slash + 1);
        if (std::any_of(m->readers.begin(), m->readers.end(), [&](auto& r) { return r->addNamed(*f, base); })) continue;
        if (m->sources.isAuxiliary(f->rel)) continue;
        DumpFileName name;
        parseDumpFileName(base, name);
        if (name.kind == DumpFileKind::Mapped) {
            const std::string original = m->sources.mappedName(f->rel, name.mappedKey);
            if (original.empty()) {
                m->warn(f->rel, "numeric file name but no mapping.csv entry for it in its folder",
                        WarningSeverity::Unreadable);
                continue;
            }
            DumpFileName mapped;
            if (!parseDumpFileName(original, mapped)) {
                m->warn(f->rel, "mapping.csv names it '" + original + "', which does not parse: " + mapped.reason,
                        WarningSeverity::Unreadable);
                continue;
            }
            name = std::move(mapped);
        }
        if (name.kind == DumpFileKind::OpdebugJson || name.kind == DumpFileKind::OpdebugRaw) {
            m->sources.addOpdebug(m->rootAbs, *f, name, m->folderOf(f->rel), m->out);
            continue;
        }
        if (std::any_of(m->readers.begin(), m->readers.end(), [&](auto& r) { return r->addFile(*f, name); })) continue;
        if (name.kind == DumpFileKind::Unknown) {
            if (f->rel.ends_with(".bin"))
                m->warn(f->rel, "tensor file name does not follow the dump grammar: " + name.reason,
                        WarningSeverity::Unreadable);
        } else {
            m->warn(f->rel,
                    std::string("dump file kind '") + std::string(dumpFileKindName(name.kind)) +
                        "' is not indexed by this version",
                    WarningSeverity::Unreadable);
        }
    }
    for (auto& r : m->readers) r->endScan();
    return true;
}

void ShardBuilder::applyJob(const StatsJob& job, StatsJobResult&& result) { job.reader->apply(job, std::move(result)); }

DumpIndex ShardBuilder::finish() {
    // What each job left to say, in job order: the same warnings in the same order whatever the
    // thread count.
    for (const StatsJob& job : m->jobs) job.reader->finishJob(job);
    DumpIndex& out = m->out;
    for (auto& r : m->readers) r->finish(out);
    m->groupDrafts();
    for (auto& r : m->readers) r->orderOps(out);
    m->sources.attachOverflows(m->folders, out);
    m->sources.fillRankInfo(m->shardRel, m->folders, m->rankFormats, out);
    for (auto& r : m->readers) r->addRanks(out);
    // The writer seen in each rank's folders (CANN raw, plain npy) wins over the MindSpore formats.
    for (RankInfo& r : out.ranks)
        for (const auto& [folder, f] : m->folderFormat)
            if (const FormatReader* reader = m->readerOf(f);
                m->folders[folder].loc.rank.value_or(0) == r.rank && reader && reader->namesRankFormat)
                r.format = f;
    for (auto& r : m->readers) r->finishRanks(out);
    out.finalize();
    return std::move(out);
}

std::set<DumpFormat> ShardBuilder::formats() const { return m->formats; }

DraftBuffers ShardBuilder::releaseBuffers() { return m->releaseBuffers(); }

void ShardBuilder::adoptBuffers(DraftBuffers&& buffers) { m->adoptBuffers(std::move(buffers)); }

}  // namespace dl
