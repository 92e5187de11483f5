// toText: the readable verdict printed by `dumplens-cli analyze`.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "core/analysis/analysis_json.h"
#include "core/analysis/separate_runs.h"
#include "core/analysis/statistic_overflow.h"
#include "core/analysis/tensor_anomaly.h"
#include "core/index/run_framework.h"
#include "core/util/half.h"

namespace dl {

namespace {

std::string num(double v) {
    if (!std::isfinite(v)) return "inf";
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.6g", v);
    return buf;
}

// A share as "91.6%" (of the fp16 max, or the headroom left below it).
std::string percentText(double fraction) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f%%", fraction * 100);
    return buf;
}

std::string where(const DumpIndex& idx, const OverflowPoint& p) {
    const OpRecord& o = idx.ops[p.op];
    std::string s = idx.strings.str(o.type) + " " + idx.strings.str(o.name);
    if (p.tensor != kNoIndex) s += " " + tensorLabel(idx, idx.tensors[p.tensor]);
    s += "  [rank " + std::to_string(p.rank);
    if (!p.peerRanks.empty()) {
        s += " + TP peers";
        for (std::uint32_t r : p.peerRanks) s += " " + std::to_string(r);
    }
    s += p.stage >= 0 ? ", stage " + std::to_string(p.stage) : ", stage ?";
    s += ", iteration " + std::to_string(p.iteration);
    if (p.timestampUs) s += ", t=" + std::to_string(p.timestampUs) + " us";
    return s + "]";
}

void replayTable(const ReplayResult& r, std::ostringstream& out) {
    out << "\nReplay of " << r.opType << ":\n";
    if (!r.available) {
        out << "  unavailable: " << r.unavailableReason << "\n";
    } else {
        out << "  fp16 mode: " << (r.saturatingFp16 ? "saturation (clamp to 65504)" : "IEEE inf/nan") << "\n";
        out << "  precision   max|y| (exact)   max|y| stored   overflow   rel.err vs fp32\n";
        for (const ReplayPrecisionResult& p : r.results) {
            char line[160];
            std::snprintf(line, sizeof line, "  %-10s  %-15s  %-14s  %-9s  %s\n",
                          std::string(dtypeName(p.dtype)).c_str(), num(p.maxAbsUnrounded).c_str(),
                          std::isnan(p.maxAbs) ? "inf/nan" : num(p.maxAbs).c_str(), p.overflow ? "YES" : "no",
                          p.relErrVsFp32 >= 0 ? num(p.relErrVsFp32).c_str() : "-");
            out << line;
        }
        out << "  fp16 replay " << (r.reproducesOverflow ? "reproduces" : "does NOT reproduce") << " the overflow";
        if (r.maxDiffVsDump >= 0) out << " (max |replay - dump| " << num(r.maxDiffVsDump) << " on finite values)";
        out << "\n";
    }
    for (const std::string& n : r.notes) out << "  note: " << n << "\n";
    if (!r.recommendation.empty())
        out << "\nRecommendation" << (r.recommendationFromReplay ? "" : " (no replay)") << ": " << r.recommendation
            << "\n";
}

}  // namespace

