#pragma once
// The in-memory index of a dump: ranks -> iterations -> graphs -> ops -> tensors, flattened into
// contiguous arrays with interned strings. Ops are sorted by (rank, iteration, graph, execution
// position); each op owns a contiguous run of tensors (inputs by slot, then outputs by slot).
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "core/model/dump_format.h"
#include "core/model/index_warning.h"
#include "core/model/packed_stats.h"
#include "core/model/record_allocator.h"
#include "core/model/string_pool.h"
#include "core/stats/log2_histogram.h"
#include "core/stats/tensor_stats.h"
#include "core/util/dtype.h"

namespace dl {

// Decoded overflow record (Opdebug.Node_OpDebug.*), attached to the op it names.
struct OverflowRecord {
    std::uint64_t aicoreStatus = 0;  // bit 0x20 float overflow, 0x100 fp32->fp16, ...
    std::uint64_t dhaAtomicStatus = 0;
    std::uint64_t l2AtomicStatus = 0;
    std::uint32_t taskId = 0, streamId = 0;  // ids of the overflowing op (from the record)
    std::uint32_t modelId = 0;
    StrId file = 0;  // path of the record, relative to the index root
    std::int64_t timestampUs = 0;
};
static_assert(std::has_unique_object_representations_v<OverflowRecord>);  // raw in .dlx: no padding

// What only some tensors have: a data file (with its fingerprint for incremental re-indexing), a
// histogram, a device layout's original shape and the kernel-only counts. Statistics-only tensors
// (statistic.csv, dump.json without files), millions in a big run, have none and pay 4 bytes for
// the link (TensorRecord::side). Read through DumpIndex::side(t), write through editSide(t).
struct TensorSide {
    std::uint64_t dataOffset = 0;  // first payload byte inside `file`
    std::uint64_t dataBytes = 0;   // payload size
    std::uint64_t fileSize = 0;    // fingerprint of `file` for incremental re-indexing
    std::int64_t fileStamp = 0;    // ScannedFile::stamp (mtime, ctime, inode) when indexed
    StrId file = 0;                // path relative to the index root; 0 when none
    std::uint32_t histOffset = 0;  // encoded Log2Histogram at DumpIndex::histBytes[histOffset]
    PackedCounts counts;           // the counts of PackedStats that only the kernel computes
    std::uint8_t origNdim = 0;     // DeviceFormat: original-shape dims at dims[shapeOffset + ndim]
    // Written to the index files as raw bytes: zeroed instead of compiler padding, so that the same
    // dump always gives the same .dlx bytes.
    std::uint8_t unusedTail[7] = {};
};
static_assert(sizeof(TensorSide) == 64 && std::has_unique_object_representations_v<TensorSide>);

// 88 bytes; ten million of them are read back from the cache on every reopen.
struct TensorRecord {
    std::uint32_t op = 0;  // index into DumpIndex::ops
    Io io = Io::Output;
    DType dtype = DType::Unknown;      // element type as stored in the file
    DType origDtype = DType::Unknown;  // type the framework says it had (bf16 stored as f32 ...)
    std::uint8_t ndim = 0;
    std::uint16_t slot = 0;
    std::uint16_t flags = 0;        // TensorFlag bits
    StrId format = 0;               // "DefaultFormat", "NC1HWC0", ...
    std::uint32_t shapeOffset = 0;  // ndim dims at DumpIndex::dims[shapeOffset] (shapes are shared)
    std::uint32_t side = 0;         // 1 + index into DumpIndex::sides, 0 when none
    std::int64_t timestampUs = 0;
    PackedStats packedStats;  // read and write through DumpIndex::stats() / setStats()
};
static_assert(sizeof(TensorRecord) == 88);

enum TensorFlag : std::uint16_t {
    HasData = 1u << 0,      // a tensor file was found
    HasCsvStats = 1u << 1,  // statistic.csv carried a row for it
    HasHistogram = 1u << 2,
    FortranOrder = 1u << 3,
    BigEndian = 1u << 4,
    ReadError = 1u << 5,        // file present but unreadable (see warnings)
    DeviceFormat = 1u << 6,     // stored in an Ascend device layout: `shape` is the stored (device) shape,
                                // the original shape follows it in dims (TensorSide::origNdim)
    PaddingExcluded = 1u << 7,  // statistics skip the layout's padding elements
    PaddingIncluded = 1u << 8,  // padding could not be told apart: statistics include it
    ListedOnly = 1u << 9,       // `file` holds the tensor but was not read (msprobe .pt); stats from the dump
};

struct OpRecord {
    StrId type = 0;   // "SqrtGrad"
    StrId name = 0;   // as in the dump's file names ("SqrtGrad-op42" or scoped 2.3+ form)
    StrId scope = 0;  // full scoped name when known (execution_order, mapping), else 0
    std::uint32_t rank = 0;
    std::uint32_t graph = 0;
    std::uint32_t iteration = 0;
    StrId net = 0;
    std::uint32_t taskId = 0, streamId = 0;
    std::uint32_t execPos = 0;  // position within (rank, graph, iteration): execution order
    std::int64_t startUs = 0;   // earliest tensor timestamp, 0 when unknown
    std::int64_t endUs = 0;     // latest tensor timestamp
    std::uint32_t firstTensor = 0;
    std::uint32_t tensorCount = 0;
    std::int32_t overflow = -1;  // index into DumpIndex::overflows, -1 when none
    StrId stack = 0;             // call stack text (msprobe stack.json), 0 when unknown
    StrId parent = 0;            // enclosing module/cell entry (msprobe construct.json), 0 when none
    // The writer's own tensor names (msprobe: "input.2", "parameters.weight", ...), 0 when its
    // tensors are named by io and slot. Held per op, not per tensor: ops of one kind share the
    // string, and it fills what was padding (80 bytes either way). Read it through
    // DumpIndex::tensorLabel(). Layout: input names by slot, '\x1e', output names by slot; names
    // separated by '\x1f'.
    StrId tensorNames = 0;
};
static_assert(sizeof(OpRecord) == 80 && std::has_unique_object_representations_v<OpRecord>);  // raw in .dlx

struct RankInfo {
    std::uint32_t rank = 0;
    std::string folder;  // relative to the index root ("rank_0", "" for a single folder)
    DumpFormat format = DumpFormat::Unknown;
    std::string host;  // from hccl.json when present
    std::string deviceId;
    std::string indexedOn;  // host name of the machine that indexed this folder (where its data is)
    std::string dataRoot;   // absolute dump root on that machine (its files are relative to it)
    // What ordered this rank's ops within an iteration, the weakest over its folders: "timestamps"
    // (ties broken by the execution order), "execution_order", "graph_ir", "file_name" (no source:
    // the order may be wrong), "modification_time" (plain .npy), "dump_json" (msprobe); "" unknown.
    std::string orderSource;
};

struct RunMetadata {
    std::string frameworkVersion;  // .dump_metadata/config.json ms_version
    std::string deviceTarget;      // Ascend, GPU, CPU
    std::string dumpMode;          // "tensor", "statistic", "full", "overflow" ...
    std::string dumpConfigJson;    // data_dump.json as found (may be empty)
    int opDebugMode = -1;
};

// One sentence for the analysis evidence when some rank's op order is not from timestamps
// ("op order without timestamps: ranks 0-1 from execution_order"), empty when every rank is timed.
std::string orderSourceEvidence(const std::vector<RankInfo>& ranks);

struct DumpIndex {
    std::string root;  // absolute path of what the user opened
    StringPool strings;
    std::vector<RankInfo> ranks;
    // The big arrays: std::vector with an allocator that lets the index reader skip constructing
    // records it decodes over at once (core/model/record_allocator.h); otherwise the same.
    RecordVector<OpRecord> ops;
    RecordVector<TensorRecord> tensors;
    RecordVector<TensorSide> sides;  // TensorRecord::side - 1
    std::vector<std::int64_t> dims;
    std::vector<std::uint8_t> histBytes;
    std::vector<OverflowRecord> overflows;
    std::vector<TensorStats> wideStats;  // statistics a PackedStats cannot hold exactly
    std::vector<IndexWarning> warnings;
    RunMetadata meta;

