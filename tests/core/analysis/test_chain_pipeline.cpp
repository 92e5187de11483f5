// The chain at production shape (issue 24): 1F1B, GPipe and interleaved pipelines with 1 to 203
// micro-batches, PP x TP x DP, statistics-only MindSpore 2.4 dumps without stages in the rank
// table, clocks off by up to +/-1 s, the job killed during its last iteration. Everything the
// analysis says is checked against the simulation's event log (core/demo/pipeline_sim.h): the
// stage map, the TP groups and replicas, every Send/Receive pair, the ranks the damage reached
// in order and by what, each step after the step it came from, and the clock offsets within
// their stated uncertainty. Each case builds its dump once (one test per case: ctest runs each
// test in its own process).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <sstream>

#include "core/analysis/analysis_json.h"
#include "core/analysis/overflow_analyzer.h"
#include "core/demo/pipeline_scenario.h"
#include "core/index/dump_indexer.h"
#include "tests/core/temp_dir.h"

using namespace dl;
using namespace dl::demo;

namespace {

struct Case {
    const char* name;
    int pp, tp, dp, layers, microBatches;
    PipelineSchedule schedule;
    std::int64_t maxOffsetUs;
    bool tensors = false;
    bool killed = true;
    bool executionOrder = true;  // false: only the flattened names tell forward from backward
};

// The table rows (4, 7, 20, 203 micro-batches on PP4 x TP2, 1F1B; fewer layers than its
// 10 where the row count would slow the suite: the schedule, not the depth, is what broke), then
// the other schedules and shapes.
const std::vector<Case>& cases() {
    static const std::vector<Case> c = {
        {"issue_pp4_tp2_mb4", 4, 2, 1, 10, 4, PipelineSchedule::OneFOneB, 200000},
        {"issue_pp4_tp2_mb7_no_execution_order", 4, 2, 1, 6, 7, PipelineSchedule::OneFOneB, 200000, false, true, false},
        {"issue_pp4_tp2_mb20", 4, 2, 1, 3, 20, PipelineSchedule::OneFOneB, 200000},
        {"issue_pp4_tp2_mb203_no_execution_order", 4, 2, 1, 1, 203, PipelineSchedule::OneFOneB, 200000, false, true,
         false},
        {"gpipe_pp2_tp4_mb20", 2, 4, 1, 2, 20, PipelineSchedule::GPipe, 1000000},
        {"interleaved_pp4_tp1_mb8", 4, 1, 1, 2, 8, PipelineSchedule::Interleaved, 1000000},
        {"interleaved_pp4_tp2_mb20", 4, 2, 1, 1, 20, PipelineSchedule::Interleaved, 500000},
        {"pp4_tp2_dp2_mb4", 4, 2, 2, 2, 4, PipelineSchedule::OneFOneB, 1000000},
        {"pp8_tp4_dp2_mb4_64_ranks", 8, 4, 2, 1, 4, PipelineSchedule::OneFOneB, 1000000},
        {"pp2_tp2_mb1_tensors", 2, 2, 1, 2, 1, PipelineSchedule::OneFOneB, 1000000, true, false},
    };
    return c;
}

std::string flat(std::string s) {
    std::replace(s.begin(), s.end(), '/', '_');
    return s;
}

class PipelineChain : public ::testing::TestWithParam<std::size_t> {};

}  // namespace

