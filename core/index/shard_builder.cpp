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
    // The reader whose row names files with this base name (FormatReader::fileName), if any.
    ShardReader* readerNamed(std::string_view base) const {
        for (std::size_t i = 0; i < table.size(); ++i)
            if (!table[i]->fileName.empty() && table[i]->fileName == base) return readers[i].get();
        return nullptr;
    }
};

ShardBuilder::ShardBuilder(std::string rootAbs, std::string shardRel, const DumpIndex* previous)
    : ShardBuilder(std::move(rootAbs), std::move(shardRel), previous, formatReaders()) {}

ShardBuilder::ShardBuilder(std::string rootAbs, std::string shardRel, const DumpIndex* previous,
                           std::span<const FormatReader* const> readers)
    : m(std::make_unique<Impl>()) {
    m->m_rootAbs = std::move(rootAbs);
    m->m_shardRel = std::move(shardRel);
    m->table.assign(readers.begin(), readers.end());
    for (const FormatReader* r : readers) m->readers.push_back(r->open(*m));
    m->m_previousIndex = previous;
    if (previous)
        for (const auto& t : previous->tensors)
            if (previous->side(t).file) m->m_previous[previous->strings.str(previous->side(t).file)].push_back(&t);
}

ShardBuilder::ShardBuilder(std::string rootAbs, std::string shardRel, const DumpIndex* previous,
                           std::span<const TensorRecord* const> previousTensors)
    : ShardBuilder(std::move(rootAbs), std::move(shardRel), nullptr, formatReaders()) {
    rememberPrevious(previous, previousTensors);
}

void ShardBuilder::rememberPrevious(const DumpIndex* previous, std::span<const TensorRecord* const> tensors) {
    m->m_previousIndex = previous;
    if (!previous) return;
    for (const TensorRecord* t : tensors)
        if (const StrId file = previous->side(*t).file) m->m_previous[previous->strings.str(file)].push_back(t);
}

bool ShardBuilder::namesRankFormat(DumpFormat f) {
    for (const FormatReader* r : formatReaders())
        if (r->format == f) return r->namesRankFormat;
    return false;
}

ShardBuilder::~ShardBuilder() = default;

std::vector<StatsJob>& ShardBuilder::jobs() { return m->m_jobs; }

void ShardBuilder::setResume(ShardResume* resume) { m->m_resume = resume; }

void ShardBuilder::setContextCache(ShardContextCache* cache) { m->m_sources.setCache(cache); }

std::size_t ShardBuilder::reusedFiles() const { return m->m_reused; }

// Steps 1-3 of format_reader.h, with the shard's own files (ShardSources) read first.
bool ShardBuilder::scan(const std::vector<const ScannedFile*>& files, std::stop_token stop) {
    if (stop.stop_requested()) return false;
    m->m_sources.collect(m->m_rootAbs, files, m->m_out.warnings);
    m->m_out.meta = m->m_sources.meta;
    std::vector<char> taken(files.size(), 0);  // by a reader of whole folders
    for (auto& r : m->readers) r->scanShard(files, taken);
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
    const DumpFileName unparsed;  // what a file offered by its base name comes with
    for (std::size_t i = 0; i < files.size(); ++i) {
        const ScannedFile* f = files[i];
        if (stop.stop_requested()) return false;  // one atomic load a file; a statistic.csv takes far longer
        if (taken[i]) continue;
        const auto slash = f->rel.rfind('/');
        const std::string base = slash == std::string::npos ? f->rel : f->rel.substr(slash + 1);
        if (ShardReader* named = m->readerNamed(base)) {
            named->scanFile(*f, unparsed);
            continue;
        }
        if (m->m_sources.isAuxiliary(f->rel)) continue;
        DumpFileName name;
        parseDumpFileName(base, name);
        if (name.kind == DumpFileKind::Mapped) {
            const std::string original = m->m_sources.mappedName(f->rel, name.mappedKey);
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
            m->m_sources.addOpdebug(m->m_rootAbs, *f, name, m->folderOf(f->rel), m->m_out);
            continue;
        }
        if (std::any_of(m->readers.begin(), m->readers.end(), [&](auto& r) { return r->scanFile(*f, name); })) continue;
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
    for (auto& r : m->readers) r->scanDone();
    return true;
}

// Step 5 of format_reader.h.
void ShardBuilder::applyJob(const StatsJob& job, StatsJobResult&& result) {
    if (job.intoDraft)
        m->applyToDraft(job, std::move(result));
    else
        job.reader->apply(job, std::move(result));
}

// Steps 6-8 of format_reader.h, between the builder's own: grouping, overflows, rank entries.
DumpIndex ShardBuilder::finish() {
    // What each draft job left to say, in job order: the same warnings in the same order whatever
    // the thread count.
    for (const StatsJob& job : m->m_jobs)
        if (job.intoDraft) m->warnReadError(job);
    DumpIndex& out = m->m_out;
    for (auto& r : m->readers) r->finishDrafts(out);
    m->groupDrafts();
    m->m_sources.attachOverflows(m->m_folders, out);
    m->m_sources.fillRankInfo(m->m_shardRel, m->m_folders, m->m_rankFormats, out);
    for (auto& r : m->readers) r->finishOps(out);
    // The writer seen in each rank's folders (CANN raw, plain npy) wins over the MindSpore formats.
    for (RankInfo& r : out.ranks)
        for (const auto& [folder, f] : m->m_folderFormat)
            if (const FormatReader* reader = m->readerOf(f);
                m->m_folders[folder].loc.rank.value_or(0) == r.rank && reader && reader->namesRankFormat)
                r.format = f;
    for (auto& r : m->readers) r->finishRanks(out);
    out.finalize();
    return std::move(out);
}

std::set<DumpFormat> ShardBuilder::formats() const { return m->m_formats; }

DraftBuffers ShardBuilder::releaseBuffers() { return m->releaseBuffers(); }

void ShardBuilder::adoptBuffers(DraftBuffers&& buffers) { m->adoptBuffers(std::move(buffers)); }

}  // namespace dl
