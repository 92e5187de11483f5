#include "core/report/report_content.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>

#include "core/analysis/tensor_anomaly.h"
#include "core/formats/mindspore/graph_ir.h"
#include "core/index/index_summary.h"
#include "core/index/run_framework.h"
#include "core/query/stat_figures.h"
#include "core/util/half.h"

namespace dl {

namespace {

std::string str(const DumpIndex& ix, StrId id) { return ix.strings.str(id); }

std::string stageText(int stage) { return stage >= 0 ? std::to_string(stage) : "?"; }

std::string percent(double fraction) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f%%", fraction * 100);
    return buf;
}

std::string rankList(const std::vector<std::uint32_t>& ranks) {
    std::string s;
    for (std::uint32_t r : ranks) s += (s.empty() ? "" : ", ") + std::to_string(r);
    return s;
}

std::string dtypeText(const TensorRecord& t) {
    std::string s(dtypeName(t.dtype));
    if (t.origDtype != DType::Unknown && t.origDtype != t.dtype)
        s += " (was " + std::string(dtypeName(t.origDtype)) + ")";
    return s;
}

std::string maxAbsText(const TensorStats& st) {
    std::string s = st.has(stat::MaxAbs) ? reportNumber(st.maxAbs) : "-";
    if (st.infCount()) s += " + " + nonFiniteCountText(st, st.infCount()) + " inf";
    if (st.nanCount) s += " + " + nonFiniteCountText(st, st.nanCount) + " nan";
    return s;
}

// Source lines from rank_N/graphs/*.ir of the origin's rank (MindSpore writes them per rank).
std::vector<std::string> sourceLinesFor(const DumpIndex& ix, const OpRecord& o) {
    const std::string scope = str(ix, o.scope).empty() ? str(ix, o.name) : str(ix, o.scope);
    for (const RankInfo& r : ix.ranks) {
        if (r.rank != o.rank) continue;
        std::string dir = ix.root;
        if (!r.folder.empty()) dir += "/" + r.folder;
        return findSourceLines(dir + "/graphs", scope);
    }
    return findSourceLines(ix.root + "/graphs", scope);
}

void addOrigin(const DumpIndex& ix, const AnalysisResult& r, const ReportOptions& opt, ReportContent& c) {
    const OverflowPoint& p = *r.firstOverflow;
    const OpRecord& o = ix.ops[p.op];
    c.originOp = p.op;
    c.originTensor = p.tensor;
    c.iteration = p.iteration;
    const std::string scope = str(ix, o.scope);
    c.origin = {
        {"Op type", str(ix, o.type)},
        {"Op name", str(ix, o.name)},
        {"Full scope", scope.empty() ? "(not in the dump: no execution_order or mapping file)" : scope},
        {"Rank",
         std::to_string(p.rank) +
             (p.peerRanks.empty() ? "" : " (tensor-parallel peers " + rankList(p.peerRanks) + " show the same)")},
        {"Pipeline stage",
         stageText(p.stage) + (r.stages.confident || p.stage < 0 ? "" : " (inferred from " + r.stages.source + ")")},
        {"Iteration", std::to_string(p.iteration)},
        {"Kind",
         std::string(anomalyKindName(p.kind)) + (p.opdebugStatus.empty() ? "" : "; Opdebug: " + p.opdebugStatus)}};
    if (p.tensor != kNoIndex) {
        const TensorRecord& t = ix.tensors[p.tensor];
        c.origin.push_back(
            {"Tensor", tensorLabel(ix, t) + ", " + dtypeText(t) + ", max|x| " + maxAbsText(ix.stats(t))});
    }
    if (p.timestampUs) c.origin.push_back({"Timestamp", std::to_string(p.timestampUs) + " us (rank clock)"});
    if (opt.readGraphIr) c.sourceLines = sourceLinesFor(ix, o);
    c.origin.push_back(
        {"Source", c.sourceLines.empty() ? "not available (no graphs/*.ir naming this op)" : c.sourceLines.front()});
    if (r.firstBadIteration)
        c.origin.push_back(
            {"Persistence",
             std::string(persistenceName(r.persistence)) + " from iteration " + std::to_string(*r.firstBadIteration)});
}

void addRun(const DumpIndex& ix, const AnalysisResult& r, ReportContent& c) {
    std::set<std::string> formats;
    std::vector<std::uint32_t> ranks;
    for (const RankInfo& ri : ix.ranks) {
        formats.insert(std::string(dumpFormatName(ri.format)));
        ranks.push_back(ri.rank);
    }
    std::string fmt;
    for (const auto& f : formats) fmt += (fmt.empty() ? "" : ", ") + f;
    const auto its = ix.iterations();
    std::string itText = its.empty()
        ? "none"
        : std::to_string(its.size()) + " (" + std::to_string(its.front()) + " to " + std::to_string(its.back()) + ")";
    std::string stages = r.stages.stageCount > 0
        ? std::to_string(r.stages.stageCount) + " (" + r.stages.source + (r.stages.confident ? "" : ", a guess") + ")"
        : "unknown";
    const std::string dumpMode = ix.meta.dumpMode.empty() ? "unknown" : ix.meta.dumpMode;
    c.run = {{"Dump root", ix.root},
             {"Framework", runFrameworkText(runFramework(ix))},
             {"Dump format", fmt.empty() ? "unknown" : fmt},
             {"Device", ix.meta.deviceTarget.empty() ? "unknown" : ix.meta.deviceTarget},
             {"Ranks", std::to_string(ranks.size()) + (ranks.empty() ? "" : " (" + rankList(ranks) + ")")},
             {"Pipeline stages", stages},
             {"Iterations", itText},
             {"Dump mode",
              dumpMode + (ix.meta.opDebugMode >= 0 ? ", op_debug_mode " + std::to_string(ix.meta.opDebugMode) : "")},
             {"Ops / tensors", std::to_string(ix.ops.size()) + " / " + std::to_string(ix.tensors.size())}};
}

void addChain(const DumpIndex& ix, const AnalysisResult& r, ReportContent& c) {
    c.chainTable.columns = {"#", "Role", "Op", "Rank", "Stage", "Iter.", "From", "Note"};
    for (std::size_t i = 0; i < r.chain.size(); ++i) {
        const ChainStep& s = r.chain[i];
        const OpRecord& o = ix.ops[s.at.op];
        ReportChainStep step{
            s.at.op,   chainRoleName(s.role), str(ix, o.type), str(ix, o.name), anomalyKindName(s.at.kind), s.note,
            s.at.rank, s.at.iteration};
        step.causedBy = s.causedBy;
        step.via = s.causedBy < 0 ? "" : chainViaName(s.via);
        std::string rank = std::to_string(step.rank);
        for (std::uint32_t p : s.at.peerRanks) rank += "," + std::to_string(p);
        c.chainTable.rows.push_back(
            {std::to_string(i + 1), step.role, step.opName, rank, stageText(s.at.stage), std::to_string(step.iteration),
             s.causedBy < 0 ? "-" : std::to_string(s.causedBy + 1) + " " + step.via, step.note});
        c.chainTable.emphasis.push_back(s.role == ChainRole::Origin);
        if (c.chain.empty() || c.chain.back().stage != s.at.stage || c.chain.back().iteration != s.at.iteration)
            c.chain.push_back({s.at.stage, s.at.iteration, step.via, {}});
        c.chain.back().steps.push_back(std::move(step));
    }
}

// The origin's neighbours in execution order on its rank, graph and iteration.
void addNeighbours(const DumpIndex& ix, const ReportOptions& opt, ReportContent& c) {
    const OpRecord& origin = ix.ops[c.originOp];
    std::size_t a = c.originOp, b = c.originOp;
    const auto same = [&](std::size_t i) {
        const OpRecord& o = ix.ops[i];
        return o.rank == origin.rank && o.graph == origin.graph && o.iteration == origin.iteration;
    };
    while (a > 0 && same(a - 1) && c.originOp - (a - 1) <= opt.timelineNeighbours) --a;
    while (b + 1 < ix.ops.size() && same(b + 1) && (b + 1) - c.originOp <= opt.timelineNeighbours) ++b;
    c.timelineNeighbours.columns = {"Pos.", "Op", "Type", "Worst max|x|", "State"};
    for (std::size_t i = a; i <= b; ++i) {
        const OpRecord& o = ix.ops[i];
        double worst = -1;
        AnomalyKind kind = AnomalyKind::None;
        for (std::uint32_t t = o.firstTensor; t < o.firstTensor + o.tensorCount; ++t) {
            const TensorAnomaly an = classifyTensor(ix, ix.tensors[t]);
            if (std::isfinite(an.maxAbs)) worst = std::max(worst, an.maxAbs);
            kind = std::max(kind, an.kind);
        }
        std::string state = kind == AnomalyKind::None ? (worst >= 0 ? percent(worst / kFp16Max) + " of fp16 max" : "-")
                                                      : anomalyKindName(kind);
        if (i == c.originOp) state = "ORIGIN, " + state;
        c.timelineNeighbours.rows.push_back({std::to_string(o.execPos), str(ix, o.name), str(ix, o.type),
                                             worst >= 0 ? reportNumber(worst) : "-", state});
        c.timelineNeighbours.emphasis.push_back(i == c.originOp);
    }
}

void addHistogramTensors(const DumpIndex& ix, ReportContent& c) {
    const OpRecord& o = ix.ops[c.originOp];
    for (std::uint32_t t = o.firstTensor; t < o.firstTensor + o.tensorCount; ++t) {
        const TensorRecord& tr = ix.tensors[t];
        const TensorAnomaly an = classifyTensor(ix, tr);
        c.histogramTensors.push_back(
            {t, tensorLabel(ix, tr), dtypeText(tr), std::isfinite(an.maxAbs) ? an.maxAbs : -1, an.bad()});
    }
}

void addReplay(const ReplayResult& rp, ReportContent& c) {
    c.recommendation = rp.recommendation;
    c.recommendationFromReplay = rp.recommendationFromReplay;
    c.replayNotes = rp.notes;
    if (!rp.available) {
        c.replayStatus = "Replay unavailable: " + rp.unavailableReason;
        return;
    }
    c.replay.columns = {"Precision", "max|y| exact", "max|y| stored", "Overflow", "Rel. error vs fp32"};
    for (const ReplayPrecisionResult& p : rp.results) {
        c.replay.rows.push_back({std::string(dtypeName(p.dtype)), reportNumber(p.maxAbsUnrounded),
                                 std::isnan(p.maxAbs) ? "inf/nan" : reportNumber(p.maxAbs), p.overflow ? "YES" : "no",
                                 p.relErrVsFp32 >= 0 ? reportNumber(p.relErrVsFp32) : "-"});
        c.replay.emphasis.push_back(p.overflow);
    }
    c.replayStatus = "The fp16 replay of " + rp.opType +
        (rp.reproducesOverflow ? " reproduces" : " does NOT reproduce") +
        " the overflow (fp16 mode: " + (rp.saturatingFp16 ? "saturation, clamp to 65504" : "IEEE inf/nan") + ")";
    if (rp.maxDiffVsDump >= 0)
        c.replayStatus += "; max |replay - dump| on finite values " + reportNumber(rp.maxDiffVsDump);
    c.replayStatus += ".";
}

void addNearLimit(const DumpIndex& ix, const AnalysisResult& r, const ReportOptions& opt, ReportContent& c) {
    c.nearLimitTotal = r.nearLimitTotal;
    c.nearLimitThreshold = r.nearLimitThreshold;
    // The share of 65504 (NearLimitEntry::fp16MaxShare) and the headroom, the room left.
    c.nearLimit.columns = {"Op", "Type", "Tensor", "max|x|", "% of fp16 max", "Headroom", "Rank", "Iter."};
    for (const NearLimitEntry& e : r.nearLimit) {
        if (c.nearLimit.rows.size() >= opt.nearLimitRows) break;
        const OpRecord& o = ix.ops[e.op];
        c.nearLimit.rows.push_back({str(ix, o.name), str(ix, o.type),
                                    tensorLabel(ix, ix.tensors[e.tensor]) + (e.castToFp16 ? " (cast to fp16)" : ""),
                                    reportNumber(e.maxAbs), percent(e.fp16MaxShare), percent(1 - e.fp16MaxShare),
                                    std::to_string(o.rank), std::to_string(o.iteration)});
        c.nearLimit.emphasis.push_back(e.fp16MaxShare >= 0.9);
    }
}

// Clean run: the largest finite fp16 value anywhere, and how far it is from 65504.
void addHeadroom(const DumpIndex& ix, ReportContent& c) {
    double best = -1;
    std::uint32_t at = kNoIndex;
    std::uint64_t fp16 = 0;
    for (std::uint32_t t = 0; t < ix.tensors.size(); ++t) {
        if (!isFp16Like(ix.tensors[t])) continue;
        ++fp16;
        const TensorAnomaly an = classifyTensor(ix, ix.tensors[t]);
        if (std::isfinite(an.maxAbs) && an.maxAbs > best) {
            best = an.maxAbs;
            at = t;
        }
    }
    c.headroom.push_back({"fp16 tensors", std::to_string(fp16)});
    if (at == kNoIndex) {
        c.headroom.push_back({"Largest |x|", "unknown (no fp16 statistics in the dump)"});
        return;
    }
    const TensorRecord& t = ix.tensors[at];
    const OpRecord& o = ix.ops[t.op];
    c.headroom.push_back(
        {"Largest |x|", reportNumber(best) + " (" + percent(best / kFp16Max) + " of the fp16 max 65504)"});
    c.headroom.push_back({"Headroom",
                          percent(1 - best / kFp16Max) + " of 65504 left (x" + reportNumber(kFp16Max / best) +
                              " before fp16 overflows)"});
    c.headroom.push_back({"Where",
                          str(ix, o.name) + " " + tensorLabel(ix, t) + ", rank " + std::to_string(o.rank) +
                              ", iteration " + std::to_string(o.iteration)});
}

void addIterations(const AnalysisResult& r, ReportContent& c) {
    c.iterations.columns = {"Iteration", "Status", "Anomalous ops", "Ranks"};
    for (const IterationStatus& s : r.iterations) {
        c.iterations.rows.push_back({std::to_string(s.iteration), s.overflow ? "overflow" : "ok",
                                     std::to_string(s.anomalousOps), rankList(s.ranks)});
        c.iterations.emphasis.push_back(r.firstBadIteration && s.iteration == *r.firstBadIteration);
    }
}

void addVerdict(const DumpIndex& ix, const AnalysisResult& r, ReportContent& c) {
    c.overflow = r.overflow;
    const std::string counts = std::to_string(r.tensorsExamined) + " tensors examined, " +
        std::to_string(r.anomalousTensors) + " anomalous in " + std::to_string(r.anomalousOps) + " ops.";
    if (r.noData) {
        c.verdict = "No data: nothing readable in " + ix.root + ".";
        c.summary = {counts, std::to_string(r.unreadableFiles) + " file(s) could not be read; see the appendix."};
        return;
    }
    if (!r.overflow && r.unreadableFiles) {
        c.verdict = "Clean among " + std::to_string(r.readableTensors) + " readable tensors; " +
            std::to_string(r.unreadableFiles) + " file(s) could not be read.";
        c.summary = {counts,
                     "No readable tensor holds Inf, NaN or values saturated at 65504, and no Opdebug record reports "
                     "an overflow. The files that could not be read are listed in the appendix."};
        return;
    }
    if (!r.overflow) {
        c.verdict = "Clean run: no fp16 overflow found.";
        c.summary = {
            counts,
            "No tensor holds Inf, NaN or values saturated at 65504, and no Opdebug record reports an overflow."};
        return;
    }
    if (!r.firstOverflow) {
        c.verdict = "Overflow detected, origin not located.";
        c.summary = {counts};
        return;
    }
    const OverflowPoint& p = *r.firstOverflow;
    const OpRecord& o = ix.ops[p.op];
    c.verdict = "Overflow: first in " + str(ix, o.type) + " (" + str(ix, o.name) + ") on rank " +
        std::to_string(p.rank) + ", stage " + stageText(p.stage) + ", iteration " + std::to_string(p.iteration) + ".";
    c.summary = {counts};
    if (r.valueMadeBy)  // the Cast is where the inf shows, not what made it (a MindSpore-inserted Cast)
        c.summary.push_back("The value was made by " + str(ix, ix.ops[*r.valueMadeBy].type) + " (" +
                            str(ix, ix.ops[*r.valueMadeBy].name) + "); the " + str(ix, o.type) +
                            " after it only rounded it to fp16.");
    std::set<int> stages;
    for (const ChainStep& s : r.chain) stages.insert(s.at.stage);
    if (r.chain.size() > 1)
        c.summary.push_back("The damage propagates through " + std::to_string(r.chain.size()) + " chain steps across " +
                            std::to_string(stages.size()) + " pipeline stage(s).");
    if (!r.replay || r.replay->recommendation.empty()) return;
    c.summary.push_back("Recommendation: " + r.replay->recommendation);
}

}  // namespace