TEST_P(PipelineChain, MatchesTheEventLog) {
    const Case& c = cases()[GetParam()];
    dltest::TempDir dir("dumplens_pipeline_");
    PipelineSpec spec;
    spec.pipelineStages = c.pp;
    spec.tensorParallel = c.tp;
    spec.dataParallel = c.dp;
    spec.layersPerStage = c.layers;
    spec.microBatches = c.microBatches;
    spec.schedule = c.schedule;
    spec.originStage = std::min(2, c.pp - 1);
    spec.originLane = c.tp - 1;
    spec.killedIteration = c.killed ? 3 : -1;
    ClusterScenarioOptions o;
    o.stagesInRankTable = false;  // MindSpore's own rank table: the stages come from the dump
    o.writeTensors = c.tensors;
    o.executionOrder = c.executionOrder;
    o.rankClockOffsetUs = pipelineClockOffsets(c.pp * c.tp * c.dp, c.maxOffsetUs);
    ClusterScenarioTruth truth;
    std::string error;
    const std::string root = (dir.path / c.name).string();
    ASSERT_TRUE(writePipelineRun(root, spec, o, truth, error)) << error;
    DumpIndex index;
    IndexOptions io;
    io.useCache = false;
    IndexReport rep;
    ASSERT_TRUE(indexDump(root, io, index, rep, error)) << error;
    const AnalysisResult r = analyze(index);
    const nlohmann::json j = toJson(index, r);
    const std::string text = toText(index, r);
    SCOPED_TRACE(c.name);

    // The origin.
    ASSERT_TRUE(r.firstOverflow) << text;
    EXPECT_EQ(int(r.firstOverflow->rank), truth.origin.rank);
    EXPECT_EQ(int(r.firstOverflow->iteration), truth.origin.iteration);
    EXPECT_EQ(index.strings.str(index.ops[r.firstOverflow->op].name), flat(truth.origin.fullName));

    // The stage map, from the pairs, never a guess; TP groups and replicas.
    EXPECT_TRUE(r.stages.confident) << r.stages.source;
    EXPECT_EQ(r.stages.source.find("guess"), std::string::npos) << r.stages.source;
    std::map<std::uint32_t, int> want;
    for (int rk = 0; rk < truth.ranks; ++rk) want[std::uint32_t(rk)] = truth.stageOfRank[std::size_t(rk)];
    EXPECT_EQ(r.stages.stageOfRank, want) << j["stages"].dump();
    EXPECT_EQ(r.stages.stageCount, c.pp);
    if (c.tp > 1) {
        std::vector<std::vector<std::uint32_t>> groups;
        for (const auto& g : truth.tpGroups) groups.emplace_back(g.begin(), g.end());
        std::sort(groups.begin(), groups.end());
        EXPECT_EQ(r.stages.tpGroups, groups) << j["stages"].dump();
    }
    EXPECT_EQ(int(r.stages.replicas.size()), c.dp) << j["stages"].dump();

    // Every pair of the event log, and nothing else; no ambiguity, no contradiction.
    std::map<std::tuple<int, int, std::string>, std::pair<int, std::string>> got;
    for (const AnalysisResult::Pair& p : r.pairs) {
        const OpRecord &s = index.ops[p.send], &v = index.ops[p.recv];
        got[{int(s.rank), int(s.iteration), index.strings.str(s.name)}] = {int(v.rank), index.strings.str(v.name)};
    }
    std::size_t wrong = 0, missing = 0;
    std::string firstWrong;
    for (const ClusterPairTruth& t : truth.pairs) {
        const auto it = got.find({t.sendRank, t.iteration, flat(t.sendName)});
        if (it == got.end()) {
            ++missing;
            continue;
        }
        if (it->second != std::pair(t.recvRank, flat(t.recvName))) {
            if (!wrong++)
                firstWrong = flat(t.sendName) + " on " + std::to_string(t.sendRank) + " -> " + it->second.second +
                    " on " + std::to_string(it->second.first) + ", truth " + flat(t.recvName) + " on " +
                    std::to_string(t.recvRank);
        }
    }
    EXPECT_EQ(wrong, 0u) << firstWrong;
    // The killed iteration's torn last row can lose one end of a pair.
    EXPECT_LE(missing, std::size_t(c.killed ? truth.ranks : 0));
    EXPECT_LE(r.pairs.size(), truth.pairs.size());
    EXPECT_EQ(j["counts"]["ambiguous_pairs"], 0) << j["counts"].dump();
    EXPECT_EQ(j["counts"]["pairs_statistics_differ"], 0) << j["counts"].dump();
    for (const std::string& e : r.evidence) EXPECT_EQ(e.find("contradict"), std::string::npos) << e;

    // The ranks reached, in the true order, by the true kind of hop.
    std::ostringstream reached, truthReached;
    std::set<std::uint32_t> seen;
    for (const ChainStep& s : r.chain) {
        std::vector<std::uint32_t> fresh;
        std::set<std::uint32_t> ranks(s.at.peerRanks.begin(), s.at.peerRanks.end());
        ranks.insert(s.at.rank);
        for (std::uint32_t rk : ranks)
            if (seen.insert(rk).second) fresh.push_back(rk);
        if (fresh.empty()) continue;
        reached << "{";
        for (std::uint32_t rk : fresh) reached << rk << " ";
        reached << "it" << s.at.iteration << " " << (s.causedBy < 0 ? "origin" : chainViaName(s.via)) << "} ";
    }
    std::set<int> truthRanks;
    for (const ClusterChainStep& t : truth.chain) {
        if (t.firstReached.empty()) continue;
        std::vector<int> f = t.firstReached;
        std::sort(f.begin(), f.end());
        truthReached << "{";
        for (int rk : f) {
            truthReached << rk << " ";
            truthRanks.insert(rk);
        }
        truthReached << "it" << t.iteration << " " << clusterViaName(t.via) << "} ";
    }
    // Every rank the damage reached is in the chain, by the true kind of hop and in the true
    // order; the analysis may list ranks the log reached by separate but simultaneous hops (the
    // two lanes' gradient AllReduces) as one step.
    EXPECT_EQ(seen.size(), truthRanks.size()) << reached.str() << "\ntruth " << truthReached.str();
    std::map<std::uint32_t, std::pair<std::size_t, std::string>> firstStep;  // rank -> (step, via)
    {
        std::set<std::uint32_t> got;
        for (std::size_t i = 0; i < r.chain.size(); ++i) {
            const ChainStep& s = r.chain[i];
            std::set<std::uint32_t> ranks(s.at.peerRanks.begin(), s.at.peerRanks.end());
            ranks.insert(s.at.rank);
            for (std::uint32_t rk : ranks)
                if (got.insert(rk).second) firstStep[rk] = {i, s.causedBy < 0 ? "origin" : chainViaName(s.via)};
        }
    }
    std::size_t latest = 0;
    for (const ClusterChainStep& t : truth.chain) {
        std::size_t lo = r.chain.size(), hi = 0;
        for (int rk : t.firstReached) {
            const auto f = firstStep.find(std::uint32_t(rk));
            ASSERT_NE(f, firstStep.end()) << "rank " << rk << " missing\n" << text;
            EXPECT_EQ(f->second.second, clusterViaName(t.via)) << "rank " << rk << "\n"
                                                               << reached.str() << "\ntruth " << truthReached.str();
            lo = std::min(lo, f->second.first);
            hi = std::max(hi, f->second.first);
        }
        if (t.firstReached.empty()) continue;
        EXPECT_GE(lo, latest) << "truth step " << t.fullName << " listed before an earlier one\n"
                              << reached.str() << "\ntruth " << truthReached.str();
        latest = std::max(latest, hi);
    }

    // Each step after the step it came from: in the list, and on the aligned clock.
    for (std::size_t i = 1; i < r.chain.size(); ++i) {
        const ChainStep& s = r.chain[i];
        ASSERT_GE(s.causedBy, 0) << i;
        ASSERT_LT(std::size_t(s.causedBy), i) << i;
        EXPECT_NE(s.via, ChainVia::ClockOnly) << i << "\n" << text;
        const ChainStep& from = r.chain[std::size_t(s.causedBy)];
        if (s.clockAligned && from.clockAligned && s.at.iteration == from.at.iteration) {
            EXPECT_GE(s.alignedUs, from.alignedUs) << i << "\n" << text;
        }
        if (s.via == ChainVia::SendReceive) {
            EXPECT_FALSE(s.pairEvidence.empty()) << i;
        }
    }

    // Clock offsets: relative to the lowest rank, within their stated uncertainty (a bound the
    // windows prove, so it must hold outright; 2 us for the microsecond timestamps' rounding).
    for (int rk = 1; rk < truth.ranks; ++rk) {
        const std::int64_t trueOff = truth.rankClockOffsetUs[std::size_t(rk)] - truth.rankClockOffsetUs[0];
        ASSERT_TRUE(r.clockOffsetUs.count(std::uint32_t(rk))) << rk;
        ASSERT_TRUE(r.clockUncertaintyUs.count(std::uint32_t(rk))) << rk << " has no estimate";
        const std::int64_t err = r.clockOffsetUs.at(std::uint32_t(rk)) - trueOff;
        EXPECT_LE(std::llabs(err), r.clockUncertaintyUs.at(std::uint32_t(rk)) + 2)
            << "rank " << rk << " estimated " << r.clockOffsetUs.at(std::uint32_t(rk)) << " +/- "
            << r.clockUncertaintyUs.at(std::uint32_t(rk)) << ", true " << trueOff;
        EXPECT_LT(r.clockUncertaintyUs.at(std::uint32_t(rk)), 1000) << rk;
    }
    if (c.killed) {
        bool torn = false;
        for (const IndexWarning& w : index.warnings) torn |= w.path.find("/3/statistic.csv") != std::string::npos;
        EXPECT_TRUE(torn) << "the torn last row of the killed iteration is reported";
    }
}

INSTANTIATE_TEST_SUITE_P(Pipelines, PipelineChain, ::testing::Range<std::size_t>(0, cases().size()),
                         [](const ::testing::TestParamInfo<std::size_t>& i) {
                             return std::string(cases()[i.param].name);
                         });