    TensorStats stats(const TensorRecord& t) const {
        return t.packedStats.wide ? wideStats[t.packedStats.count] : t.packedStats.unpack(&side(t).counts);
    }
    // The tensor's file fields, histogram offset, ...: all zero when it has none.
    const TensorSide& side(const TensorRecord& t) const { return t.side ? sides[t.side - 1] : kNoSide; }
    // The same, created on first use. The reference lives until the next editSide() of a tensor
    // without one: use it for one statement.
    TensorSide& editSide(TensorRecord& t) {
        if (!t.side) {
            sides.emplace_back();
            t.side = std::uint32_t(sides.size());
        }
        return sides[t.side - 1];
    }
    static const TensorSide kNoSide;
    // Stores s in t, packed when that is exact, else in wideStats (a replaced wide entry stays
    // behind unused: statistics are set once or twice per tensor).
    void setStats(TensorRecord& t, const TensorStats& s);

    std::uint64_t totalDataBytes() const;
    // Bytes the index holds in memory: its arrays (records, sides, shapes, histograms, wide
    // statistics) and, apart, the interned strings (names repeat across iterations and ranks).
    struct Memory {
        std::size_t arrays = 0, strings = 0;
    };
    Memory memory() const;
    std::vector<std::uint32_t> iterations() const;  // sorted, unique
    std::vector<std::int64_t> shape(const TensorRecord& t) const {
        return {dims.begin() + t.shapeOffset, dims.begin() + t.shapeOffset + t.ndim};
    }
    // Logical shape of a DeviceFormat tensor (the stored shape otherwise).
    std::vector<std::int64_t> originalShape(const TensorRecord& t) const {
        if (!(t.flags & DeviceFormat)) return shape(t);
        const auto* p = dims.data() + t.shapeOffset + t.ndim;
        return {p, p + side(t).origNdim};
    }
    bool histogram(const TensorRecord& t, Log2Histogram& out) const;
    // The tensor's name within its op: the writer's own (OpRecord::tensorNames) when it has one,
    // else "input.{slot}" / "output.{slot}".
    std::string tensorLabel(const TensorRecord& t) const;
    // Appends `other` (a shard) to this index, remapping its string ids. Call finalize() after
    // the last merge to restore the op order.
    void merge(const DumpIndex& other);
    void merge(DumpIndex&& other);  // moves `other` in whole when this index holds nothing yet
    // The index of `ops` alone (ascending op numbers), in their order, with their tensors and what
    // those point at (shapes, sides, histograms, wide statistics, Opdebug records) and only the
    // strings they use; root, ranks and metadata as they are, no warnings.
    DumpIndex subset(const std::vector<std::uint32_t>& ops) const;
    // Sorts ops by (rank, iteration, graph, execPos) and tensors by (op, io, slot); fixes links.
    // Tensors of the same shape then share one run of dims.
    void finalize();
    // Empties the index and frees every buffer it holds. `index = DumpIndex()` does not free them
    // all: libstdc++ moves an empty std::string (held in place) into one that owns a buffer by
    // copying its characters and keeping that buffer, and the string pool's text is such a string.
    void release();
    // One copy of each distinct shape in dims (tensors point at it). Done by finalize() when dims
    // hold at least one entry per tensor (not shared yet).
    void shareShapes();
};

}  // namespace dl
