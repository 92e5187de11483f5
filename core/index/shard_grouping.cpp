// The drafts of a shard into op executions (ShardContext::groupDrafts), once every job was applied.
#include "core/index/shard_context.h"

#include <algorithm>
#include <tuple>

#include "core/util/huge_pages.h"

namespace dl {

void ShardContext::groupDrafts() {
    m_out.tensors.reserve(m_out.tensors.size() + drafts.size());
    adviseHugePages(m_out.tensors.data(), m_out.tensors.capacity() * sizeof(TensorRecord));
    dropLookup();  // the lookup is done (its capacity may serve the next shard: releaseBuffers)
    // Each key string once into the index; ranks by text let the folder sorts compare ids.
    m_toOut.resize(keys.size());
    for (StrId i = 0; i < keys.size(); ++i) m_toOut[i] = m_out.strings.intern(keys.view(i));
    std::vector<StrId> byText(keys.size());
    for (StrId i = 0; i < keys.size(); ++i) byText[i] = i;
    std::sort(byText.begin(), byText.end(), [&](StrId a, StrId b) { return keys.view(a) < keys.view(b); });
    m_textRank.resize(keys.size());
    for (std::uint32_t r = 0; r < byText.size(); ++r) m_textRank[byText[r]] = r;
    // Drafts by folder, by counting (no vector per folder growing row by row).
    std::vector<std::uint32_t> start(m_folders.size() + 1, 0), ids(drafts.size());
    for (const Draft& d : drafts) ++start[d.folder + 1];
    for (std::size_t f = 0; f < m_folders.size(); ++f) start[f + 1] += start[f];
    {
        std::vector<std::uint32_t> fill(start.begin(), start.end() - 1);
        for (std::uint32_t i = 0; i < drafts.size(); ++i) ids[fill[drafts[i].folder]++] = i;
    }
    m_out.ops.reserve(m_out.ops.size() + drafts.size() / 2);
    adviseHugePages(m_out.ops.data(), m_out.ops.capacity() * sizeof(OpRecord));
    for (std::uint32_t f : emitOrder(start)) {
        std::vector<std::uint32_t> folderIds(ids.begin() + start[f], ids.begin() + start[f + 1]);
        emitFolder(f, folderIds);
    }
}

// Folders in the order DumpIndex::finalize sorts their ops into, (rank, iteration, graph), when no
// two folders share that triple: finalize then finds the shard sorted and keeps it in place. In
// first-seen order iteration "10" came before "2", and finalize re-sorted and copied every op and
// tensor record of the shard (the largest sort and 2x the records' memory of a statistics-only
// index). Same records either way: finalize's sort is stable and each folder's ops are one block of
// equal triples. Folders sharing a triple keep first-seen order (finalize interleaves them).
std::vector<std::uint32_t> ShardContext::emitOrder(const std::vector<std::uint32_t>& start) const {
    std::vector<std::uint32_t> order;
    for (std::uint32_t f = 0; f < m_folders.size(); ++f)
        if (start[f + 1] > start[f]) order.push_back(f);
    if (m_keepEmitOrder) return order;
    const auto triple = [&](std::uint32_t f) {
        const DumpLocation& l = m_folders[f].loc;
        return std::tuple(l.rank.value_or(0), l.iteration.value_or(0), l.graph);
    };
    std::vector<std::uint32_t> sorted = order;
    std::stable_sort(sorted.begin(), sorted.end(),
                     [&](std::uint32_t a, std::uint32_t b) { return triple(a) < triple(b); });
    for (std::size_t i = 1; i < sorted.size(); ++i)
        if (triple(sorted[i - 1]) == triple(sorted[i])) return order;
    return sorted;
}

std::uint32_t ShardContext::addTensor(const Draft& d, std::uint32_t opIndex) {
    TensorRecord t;
    t.op = opIndex;
    t.io = d.io;
    t.slot = d.slot;
    t.format = m_toOut[d.format];
    t.timestampUs = d.timestampUs;
    t.origDtype = d.origDtype;
    const std::vector<std::int64_t>* shape = nullptr;
    const FileSide* fs = d.file.get();
    if (d.hasFile && !fs->readError && fs->data.ok) {
        const auto& r = fs->data;
        t.flags |= HasData | r.flags;
        if (r.bigEndian) t.flags |= BigEndian;
        if (r.fortranOrder) t.flags |= FortranOrder;
        m_out.editSide(t).file = m_out.strings.intern(fs->fileRel);
        t.dtype = r.dtype;
        m_out.editSide(t).dataOffset = r.dataOffset;
        m_out.editSide(t).dataBytes = r.dataBytes;
        m_out.setStats(t, r.stats);
        if (!r.hist.empty()) {
            m_out.editSide(t).histOffset = std::uint32_t(m_out.histBytes.size());
            m_out.histBytes.insert(m_out.histBytes.end(), r.hist.begin(), r.hist.end());
            t.flags |= HasHistogram;
        }
        shape = &r.shape;
    } else {
        if (d.hasFile) {
            m_out.editSide(t).file = m_out.strings.intern(fs->fileRel);
            t.flags |= ReadError;
        }
        t.dtype = d.csvDtype;
        if (!d.hasCsv)
            m_out.setStats(t, TensorStats{});
        else if (d.csvWide)
            m_out.setStats(t, csvWide[d.csvStats.count]);
        else
            t.packedStats = d.csvStats;  // packed once when the row was read, exactly as setStats would
    }
    if (d.hasCsv) t.flags |= HasCsvStats;
    if (t.origDtype == DType::Unknown) t.origDtype = t.dtype;
    if (fs) {
        m_out.editSide(t).fileSize = fs->fileSize;
        m_out.editSide(t).fileStamp = fs->stamp;
    }
    if (!shape && d.csvHasShape && !(t.flags & HasData)) {
        t.shapeOffset = std::uint32_t(m_out.dims.size());
        t.ndim = d.csvNdim;
        m_out.dims.insert(m_out.dims.end(), csvDims.begin() + d.csvDims, csvDims.begin() + d.csvDims + d.csvNdim);
    } else if (shape) {
        t.shapeOffset = std::uint32_t(m_out.dims.size());
        t.ndim = std::uint8_t(std::min<std::size_t>(shape->size(), 255));
        m_out.dims.insert(m_out.dims.end(), shape->begin(), shape->begin() + t.ndim);
        if (t.flags & DeviceFormat) {  // the original shape follows the stored one
            const auto& o = fs->data.origShape;
            m_out.editSide(t).origNdim = std::uint8_t(std::min<std::size_t>(o.size(), 255));
            m_out.dims.insert(m_out.dims.end(), o.begin(), o.begin() + m_out.side(t).origNdim);
        }
    }
    m_out.tensors.push_back(t);
    return std::uint32_t(m_out.tensors.size() - 1);
}

// Groups the folder's tensors into op executions: same (type, name, task, stream), ordered by
// time, a new execution whenever an (io, slot) repeats. MindSpore-written files carry a fresh
// timestamp per tensor while CANN shares one per execution; this rule handles both.
void ShardContext::emitFolder(std::uint32_t folderId, std::vector<std::uint32_t>& ids) {
    const FolderInfo& folder = m_folders[folderId];
    {
        // Sorted by (type, name, task, stream, time, io, slot) on keys gathered once per draft: the
        // comparisons then read contiguous keys instead of two drafts and four ranks each.
        struct SortKey {
            std::uint64_t names, ids;
            std::int64_t time;
            std::uint32_t ioSlot, draft;
        };
        std::vector<SortKey> keys(ids.size());
        for (std::size_t k = 0; k < ids.size(); ++k) {
            const Draft& d = drafts[ids[k]];
            keys[k] = {std::uint64_t(m_textRank[d.opType]) << 32 | m_textRank[d.opName],
                       std::uint64_t(d.taskId) << 32 | d.streamId, d.timestampUs, std::uint32_t(d.io) << 16 | d.slot,
                       ids[k]};
        }
        std::sort(keys.begin(), keys.end(), [](const SortKey& x, const SortKey& y) {
            return std::tie(x.names, x.ids, x.time, x.ioSlot) < std::tie(y.names, y.ids, y.time, y.ioSlot);
        });
        for (std::size_t k = 0; k < ids.size(); ++k) ids[k] = keys[k].draft;
    }
    const StrId net = m_out.strings.intern(folder.loc.net);
    const auto opsBegin = m_out.ops.size();
    std::size_t i = 0;
    while (i < ids.size()) {
        const Draft& head = drafts[ids[i]];
        OpRecord op;
        op.type = m_toOut[head.opType];
        op.name = m_toOut[head.opName];
        op.rank = folder.loc.rank.value_or(0);
        op.graph = folder.loc.graph;
        op.iteration = folder.loc.iteration.value_or(0);
        op.net = net;
        op.taskId = head.taskId;
        op.streamId = head.streamId;
        op.startUs = head.timestampUs;
        op.endUs = head.timestampUs;
        op.firstTensor = std::uint32_t(m_out.tensors.size());
        const auto opIndex = std::uint32_t(m_out.ops.size());
        m_seen.clear();  // (io, slot) pairs of this execution: a handful, a linear scan is enough
        for (; i < ids.size(); ++i) {
            const Draft& d = drafts[ids[i]];
            const auto ioSlot = std::uint32_t(d.io) << 16 | d.slot;
            if (d.opType != head.opType || d.opName != head.opName || d.taskId != head.taskId ||
                d.streamId != head.streamId || std::find(m_seen.begin(), m_seen.end(), ioSlot) != m_seen.end())
                break;
            m_seen.push_back(ioSlot);
            addTensor(d, opIndex);
            op.startUs = std::min(op.startUs, d.timestampUs);
            op.endUs = std::max(op.endUs, d.timestampUs);
        }
        op.tensorCount = std::uint32_t(m_out.tensors.size()) - op.firstTensor;
        m_out.ops.push_back(op);
    }
    m_sources.orderOps(folder, m_out, opsBegin, m_out.ops.size());
    if (!m_keepEmitOrder) putInExecutionOrder(opsBegin);
}

// The folder's ops (the last ones in `out`, their tensors the last tensors) moved into execPos
// order, which orderOps made unique within the folder: what DumpIndex::finalize's stable sort does
// to them, done here on one folder's records while they are in the cache, so that finalize finds
// the shard sorted and keeps it in place instead of copying all its records.
void ShardContext::putInExecutionOrder(std::size_t opsBegin) {
    const std::size_t n = m_out.ops.size() - opsBegin;
    std::vector<std::uint32_t> byPos(n, std::uint32_t(-1));
    bool inOrder = true;
    for (std::size_t i = 0; i < n; ++i) {
        const std::uint32_t p = m_out.ops[opsBegin + i].execPos;
        if (p >= n || byPos[p] != std::uint32_t(-1)) return;  // not a permutation: finalize sorts
        byPos[p] = std::uint32_t(i);
        inOrder &= p == i;
    }
    if (inOrder) return;
    const std::size_t tensorsBegin = m_out.ops[opsBegin].firstTensor;
    const std::vector<OpRecord> ops(m_out.ops.begin() + std::ptrdiff_t(opsBegin), m_out.ops.end());
    const std::vector<TensorRecord> tensors(m_out.tensors.begin() + std::ptrdiff_t(tensorsBegin), m_out.tensors.end());
    std::size_t nextTensor = tensorsBegin;
    for (std::size_t p = 0; p < n; ++p) {
        OpRecord op = ops[byPos[p]];
        const auto opIndex = std::uint32_t(opsBegin + p);
        const std::size_t from = op.firstTensor - tensorsBegin;
        op.firstTensor = std::uint32_t(nextTensor);
        for (std::uint32_t k = 0; k < op.tensorCount; ++k) {
            TensorRecord t = tensors[from + k];
            t.op = opIndex;
            m_out.tensors[nextTensor++] = t;
        }
        m_out.ops[opIndex] = op;
    }
}

}  // namespace dl
