#include "core/index/shard_context.h"

#include "core/index/dump_layout.h"

namespace dl {

std::uint32_t ShardContext::folderOf(const std::string& fileRel) {
    const auto slash = fileRel.rfind('/');
    const std::string dir = slash == std::string::npos ? std::string() : fileRel.substr(0, slash);
    auto [it, inserted] = m_folderIds.emplace(dir, std::uint32_t(m_folders.size()));
    if (inserted) {
        FolderInfo f;
        f.rel = dir;
        auto dirs = splitPath(m_rootAbs);
        auto rel = splitPath(dir);
        dirs.insert(dirs.end(), rel.begin(), rel.end());
        f.loc = locateDumpFolder(dirs);
        m_folders.push_back(std::move(f));
    }
    return it->second;
}

std::optional<std::uint32_t> ShardContext::addTensorFile(const ScannedFile& f, const DumpFileName& name,
                                                         DumpFormat format, ShardReader& reader) {
    const std::uint32_t folder = folderOf(f.rel);
    noteGrammarFolder(folder);
    noteFormat(folder, format);
    noteRankFormat(format);
    const auto id = draftFor(folder, name.opType, name.opName, name.taskId, name.streamId, name.timestampUs,
                             name.hasIo ? name.io : Io::Output, name.slot);
    Draft& d = drafts[id];
    if (d.hasFile) {
        warn(f.rel, "same tensor as " + d.file->fileRel + " (identical name fields); kept the first",
             WarningSeverity::Note);
        return std::nullopt;
    }
    d.hasFile = true;
    FileSide& fs = d.fileSide();
    fs.fileRel = f.rel;
    fs.fileSize = f.size;
    fs.stamp = f.stamp;
    d.format = keys.intern(name.format);
    d.origDtype = name.dtype;
    if (!reuse(f, d)) queueDraftJob(id, f, name.dtype, reader);
    return id;
}

bool ShardContext::reuse(const ScannedFile& f, Draft& d) {
    const auto it = m_previous.find(f.rel);
    if (it == m_previous.end() || it->second.size() != 1) return false;
    const TensorRecord& t = *it->second.front();
    const TensorSide& side = m_previousIndex->side(t);
    if (side.fileSize != f.size || side.fileStamp != f.stamp || !(t.flags & HasData)) return false;
    TensorData& r = d.fileSide().data;
    r.ok = true;
    r.dtype = t.dtype;
    r.bigEndian = t.flags & BigEndian;
    r.fortranOrder = t.flags & FortranOrder;
    r.shape = m_previousIndex->shape(t);
    r.dataOffset = side.dataOffset;
    r.dataBytes = side.dataBytes;
    r.stats = m_previousIndex->stats(t);
    Log2Histogram h;
    if ((t.flags & HasHistogram) && m_previousIndex->histogram(t, h)) h.encode(r.hist);
    ++m_reused;
    return true;
}

void ShardContext::applyToDraft(const StatsJob& job, StatsJobResult&& result) {
    FileSide& fs = *drafts[job.draft].file;  // made by scan() for every draft job
    if (!result.ok) {                        // worker thread: only this job's draft is written, warned in finish()
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

void ShardContext::warnReadError(const StatsJob& job) {
    if (drafts[job.draft].file->readError)
        warn(drafts[job.draft].file->fileRel, drafts[job.draft].file->readErrorText, WarningSeverity::Unreadable);
}

}  // namespace dl
