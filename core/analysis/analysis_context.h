#pragma once
// Working state shared by the analysis steps (classification, causality, chain): per-op
// anomaly state, communication pairing, stage map and clock model over one DumpIndex.
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "core/analysis/analysis_result.h"
#include "core/analysis/comm_matcher.h"
#include "core/model/dump_index.h"

namespace dl {

// What the analysis found of one op (not dl::OpState, the view state in core/query/op_state.h:
// one name for two types broke std::vector<OpState> across translation units).
struct OpFindings {
    AnomalyKind kind = AnomalyKind::None;       // strongest output anomaly, else Opdebug when a record names the op
    std::uint32_t badTensor = kNoIndex;         // first anomalous output
    AnomalyKind inputKind = AnomalyKind::None;  // strongest input anomaly (what a Send carried)
    std::uint32_t badInput = kNoIndex;          // its tensor
    bool inputBad = false, outputBad = false, opdebug = false, inputsDumped = false, weak = false;
    CommKind comm = CommKind::None;
    bool anomalous() const { return outputBad || opdebug; }
};

// The time the analysis orders an op by: its first tensor's timestamp, else its last, else its
// Opdebug record's; 0 when none is known.
std::int64_t opTimeUs(const DumpIndex& index, std::uint32_t op);

struct AnalysisContext {
    const DumpIndex& index;
    std::vector<OpFindings> ops;
    std::vector<CommOp> comm;
    CommMatch match;
    StageMap stages;
    std::map<std::uint32_t, std::int64_t> clockOffsetUs;  // rank -> offset; corrected = raw - offset
    bool clocksAligned = false;  // some Send/Receive or collective constrained the offsets (else all 0: raw clocks)
    std::map<std::uint32_t, std::uint32_t> clockComponent;  // rank -> lowest rank whose clock its offset is relative to
    std::map<std::uint32_t, std::int64_t> clockUncertaintyUs;  // rank -> standard error of its offset (estimated ranks)
    std::set<std::uint32_t> clockOneSided;                     // ranks whose offset is only a causality bound
    std::map<std::pair<std::uint32_t, std::uint32_t>, std::pair<std::uint32_t, std::uint32_t>>
        range;  // (rank, iter) -> [begin, end)
    // chain_detail::linkComponents once `match` and `range` are final: the chain asks three times,
    // and each pass visits every pair and collective member (~10^6 at 10M tensors).
    mutable std::optional<std::map<std::uint32_t, std::uint32_t>> linkRoots;

    explicit AnalysisContext(const DumpIndex& i) : index(i) {}
    std::int64_t rawTime(std::uint32_t op) const;  // 0 when unknown
    std::int64_t correctedTime(std::uint32_t op) const;
    // The data a Send moved was bad (its input, its output or its Receive's output).
    bool carriesBad(std::uint32_t sendOp) const;
    OverflowPoint point(std::uint32_t op) const;  // filled from the op state
};

}  // namespace dl
