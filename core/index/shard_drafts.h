#pragma once
// The tensor drafts of a shard: one per tensor as found in file names and statistic.csv rows,
// keyed by (folder, op type, op name, task, stream, timestamp, io, slot) in an open-addressing
// table, before ShardContext::groupDrafts turns them into op executions. Readers add to it by
// `draftFor`, per row for statistic.csv: it is inline here so that the hot loop does not call out.
#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/model/dump_index.h"
#include "core/model/packed_stats.h"
#include "core/model/string_pool.h"
#include "core/stats/tensor_stats.h"
#include "core/util/huge_pages.h"

namespace dl {

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
    std::int64_t stamp = 0;  // ScannedFile::stamp
    bool readError = false;
    std::string readErrorText;  // set by a worker; warned in job order by finish()
    TensorData data;
};

// One tensor as found in names and statistic.csv rows, before it is grouped into an op execution.
// Kept small (about 100 bytes): a statistics-only shard holds one per CSV row. Strings are ids in
// the builder's own pool, the CSV shape lies in ShardDrafts::csvDims, the CSV figures are packed.
struct Draft {
    StrId opType = 0, opName = 0, format = 0;  // ShardDrafts::keys
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
    bool csvWide = false;  // csvStats.count indexes ShardDrafts::csvWide
    std::uint8_t csvNdim = 0;
    DType csvDtype = DType::Unknown;
    std::uint32_t csvDims = 0;  // first dim in ShardDrafts::csvDims
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

inline std::uint64_t hashKey(const DraftKey& k) {
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

inline bool sameKey(const Draft& d, const DraftKey& k) {
    return d.timestampUs == k.timestampUs && d.opName == k.opName && d.slot == k.slot && d.io == k.io &&
        d.opType == k.opType && d.taskId == k.taskId && d.streamId == k.streamId && d.folder == k.folder;
}

// The big buffers of a shard's drafts, handed from a finished shard to the next one built on the
// same thread: their pages are faulted in already (a statistics-only shard of 1.25M rows fills
// ~200 MB of them; zeroing fresh pages was a fifth of a 10M-row index).
struct DraftBuffers {
    std::vector<Draft> drafts;
    std::vector<std::uint64_t> table;
    std::vector<std::int64_t> csvDims;
};

// The drafts of a shard and their lookup. `drafts`, `keys`, `csvDims` and `csvWide` are the
// readers' to fill (through draftFor / draftAt, then the draft's fields); the lookup table is not.
class ShardDrafts {
public:
    std::vector<Draft> drafts;
    StringPool keys;                    // op types, names and formats of the drafts
    std::vector<std::int64_t> csvDims;  // shapes from statistic.csv rows (Draft::csvDims)
    std::vector<TensorStats> csvWide;   // CSV figures a PackedStats cannot hold exactly

    // Before the first draft: the buffers' capacity is kept, their contents dropped.
    void adoptBuffers(DraftBuffers&& b) {
        drafts = std::move(b.drafts);
        m_table = std::move(b.table);
        csvDims = std::move(b.csvDims);
        drafts.clear();
        m_table.clear();
        csvDims.clear();
    }
    // Once the drafts are grouped: the buffers, emptied, for the next shard.
    DraftBuffers releaseBuffers() {
        drafts.clear();  // frees the drafts' file sides
        m_table.clear();
        csvDims.clear();
        return {std::move(drafts), std::move(m_table), std::move(csvDims)};
    }
    // Once no more drafts are looked up (grouping): the table emptied, its capacity kept.
    void dropLookup() { m_table.clear(); }

    void reserveDrafts(std::size_t n) {
        if (n > drafts.capacity()) {
            drafts.reserve(n);
            adviseHugePages(drafts.data(), n * sizeof(Draft));
        }
        std::size_t cap = 16;
        while (cap < 2 * n) cap <<= 1;
        if (cap > m_table.size()) rehash(cap);
    }

    // The key of a tensor with the op type and name interned, and its hash: a reader that knows
    // the next key early can `prefetch` its slot and call draftAt later.
    DraftKey keyFor(std::uint32_t folder, std::string_view opType, std::string_view opName, std::uint32_t taskId,
                    std::uint32_t streamId, std::int64_t timestampUs, Io io, std::uint16_t slot) {
        return {folder,
                keyOf(opType, m_lastType, m_lastTypeId),
                keyOf(opName, m_lastName, m_lastNameId),
                taskId,
                streamId,
                timestampUs,
                io,
                slot};
    }
    void prefetch(std::uint64_t hash) const {
        if (!m_table.empty()) __builtin_prefetch(m_table.data() + (hash & (m_table.size() - 1)));
    }

    // The draft of a tensor, made on first sight. No allocation per call beyond the drafts' growth.
    std::uint32_t draftAt(const DraftKey& k, std::uint64_t hash) {
        if (2 * (drafts.size() + 1) > m_table.size()) rehash(std::max<std::size_t>(16, m_table.size() * 2));
        const std::size_t mask = m_table.size() - 1;
        const std::uint64_t tag = tagOf(hash);
        std::size_t i = hash & mask;
        for (; m_table[i]; i = (i + 1) & mask)
            if (tagOf(m_table[i]) == tag) {
                const std::uint32_t id = std::uint32_t(m_table[i]) - 1;
                if (sameKey(drafts[id], k)) return id;
            }
        const auto id = std::uint32_t(drafts.size());
        m_table[i] = tag | (id + 1);
        Draft& d = drafts.emplace_back();
        d.folder = k.folder;
        d.opType = k.opType;
        d.opName = k.opName;
        d.taskId = k.taskId;
        d.streamId = k.streamId;
        d.timestampUs = k.timestampUs;
        d.io = k.io;
        d.slot = k.slot;
        return id;
    }

    std::uint32_t draftFor(std::uint32_t folder, std::string_view opType, std::string_view opName, std::uint32_t taskId,
                           std::uint32_t streamId, std::int64_t timestampUs, Io io, std::uint16_t slot) {
        const DraftKey k = keyFor(folder, opType, opName, taskId, streamId, timestampUs, io, slot);
        return draftAt(k, hashKey(k));
    }

private:
    StrId keyOf(std::string_view v, std::string& last, StrId& lastId) {
        if (v != last) {
            last.assign(v);
            lastId = keys.intern(v);
        }
        return lastId;
    }

    static std::uint64_t tagOf(std::uint64_t hash) { return hash & 0xffffffff00000000ull; }

    void rehash(std::size_t cap) {
        m_table.assign(cap, 0);
        for (std::uint32_t id = 0; id < drafts.size(); ++id) {
            const Draft& d = drafts[id];
            const std::uint64_t h =
                hashKey({d.folder, d.opType, d.opName, d.taskId, d.streamId, d.timestampUs, d.io, d.slot});
            for (std::size_t i = h & (cap - 1);; i = (i + 1) & (cap - 1))
                if (!m_table[i]) {
                    m_table[i] = tagOf(h) | (id + 1);
                    break;
                }
        }
    }

    // Open addressing over drafts: id + 1 in the low 32 bits (0 = empty), the key hash's high 32
    // bits above, so that a probe passing an occupied slot compares the tag, not the draft (a
    // random read of a draft per probe was the hot miss of a statistics-only shard).
    std::vector<std::uint64_t> m_table;
    // The last op type and name interned: a CSV row repeats them for every tensor of an op.
    std::string m_lastType, m_lastName;
    StrId m_lastTypeId = 0, m_lastNameId = 0;
};

}  // namespace dl
