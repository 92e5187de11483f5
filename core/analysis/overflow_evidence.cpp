// The analysis' sentences on how the chain was ordered (by message, data flow or clock) and what
// the stage map found: written once the chain is built, apart from the steps that decide it.
#include <map>
#include <string>

#include "core/analysis/overflow_steps.h"

namespace dl::overflow_detail {

namespace {

// Times on the reference clock are evidence only where a message links both ranks' clocks to it.
void describeAlignedTimes(AnalysisResult& res) {
    for (const ChainStep& s : res.chain) {
        if (s.causedBy < 0 || !res.chainOrderedByClock) continue;
        const ChainStep& p = res.chain[std::size_t(s.causedBy)];
        if (s.clockAligned && p.clockAligned && s.alignedUs < p.alignedUs) {
            res.warnings.push_back("the clock-aligned time of rank " + std::to_string(s.at.rank) + "'s step is " +
                                   std::to_string(p.alignedUs - s.alignedUs) +
                                   " us before the step it came from: "
                                   "the clock offset estimate is uncertain");
            break;
        }
    }
}
}  // namespace

void describeChain(AnalysisResult& res) {
    std::map<ChainVia, std::size_t> vias;
    std::vector<std::string> clockOnly;
    for (const ChainStep& s : res.chain) {
        ++vias[s.via];
        if (s.via == ChainVia::ClockOnly)
            clockOnly.push_back("rank " + std::to_string(s.at.rank) + " (iteration " + std::to_string(s.at.iteration) +
                                ")");
    }
    if (res.chain.size() > 1) {
        std::string e = "chain in causal order (each step after the step it came from):";
        for (const auto& [via, n] : vias)
            if (via != ChainVia::None) e += " " + std::to_string(n) + " " + chainViaName(via) + ";";
        e += res.chainOrderedByFlow ? " steps of ranks no message links ordered by the pipeline's data flow (stage map)"
            : res.chainOrderedByClock ? " steps not linked by a message ordered by clock-aligned time"
                                      : " no timestamps: steps not linked by a message ordered by execution order";
        res.evidence.push_back(e);
    }
    if (!clockOnly.empty()) {
        std::string which;
        for (const std::string& c : clockOnly) which += " " + c + ",";
        which.pop_back();
        const std::string e = "no Send/Receive, collective or weight-update link explains the anomaly of" + which + ";";
        if (res.chainOrderedByFlow) {
            // No message relates these ranks' clocks, so time across them is no evidence; the
            // stage map says where the damage goes: the forward from the stage whose weights went
            // bad up to the last stage, then the backward down to stage 0.
            res.evidence.push_back(e + " placed by the pipeline's data flow from the stage map (" + res.stages.source +
                                   "); raw clocks only break ties inside one stage");
            res.warnings.push_back("the chain's order of" + which + " is inferred from the pipeline stages (" +
                                   res.stages.source +
                                   "), not observed: no Send/Receive or collective in the dump links "
                                   "these ranks, and their raw clocks are not comparable across machines");
        } else {
            res.evidence.push_back(e +
                                   (!res.chainOrderedByClock ? " placed by execution order only"
                                        : res.clocksAligned  ? " placed by clock-aligned time only"
                                                             : " placed by raw timestamps only"));
            // Nothing in the dump relates the ranks' clocks: unsynchronised clocks may put an effect
            // before its cause, so this part of the order is not evidence.
            if (res.chainOrderedByClock && !res.clocksAligned)
                res.warnings.push_back(
                    "the chain's order of" + which +
                    " comes from raw timestamps of unsynchronised rank clocks (no Send/Receive or collective "
                    "in the dump to align them): it may not be the order the damage travelled");
        }
    }
    describeAlignedTimes(res);
}

void describeStages(const StageMap& m, AnalysisResult& res) {
    if (m.stageCount == 0) return;
    std::string s = "pipeline stages from " + m.source + ": " + std::to_string(m.stageCount) + " stage(s)" +
        (m.confident ? "" : " (a guess)");
    if (!m.tpGroups.empty())
        s += "; " + std::to_string(m.tpGroups.size()) + " tensor-parallel group(s) of " +
            std::to_string(m.tpGroups.front().size()) + " (collectives within a stage)";
    if (m.replicas.size() > 1) s += "; " + std::to_string(m.replicas.size()) + " data-parallel pipelines";
    res.evidence.push_back(s);
}

}  // namespace dl::overflow_detail
