// The drafts of a shard into op executions (ShardContext::groupDrafts), once every job was applied.
#include "core/index/shard_context.h"

#include <algorithm>
#include <tuple>

#include "core/util/huge_pages.h"

namespace dl {

void ShardContext::groupDrafts() {
    out.tensors.reserve(out.tensors.size() + drafts.size());
    adviseHugePages(out.tensors.data(), out.tensors.capacity() * sizeof(TensorRecord));
    table.clear();  // the lookup is done (its capacity may serve the next shard: releaseBuffers)
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
    for (std::uint32_t f = 0; f < folders.size(); ++f)
        if (start[f + 1] > start[f]) order.push_back(f);
    if (keepEmitOrder) return order;
    const auto triple = [&](std::uint32_t f) {
        const DumpLocation& l = folders[f].loc;
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
        if (!d.hasCsv)
            out.setStats(t, TensorStats{});
        else if (d.csvWide)
            out.setStats(t, csvWide[d.csvStats.count]);
        else
            t.packedStats = d.csvStats;  // packed once when the row was read, exactly as setStats would
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
void ShardContext::emitFolder(std::uint32_t folderId, std::vector<std::uint32_t>& ids) {
    const FolderInfo& folder = folders[folderId];
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
            keys[k] = {std::uint64_t(textRank[d.opType]) << 32 | textRank[d.opName],
                       std::uint64_t(d.taskId) << 32 | d.streamId, d.timestampUs, std::uint32_t(d.io) << 16 | d.slot,
                       ids[k]};
        }
        std::sort(keys.begin(), keys.end(), [](const SortKey& x, const SortKey& y) {
            return std::tie(x.names, x.ids, x.time, x.ioSlot) < std::tie(y.names, y.ids, y.time, y.ioSlot);
        });
        for (std::size_t k = 0; k < ids.size(); ++k) ids[k] = keys[k].draft;
    }
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
    if (!keepEmitOrder) putInExecutionOrder(opsBegin);
}

// The folder's ops (the last ones in `out`, their tensors the last tensors) moved into execPos
// order, which orderOps made unique within the folder: what DumpIndex::finalize's stable sort does
// to them, done here on one folder's records while they are in the cache, so that finalize finds
// the shard sorted and keeps it in place instead of copying all its records.
void ShardContext::putInExecutionOrder(std::size_t opsBegin) {
    const std::size_t n = out.ops.size() - opsBegin;
    std::vector<std::uint32_t> byPos(n, std::uint32_t(-1));
    bool inOrder = true;
    for (std::size_t i = 0; i < n; ++i) {
        const std::uint32_t p = out.ops[opsBegin + i].execPos;
        if (p >= n || byPos[p] != std::uint32_t(-1)) return;  // not a permutation: finalize sorts
        byPos[p] = std::uint32_t(i);
        inOrder &= p == i;
    }
    if (inOrder) return;
    const std::size_t tensorsBegin = out.ops[opsBegin].firstTensor;
    const std::vector<OpRecord> ops(out.ops.begin() + std::ptrdiff_t(opsBegin), out.ops.end());
    const std::vector<TensorRecord> tensors(out.tensors.begin() + std::ptrdiff_t(tensorsBegin), out.tensors.end());
    std::size_t nextTensor = tensorsBegin;
    for (std::size_t p = 0; p < n; ++p) {
        OpRecord op = ops[byPos[p]];
        const auto opIndex = std::uint32_t(opsBegin + p);
        const std::size_t from = op.firstTensor - tensorsBegin;
        op.firstTensor = std::uint32_t(nextTensor);
        for (std::uint32_t k = 0; k < op.tensorCount; ++k) {
            TensorRecord t = tensors[from + k];
            t.op = opIndex;
            out.tensors[nextTensor++] = t;
        }
        out.ops[opIndex] = op;
    }
}

}  // namespace dl
