#include "core/analysis/overflow_analyzer.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <string_view>

#include "core/analysis/analysis_context.h"
#include "core/analysis/causal_order.h"
#include "core/analysis/chain_builder.h"
#include "core/analysis/op_replay.h"
#include "core/analysis/overflow_steps.h"
#include "core/analysis/rank_dataflow.h"
#include "core/analysis/separate_runs.h"
#include "core/analysis/stage_map.h"
#include "core/analysis/tensor_anomaly.h"
#include "core/util/half.h"
#include "core/util/parallel_for.h"

namespace dl {

using namespace overflow_detail;

AnalysisResult analyze(const DumpIndex& index, const AnalysisOptions& opt) {
    const auto cancelled = [&] {
        AnalysisResult r;
        r.cancelled = true;
        r.nearLimitThreshold = opt.nearLimitThreshold;
        return r;
    };
    AnalysisResult res;
    res.nearLimitThreshold = opt.nearLimitThreshold;
    AnalysisContext ctx(index);
    ctx.comm = findCommOps(index);
    // The tensors' classification and the stage map with the Send/Receive matching need the comm
    // ops but not each other: both at once (each also runs on all cores inside). The stage map's
    // warnings follow the classification's, as when one ran after the other.
    bool classified = false;
    std::vector<std::string> stageWarnings;
    parallelFor(0, 2, [&](int task) {
        if (task == 0) {
            classified = classifyAll(ctx, opt, res);
            if (classified) buildRanges(ctx);
            return;
        }
        ctx.stages = inferStageMap(index, ctx.comm, opt.stages, stageWarnings);
        if (opt.stop.stop_requested()) return;  // a stop does not wait for the whole match
        ctx.match = matchCommunication(index, ctx.comm, ctx.stages);
    });
    if (!classified) return cancelled();
    res.separateRuns = separateRuns(index);
    if (!res.separateRuns.empty()) res.warnings.push_back(separateRunsWarning(res.separateRuns));
    for (std::string& w : stageWarnings) res.warnings.push_back(std::move(w));
    describeParallelism(index, ctx.match, ctx.stages);
    res.stages = ctx.stages;
    describeStages(ctx.stages, res);
    if (std::string order = orderSourceEvidence(index.ranks); !order.empty()) res.evidence.push_back(std::move(order));
    res.commPairs = ctx.match.pairs.size();
    res.unmatchedReceives = ctx.match.unmatchedReceives.size();
    res.ambiguousPairs = ctx.match.ambiguous;
    res.pairsStatisticsDiffer = ctx.match.statisticsDiffer;
    res.pairs.reserve(ctx.match.pairs.size());
    for (const CommPair& p : ctx.match.pairs) {
        const char* ev = pairEvidenceName(p.evidence);
        ++res.pairsByEvidence[ev];
        res.pairs.push_back({p.send, p.recv, ev});
    }
    if (ctx.match.ambiguous)
        res.warnings.push_back(
            std::to_string(ctx.match.ambiguous) +
            " Receive(s) could have been fed by more than one Send "
            "(neither statistics, channel order nor the stage map decide): each paired with the first "
            "possible Send and marked ambiguous (counts.ambiguous_pairs)");
    if (ctx.match.statisticsDiffer)
        res.warnings.push_back(
            std::to_string(ctx.match.statisticsDiffer) +
            " Send/Receive pair(s) tied by channel order carry "
            "different statistics at their two ends (counts.pairs_statistics_differ): a row is missing "
            "or misread, or the pairing is off there");
    if (opt.stop.stop_requested()) return cancelled();
    estimateClockOffsets(ctx, res.evidence);
    res.clockOffsetUs = ctx.clockOffsetUs;
    res.clockUncertaintyUs = ctx.clockUncertaintyUs;
    res.clocksAligned = ctx.clocksAligned;
    iterationStatuses(ctx, res);
    for (const IterationStatus& s : res.iterations)
        if (s.overflow && !res.firstBadIteration) res.firstBadIteration = s.iteration;
    judgePersistence(index, res);

    std::optional<std::uint32_t> target = res.firstBadIteration;
    if (opt.iteration) {
        target = *opt.iteration;
        auto it =
            std::find_if(res.iterations.begin(), res.iterations.end(), [&](auto& s) { return s.iteration == *target; });
        if (it == res.iterations.end())
            res.warnings.push_back("iteration " + std::to_string(*target) + " is not in the dump");
        else if (!it->overflow)
            target.reset();
    }
    judgeReadability(index, res);
    if (!target) {
        if (res.noData)
            res.evidence.push_back("nothing readable: " + std::to_string(res.tensorsExamined) +
                                   " tensor(s) listed, none with "
                                   "statistics or data, no Opdebug record; " +
                                   std::to_string(res.unreadableFiles) + " file(s) could not be read");
        else
            res.evidence.push_back(std::to_string(res.readableTensors) +
                                   " readable tensors checked: no Inf/NaN, no op produced a "
                                   "value pinned at +/-65504, no Opdebug overflow record");
        return res;
    }
    // Set here (returned above otherwise).
    const std::uint32_t analysed = target.value_or(0);
    res.evidence.push_back("first overflowing iteration: " + std::to_string(*res.firstBadIteration) +
                           (opt.iteration ? "; analysing iteration " + std::to_string(analysed) + " as asked" : ""));
    const std::uint32_t origin = pickOrigin(ctx, analysed, res);
    if (origin == kNoIndex) return res;
    res.overflow = true;
    OverflowPoint p = ctx.point(origin);
    p.peerRanks = tensorParallelPeers(ctx, origin);
    res.firstOverflow = p;
    res.chainOrderedByClock = chainOrderedByClock(ctx);
    res.chainOrderedByFlow = chainOrderedByFlow(ctx);
    res.chain = buildChain(ctx, p, res.chainOrderedByClock);
    {
        std::map<std::uint32_t, const char*> evidenceOfRecv;
        for (const CommPair& cp : ctx.match.pairs) evidenceOfRecv[cp.recv] = pairEvidenceName(cp.evidence);
        for (ChainStep& s : res.chain)
            if (s.via == ChainVia::SendReceive)
                if (auto e = evidenceOfRecv.find(s.at.op); e != evidenceOfRecv.end()) s.pairEvidence = e->second;
    }
    if (opt.readGraphIr) {
        std::optional<RankDataflow> own;
        explainByDataflow(index, opt.dataflow ? *opt.dataflow : own.emplace(index), res);
    }
    describeChain(res);
    if (opt.stop.stop_requested()) return cancelled();
    if (opt.replay) {
        ReplayOptions ro;
        ro.saturatingFp16 = p.kind == AnomalyKind::Saturated;
        res.replay = replayFromIndex(index, origin, p.tensor, ro);
    }
    const bool confirmed = res.replay && res.replay->available && res.replay->reproducesOverflow;
    const std::string originType = index.strings.str(index.ops[origin].type);
    if (replayKernelName(originType) == "Cast" && res.replay && res.replay->available) {
        // Two ways a Cast is the first inf without being the cause: its dumped input cannot have made
        // the inf (MindSpore CPU's mislabelled float32 buffer), or its wider input was already past
        // 65504 (the Cast only rounds). Either way the op to change is the one that made the input.
        double inMax = 0;
        const OpRecord& c = index.ops[origin];
        for (std::uint32_t k = 0; k < c.tensorCount; ++k) {
            const TensorRecord& t = index.tensors[c.firstTensor + k];
            if (t.io == Io::Input) {
                const TensorAnomaly a = classifyTensor(index, t);
                if (std::isfinite(a.maxAbs)) inMax = std::max(inMax, a.maxAbs);
            }
        }
        const bool inputPast = inMax > kFp16Max;
        if (!confirmed || inputPast) {
            res.valueMadeBy = castValueMaker(ctx, origin);
            if (res.valueMadeBy) {
                const OpRecord& m = index.ops[*res.valueMadeBy];
                const std::string maker = index.strings.str(m.type) + " " + index.strings.str(m.name);
                res.evidence.push_back(
                    inputPast ? "the Cast's input, the dumped output of " + maker +
                            ", is already past 65504 (max |x| " + std::to_string(inMax) +
                            "): the Cast only rounds it to fp16, so " + maker + " made the value"
                              : "the Cast's dumped input is byte for byte the dumped output of " + maker +
                            ", and replaying the Cast on it gives no inf: that file is not the value the Cast read "
                            "(MindSpore CPU ran " +
                            index.strings.str(m.type) +
                            " in float32 between Casts it inserted and wrote its output labelled fp16), so " + maker +
                            " made the value");
                res.replay->recommendation = "keep the output of " + maker +
                    " out of fp16: it is computed in a wider type "
                    "and only the Cast after it rounds it to fp16, where it overflows; run " +
                    index.strings.str(m.type) +
                    " and its consumers in float32 or bfloat16, or "
                    "bound its input (the Cast itself is not the cause)";
                res.replay->recommendationFromReplay = false;
            } else if (inputPast) {
                res.replay->recommendation = "the Cast's input is already past 65504 (max |x| " +
                    std::to_string(inMax) +
                    ") before it is rounded to fp16: change the op that produced that input "
                    "(not found among the dumped outputs), not the Cast";
                res.replay->recommendationFromReplay = false;
            }
        }
    }
    if (ctx.ops[origin].weak && !ctx.ops[origin].opdebug)
        res.warnings.push_back(
            std::string("the origin shows a single value at exactly 65504, which can be a legitimate "
                        "value; ") +
            (confirmed ? "the fp16 replay confirms the overflow" : "nothing else confirms the overflow"));
    return res;
}

}  // namespace dl
