#pragma once
// What the overflow analysis found, as plain data for the CLI, the GUI and the PDF report.
// Ops and tensors are referred to by index into DumpIndex::ops / DumpIndex::tensors.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/model/no_index.h"
#include "core/util/dtype.h"

namespace dl {

// Ordered by strength of evidence; Opdebug is used only when no tensor shows the overflow.
enum class AnomalyKind : std::uint8_t { None = 0, Saturated, Nan, Inf, Opdebug };
const char* anomalyKindName(AnomalyKind k);  // "none", "saturated", "nan", "inf", "opdebug"

enum class ChainRole : std::uint8_t { Origin, Propagated, Send, Receive };
const char* chainRoleName(ChainRole r);  // "origin", "propagated", "send", "receive"

// How a chain step got its bad data from the step it came from (ChainStep::causedBy).
enum class ChainVia : std::uint8_t {
    None,          // the origin
    SameRank,      // program order on one rank
    SendReceive,   // a matched Send/Receive pair
    Collective,    // a collective's inputs reached its outputs on the other members
    WeightUpdate,  // across iterations: the optimizer wrote the bad gradient into the weights
    ClockOnly,     // no link found in the dump: placed by its clock-aligned time (or execution order)
    Dataflow,      // on one rank, a path of data edges in the graph IR (ChainStep::path)
};
const char* chainViaName(
    ChainVia v);  // "origin", "same_rank", "send_receive", "collective", "weight_update", "clock_only", "dataflow"

enum class Persistence : std::uint8_t {
    Unknown,          // no overflow
    SingleIteration,  // the dump holds no iteration after the first bad one
    Persistent,       // every later iteration overflows too
    Transient,        // later iterations recover (loss scaling skipped the step)
    Intermittent,     // clean and bad iterations alternate after the first one
};
const char* persistenceName(Persistence p);

// One op at which an anomaly is seen.
struct OverflowPoint {
    std::uint32_t op = kNoIndex;
    std::uint32_t tensor = kNoIndex;  // kNoIndex when only an Opdebug record names the op
    AnomalyKind kind = AnomalyKind::None;
    std::uint32_t rank = 0;
    std::uint32_t iteration = 0;
    int stage = -1;                        // -1 when the stage map is unknown
    std::int64_t timestampUs = 0;          // as dumped, on the rank's own clock; 0 when unknown
    std::int64_t correctedUs = 0;          // on the reference rank's clock (see clockOffsetUs)
    std::string opdebugStatus;             // decoded Opdebug status when a record names the op
    std::vector<std::uint32_t> peerRanks;  // tensor-parallel peers showing the same anomaly at the same op
};

// One data edge of the graph IR: output `outputSlot` of `producer` is input `inputSlot` of `consumer`.
struct DataflowEdge {
    std::string producer, consumer;       // the kernels' full scoped names in the IR
    std::uint32_t producerOp = kNoIndex;  // their ops in the dump (same rank and iteration), kNoIndex when not dumped
    std::uint32_t consumerOp = kNoIndex;
    std::uint16_t outputSlot = 0, inputSlot = 0;
};

// Where an input of the origin came from, by the graph IR: a kernel's output, a parameter or a constant.
struct OriginInput {
    std::uint16_t slot = 0;
    std::uint32_t tensor = kNoIndex;      // the origin's dumped input, kNoIndex when not dumped
    std::string source;                   // "kernel", "parameter", "constant"
    std::string producer;                 // kernel's scoped name, parameter name or constant text
    std::uint32_t producerOp = kNoIndex;  // the producing op in the dump
    std::uint16_t outputSlot = 0;
    std::uint32_t producerTensor = kNoIndex;  // its dumped output tensor
};

// Steps are listed in causal order: every step after the step it came from (happens-before
// through program order, Send/Receive pairs, collectives and the weight update), and by
// clock-aligned time where nothing links two steps.
struct ChainStep {
    ChainRole role = ChainRole::Propagated;
    OverflowPoint at;
    std::string note;   // why this step is in the chain ("via Send-op12 from rank 3" ...)
    int causedBy = -1;  // index of the step it came from; -1 for the first step
    ChainVia via = ChainVia::None;
    std::uint32_t linkOp = kNoIndex;        // the Send of a Receive, the optimizer of a weight update, ...
    int tag = -1;                           // sr_tag of a Send/Receive hop when written
    std::vector<std::uint32_t> groupRanks;  // a collective hop: the ranks of its group
    std::string pairEvidence;               // a Send/Receive hop: what tied the pair (pairEvidenceName)
    std::int64_t alignedUs = 0;             // the step's time on the reference clock (0: no timestamps)
    bool clockAligned = false;       // alignedUs is on the reference clock (a message links the rank's clock to it)
    std::uint64_t orderKey = 0;      // position in happens-before order when there are no timestamps
    std::vector<DataflowEdge> path;  // via Dataflow: the IR's edges from the step it came from to this one
};

struct StageMap {
    std::map<std::uint32_t, int> stageOfRank;
    int stageCount = 0;
    std::string source;      // "--stages", "hccl.json", "send/receive topology", "ops held", ...
    bool confident = false;  // false: a guess, say so when presenting it
    std::vector<std::vector<std::uint32_t>> tpGroups;  // tensor-parallel groups (collectives within a stage)
    std::vector<std::vector<std::uint32_t>> replicas;  // data-parallel pipelines (ranks joined by pairs and TP groups)
    int stageOf(std::uint32_t rank) const {
        auto it = stageOfRank.find(rank);
        return it == stageOfRank.end() ? -1 : it->second;
    }
};

struct IterationStatus {
    std::uint32_t iteration = 0;
    bool overflow = false;
    std::uint64_t anomalousTensors = 0;
    std::uint64_t anomalousOps = 0;
    std::vector<std::uint32_t> ranks;  // ranks with an anomaly in this iteration
};

struct NearLimitEntry {
    std::uint32_t op = kNoIndex;
    std::uint32_t tensor = kNoIndex;
    double maxAbs = 0;
    double fp16MaxShare = 0;  // maxAbs / 65504 (the room left below the max is 1 - this)
    bool castToFp16 = false;  // an fp32 tensor that is cast to fp16
};

struct ReplayPrecisionResult {
    DType dtype = DType::Float32;  // Float16, BFloat16 or Float32
    double maxAbs = 0;             // largest |y| after rounding; NaN when a result is Inf/NaN
    double maxAbsUnrounded = 0;    // largest |y| of the exact (fp32) computation on these inputs
    std::uint64_t infCount = 0, nanCount = 0, saturatedCount = 0;
    bool overflow = false;
    double relErrVsFp32 = -1;  // relative L2 error against the fp32 replay; -1 when not defined
};

struct ReplayResult {
    bool available = false;
    std::uint32_t op = kNoIndex;
    std::string opType;
    std::string unavailableReason;               // when !available
    bool saturatingFp16 = false;                 // fp16 replay clamps to +/-65504 (the dump's mode)
    std::vector<ReplayPrecisionResult> results;  // fp16, bf16, fp32
    bool reproducesOverflow = false;             // the fp16 replay overflows like the dump did
    double maxDiffVsDump = -1;                   // max |fp16 replay - dumped output| over finite pairs; -1 unknown
    std::string recommendation;
    bool recommendationFromReplay = false;  // false: a rule of thumb from the headroom, not a replay
    std::vector<std::string> notes;         // inferred axes, transpose flags, ambiguities
};

struct AnalysisResult {
    bool cancelled = false;             // stopped before the end: every other field is empty
    bool overflow = false;              // verdict
    bool noData = false;                // nothing readable: neither a clean nor an overflow verdict
    std::uint64_t readableTensors = 0;  // tensors with statistics or data that could be read
    std::uint64_t unreadableFiles = 0;  // distinct files (paths) with a warning that data could not be read
    std::vector<std::pair<std::string, std::string>> fileWarnings;  // (path, reason): every index warning
    std::vector<bool> fileWarningUnreadable;  // per fileWarnings entry: data lost (else a note on how it was read)
    bool chainOrderedByClock = false;         // timestamps decided the order where no link did
    bool clocksAligned = false;       // clockOffsetUs comes from Send/Receive or collective timing (else raw clocks)
    bool chainOrderedByFlow = false;  // unlinked ranks ordered by the pipeline's data flow (stage map), not clocks
    std::optional<OverflowPoint> firstOverflow;
    std::vector<ChainStep> chain;
    StageMap stages;
    std::map<std::uint32_t, std::int64_t> clockOffsetUs;  // rank -> estimated offset to the reference clock
    std::map<std::uint32_t, std::int64_t>
        clockUncertaintyUs;  // rank -> standard error of the offset (estimated ranks only)
    std::vector<IterationStatus> iterations;
    std::optional<std::uint32_t> firstBadIteration;
    Persistence persistence = Persistence::Unknown;
    double nearLimitThreshold = 0.5;        // the share of 65504 (max|x| / 65504) from which a tensor is near the limit
    std::vector<NearLimitEntry> nearLimit;  // highest share of 65504 first (least headroom), capped
    std::uint64_t nearLimitTotal = 0;       // before the cap
    // Every near-limit tensor (uncapped, ascending): the one definition the banner's count, the
    // table's "near limit" state and its filter all use (nearLimitTensors.size() == nearLimitTotal).
    std::vector<std::uint32_t> nearLimitTensors;
    std::optional<ReplayResult> replay;
    // The graph IR (rank_N/graphs/*.ir) of the origin's rank: its inputs' producers, and whether
    // it was there to explain same-rank hops.
    std::vector<OriginInput> originInputs;
    bool graphIrRead = false;  // some rank of the chain had a graph IR that was read
    // When the first overflow is a Cast to fp16 whose dumped input cannot have made it: the op
    // whose dumped output is byte for byte that input, i.e. the op that made the value (MindSpore
    // CPU runs it in float32 between Casts it inserts and writes its output labelled fp16).
    std::optional<std::uint32_t> valueMadeBy;
    std::uint64_t tensorsExamined = 0, anomalousTensors = 0, anomalousOps = 0;
    std::uint64_t commPairs = 0, unmatchedReceives = 0;
    std::uint64_t ambiguousPairs = 0, pairsStatisticsDiffer = 0;
    std::map<std::string, std::uint64_t> pairsByEvidence;  // pairEvidenceName -> pairs
    // Every Send/Receive pair: (send op, receive op, evidence name), in match order.
    struct Pair {
        std::uint32_t send = 0, recv = 0;
        std::string evidence;
    };
    std::vector<Pair> pairs;
    // The roots of separate runs the folder holds (core/analysis/separate_runs.h), sorted; empty for
    // one run. Their ranks of one number share a lane and the verdict; a warning says so.
    std::vector<std::string> separateRuns;
    std::vector<std::string> evidence;  // how the verdict was reached
    std::vector<std::string> warnings;  // where evidence is thin or input was odd
};

}  // namespace dl
