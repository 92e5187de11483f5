#include "core/compare/compare_overlay.h"

#include <algorithm>

namespace dl {

const char* compareStateName(CompareState s) {
    switch (s) {
        case CompareState::Agree:
            return "agree";
        case CompareState::NotCompared:
            return "no tensors";
        case CompareState::Unmatched:
            return "only in this run";
        case CompareState::Diverged:
            return "diverged";
        case CompareState::FirstDivergence:
            return "first divergence";
    }
    return "?";
}

namespace {

// A matched op is NotCompared until its first row; then it shows its worst row (Agree included,
// which ranks below NotCompared).
void addRow(OpState& s, CompareState c) {
    s = s == OpState(CompareState::NotCompared) ? OpState(c) : std::max(s, OpState(c));
}

void countStates(OpStates& s) {
    std::fill(std::begin(s.counts), std::end(s.counts), 0);
    for (OpState o : s.op) ++s.counts[static_cast<int>(o)];
}

}  // namespace

CompareOverlay buildCompareOverlay(const RunComparison& c, const DumpIndex& a, const DumpIndex& b) {
    static_assert(kCompareStateCount == kOpStateCount, "compare states travel in OpStates");
    CompareOverlay ov;
    ov.partnerA.assign(a.ops.size(), kNoIndex);
    ov.partnerB.assign(b.ops.size(), kNoIndex);
    ov.rowOfTensorA.assign(a.tensors.size(), kNoIndex);
    ov.rowOfTensorB.assign(b.tensors.size(), kNoIndex);
    // Ops without a partner are Unmatched; matched ops start as NotCompared and rise with their rows.
    ov.statesA.op.assign(a.ops.size(), OpState(CompareState::Unmatched));
    ov.statesB.op.assign(b.ops.size(), OpState(CompareState::Unmatched));
    ov.statesA.tensor.assign(a.tensors.size(), OpState(CompareState::NotCompared));
    ov.statesB.tensor.assign(b.tensors.size(), OpState(CompareState::NotCompared));
    for (const OpPair& p : c.alignment.ops) {
        ov.partnerA[p.a] = p.b;
        ov.partnerB[p.b] = p.a;
        ov.statesA.op[p.a] = ov.statesB.op[p.b] = OpState(CompareState::NotCompared);
    }
    for (std::size_t r = 0; r < c.alignment.tensors.size() && r < c.rows.size(); ++r) {
        const TensorPair& p = c.alignment.tensors[r];
        ov.rowOfTensorA[p.a] = ov.rowOfTensorB[p.b] = static_cast<std::uint32_t>(r);
        const CompareState s = std::int64_t(r) == c.firstDivergence ? CompareState::FirstDivergence
            : c.rows[r].diverged                                    ? CompareState::Diverged
                                                                    : CompareState::Agree;
        ov.statesA.tensor[p.a] = ov.statesB.tensor[p.b] = OpState(s);
        const std::uint32_t opA = a.tensors[p.a].op, opB = b.tensors[p.b].op;
        addRow(ov.statesA.op[opA], s);
        addRow(ov.statesB.op[opB], s);
    }
    countStates(ov.statesA);
    countStates(ov.statesB);
    return ov;
}

}  // namespace dl