std::string toText(const DumpIndex& idx, const AnalysisResult& r) {
    std::ostringstream out;
    if (r.noData) {
        out << "No data: nothing readable in " << idx.root << "  (" << r.tensorsExamined << " tensors listed, "
            << r.unreadableFiles << " file(s) could not be read)\n";
    } else if (!r.overflow && r.unreadableFiles) {
        out << "Verdict: clean among " << r.readableTensors << " readable tensors; " << r.unreadableFiles
            << " file(s) could not be read\n";
    } else {
        out << "Verdict: " << (r.overflow ? "OVERFLOW" : "clean") << "  (" << r.tensorsExamined << " tensors, "
            << r.anomalousTensors << " anomalous)\n";
    }
    if (!r.separateRuns.empty()) out << "Separate runs: " << separateRunsWarning(r.separateRuns) << "\n";
    if (const std::string n = statisticOverflowNote(idx, findStatisticOverflows(idx)); !n.empty())
        out << "Statistics overflowed: " << n << "\n";
    out << "Framework: " << runFrameworkText(runFramework(idx)) << "\n";
    if (r.firstOverflow) {
        const OverflowPoint& p = *r.firstOverflow;
        out << "\nFirst overflow: " << where(idx, p) << "\n  kind: " << anomalyKindName(p.kind);
        if (!p.opdebugStatus.empty()) out << "; Opdebug: " << p.opdebugStatus;
        out << "\n";
        if (r.valueMadeBy)
            out << "  value made by: " << idx.strings.str(idx.ops[*r.valueMadeBy].type) << " "
                << idx.strings.str(idx.ops[*r.valueMadeBy].name) << " (in float32; the Cast only rounded it to fp16)\n";
    }
    if (!r.originInputs.empty()) {
        out << "  inputs (graph IR):\n";
        for (const OriginInput& in : r.originInputs) {
            out << "    input." << in.slot << " <- " << in.source << " " << in.producer;
            if (in.source == "kernel") out << " output." << in.outputSlot;
            if (in.producerOp != kNoIndex) out << "  (" << idx.strings.str(idx.ops[in.producerOp].name) << ")";
            const std::uint32_t t = in.producerTensor != kNoIndex ? in.producerTensor : in.tensor;
            if (t != kNoIndex) {
                const TensorStats st = idx.stats(idx.tensors[t]);
                out << "  max|x| " << num(st.maxAbs);
                if (st.infCount()) out << ", " << st.infCount() << " inf";
                if (st.nanCount) out << ", " << st.nanCount << " nan";
            }
            out << "\n";
        }
    }
    if (!r.chain.empty()) {
        out << "\nChain:\n";
        for (std::size_t i = 0; i < r.chain.size(); ++i) {
            const ChainStep& s = r.chain[i];
            out << "  " << i + 1 << ". " << chainRoleName(s.role) << "  " << where(idx, s.at) << "  "
                << anomalyKindName(s.at.kind);
            if (s.causedBy >= 0) out << "  <- " << s.causedBy + 1 << " via " << chainViaName(s.via);
            if (r.chainOrderedByClock && s.clockAligned && s.alignedUs) out << "  @" << s.alignedUs << " us aligned";
            out << (s.note.empty() ? "" : "  -- " + s.note) << "\n";
        }
    }
    if (r.firstBadIteration) {
        out << "\nIterations: first overflow in " << *r.firstBadIteration << ", " << persistenceName(r.persistence)
            << " (";
        for (const IterationStatus& s : r.iterations) out << " " << s.iteration << (s.overflow ? ":bad" : ":ok");
        out << " )\n";
    }
    if (r.replay) replayTable(*r.replay, out);
    if (r.stages.stageCount > 0) {
        out << "\nStages (" << r.stages.source << (r.stages.confident ? "" : ", a guess") << "):";
        for (const auto& [rank, stage] : r.stages.stageOfRank) out << " " << rank << ":" << stage;
        out << "\n";
    }
    // A wider value going into a Cast to fp16 past 65504 is not "near" the limit: the Cast turns it
    // into inf (a mock of MindSpore's CPU writer had one 64 times past it listed as an early warning).
    std::size_t pastLimit = 0;
    for (const NearLimitEntry& e : r.nearLimit) pastLimit += e.castToFp16 && e.maxAbs > kFp16Max;
    out << "\nNear the fp16 limit (max|x| >= " << percentText(r.nearLimitThreshold)
        << " of fp16 max): " << r.nearLimitTotal << " tensor(s)";
    if (pastLimit)
        out << "; " << pastLimit << " of them already past 65504 going into a Cast to fp16, which overflows there";
    if (r.nearLimitTotal > pastLimit) out << (pastLimit ? "; the others" : "") << "; an early warning, not an overflow";
    out << "\n";
    // NearLimitEntry::fp16MaxShare is max|x| / 65504; the headroom shown is
    // the room left, 1 - that.
    for (const NearLimitEntry& e : r.nearLimit) {
        if (&e - r.nearLimit.data() >= 10) {
            out << "  ...\n";
            break;
        }
        const OpRecord& o = idx.ops[e.op];
        out << "  " << idx.strings.str(o.type) << " " << idx.strings.str(o.name) << " "
            << tensorLabel(idx, idx.tensors[e.tensor]) << "  max|x| " << num(e.maxAbs) << "  "
            << percentText(e.fp16MaxShare) << " of fp16 max, headroom " << percentText(1 - e.fp16MaxShare)
            << (e.castToFp16 && e.maxAbs > kFp16Max ? "  (cast to fp16: past 65504, inf after the Cast)"
                    : e.castToFp16                  ? "  (cast to fp16)"
                                                    : "")
            << "  [rank " << o.rank << ", iteration " << o.iteration << "]\n";
    }
    if (!r.evidence.empty()) {
        out << "\nEvidence:\n";
        for (const std::string& e : r.evidence) out << "  - " << e << "\n";
    }
    if (!r.warnings.empty()) {
        out << "\nWarnings:\n";
        for (const std::string& w : r.warnings) out << "  ! " << w << "\n";
    }
    // Index notes (read in full, but how), then what could not be read: the text ends with it.
    auto list = [&](bool unreadable) {
        std::size_t shown = 0, total = 0;
        for (std::size_t i = 0; i < r.fileWarnings.size(); ++i) {
            const bool lost = i < r.fileWarningUnreadable.size() && r.fileWarningUnreadable[i];
            if (lost != unreadable) continue;
            if (++total > 10) continue;
            ++shown;
            out << "  ! " << (r.fileWarnings[i].first.empty() ? std::string("(dump)") : r.fileWarnings[i].first) << ": "
                << r.fileWarnings[i].second << "\n";
        }
        if (total > shown) out << "  ... and " << total - shown << " more (analyze --json lists them all)\n";
    };
    const auto lostCount =
        std::size_t(std::count(r.fileWarningUnreadable.begin(), r.fileWarningUnreadable.end(), true));
    if (r.fileWarnings.size() > lostCount) {
        out << "\nIndex notes:\n";
        list(false);
    }
    if (r.unreadableFiles || lostCount) {
        out << "\n" << r.unreadableFiles << " file(s) could not be read:\n";
        list(true);
    }
    return out.str();
}

}  // namespace dl