std::string reportNumber(double v) {
    if (std::isnan(v)) return "nan";
    if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.6g", v);
    return buf;
}

ReportContent buildReportContent(const DumpIndex& ix, const AnalysisResult& r, const ReportOptions& opt) {
    ReportContent c;
    addVerdict(ix, r, c);
    addRun(ix, r, c);
    const bool origin = r.firstOverflow && r.firstOverflow->op < ix.ops.size();
    if (origin) {
        addOrigin(ix, r, opt, c);
        addNeighbours(ix, opt, c);
        addHistogramTensors(ix, c);
    } else {
        addHeadroom(ix, c);
        if (r.firstBadIteration) c.iteration = *r.firstBadIteration;
    }
    addChain(ix, r, c);
    if (r.replay) addReplay(*r.replay, c);
    addIterations(r, c);
    addNearLimit(ix, r, opt, c);
    c.evidence = r.evidence;
    c.warningsTotal = r.warnings.size();
    for (const std::string& w : r.warnings)
        if (c.warnings.size() < opt.warningRows) c.warnings.push_back(w);
    // The appendix holds what could not be read; the index's notes on how it read the rest (ops
    // ordered by file name, ...) go with the warnings.
    for (std::size_t i = 0; i < r.fileWarnings.size(); ++i) {
        const std::string line = r.fileWarnings[i].first + ": " + r.fileWarnings[i].second;
        if (i < r.fileWarningUnreadable.size() && r.fileWarningUnreadable[i]) {
            ++c.unreadableTotal;
            if (c.unreadable.size() < opt.unreadableRows) c.unreadable.push_back(line);
        } else {
            ++c.warningsTotal;
            if (c.warnings.size() < opt.warningRows) c.warnings.push_back(line);
        }
    }
    return c;
}

}  // namespace dl
