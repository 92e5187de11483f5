// Overflow-only dumps (op_debug_mode 3: only the ops whose output went Inf/NaN, no Send/Receive,
// no collective): nothing links the ranks' clocks, and the clocks are skewed by more than the
// gaps between stages, so raw time would misorder the chain. The chain must follow the
// pipeline's data flow instead, checked against the simulation's event log (cluster_truth.h):
// the ranks in the order the damage reached them, tensor-parallel peers as one step.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <tuple>

#include "core/analysis/analysis_json.h"
#include "core/analysis/overflow_analyzer.h"
#include "core/demo/cluster_scenario.h"
#include "core/demo/cluster_sim.h"
#include "core/index/dump_indexer.h"
#include "tests/core/cluster_run.h"
#include "tests/core/shared_demo.h"
#include "tests/core/temp_dir.h"

using namespace dl;
using namespace dl::demo;

namespace {

struct Spec {
    const char* name;
    int pp, tp;
    ClusterOrigin origin;
    std::vector<std::int64_t> offsets;  // per-rank clock skew, larger than the stage gaps
};

const std::vector<Spec>& specs() {
    static const std::vector<Spec> s = {
        {"pp4_last_stage", 4, 1, ClusterOrigin::HeadSqrtGrad, {0, 850, -3000, 420}},
        {"pp4_middle_stage", 4, 1, ClusterOrigin::ForwardResidual, {0, 9000, -7000, -4000}},
        {"pp4_tp2", 4, 2, ClusterOrigin::HeadSqrtGrad, {0, 850, -3000, 420, -1500, 2200, 300, -4700}},
    };
    return s;
}

std::set<std::uint32_t> ranksOf(const ChainStep& s) {
    std::set<std::uint32_t> r(s.at.peerRanks.begin(), s.at.peerRanks.end());
    r.insert(s.at.rank);
    return r;
}

// "{3 it1} {2 it2} ...": the ranks each step reaches first, in chain order.
std::string reachOrder(const AnalysisResult& r) {
    std::ostringstream out;
    std::set<std::uint32_t> seen;
    for (const ChainStep& s : r.chain) {
        std::vector<std::uint32_t> fresh;
        for (std::uint32_t k : ranksOf(s))
            if (seen.insert(k).second) fresh.push_back(k);
        if (fresh.empty()) continue;
        out << "{";
        for (std::uint32_t k : fresh) out << k << " ";
        out << "it" << s.at.iteration << "} ";
    }
    return out.str();
}

std::string truthReachOrder(const ClusterScenarioTruth& t) {
    std::ostringstream out;
    for (const ClusterChainStep& s : t.chain) {
        if (s.firstReached.empty()) continue;
        std::vector<int> f = s.firstReached;
        std::sort(f.begin(), f.end());
        out << "{";
        for (int k : f) out << k << " ";
        out << "it" << s.iteration << "} ";
    }
    return out.str();
}

// True when ordering the ranks' first anomalies by the raw timestamps their clocks wrote puts a
// rank before one the damage reached earlier: the order the chain must not follow.
bool rawClocksMisorder(const ClusterScenarioTruth& t) {
    std::map<int, std::size_t> stepOf;  // rank -> truth step that reached it first
    for (std::size_t k = 0; k < t.chain.size(); ++k)
        for (int r : t.chain[k].firstReached) stepOf.emplace(r, k);
    std::vector<std::tuple<int, std::int64_t, std::size_t>> byRaw;  // (iteration, raw, truth step)
    for (const auto& [r, k] : stepOf)
        byRaw.push_back({t.firstAnomaly[std::size_t(r)].iteration, t.firstAnomaly[std::size_t(r)].rawTimestampUs, k});
    std::sort(byRaw.begin(), byRaw.end());
    for (std::size_t i = 1; i < byRaw.size(); ++i)
        if (std::get<2>(byRaw[i]) < std::get<2>(byRaw[i - 1])) return true;
    return false;
}

struct Case {
    ClusterScenarioTruth truth;
    DumpIndex index;
    AnalysisResult result;
};

class ChainOverflowOnly : public ::testing::TestWithParam<std::size_t> {
protected:
    static void SetUpTestSuite() { dir_ = std::make_unique<dltest::TempDir>("dumplens_chainoo_"); }
    // Each dump is built on first use: ctest runs every test in its own process, so building all
    // of them in SetUpTestSuite would build every dump for every test.
    static const Case& at(std::size_t k) {
        if (!cases_.count(k)) build(k);
        return *cases_.at(k);  // throws (a failed test) when build() stopped at an assertion
    }
    static void build(std::size_t k) {
        {
            const Spec& sp = specs()[k];
            auto c = std::make_unique<Case>();
            ClusterSpec spec;
            spec.pipelineStages = sp.pp;
            spec.tensorParallel = sp.tp;
            spec.origin = sp.origin;
            ClusterScenarioOptions o;
            o.rankClockOffsetUs = sp.offsets;
            o.overflowOnly = true;
            const std::string root = (dir_->path / sp.name).string();
            std::string error;
            ASSERT_TRUE(dltest::writeAndIndexCluster(root, spec, o, c->truth, c->index, error))
                << sp.name << ": " << error;
            c->result = analyze(c->index);
            cases_[k] = std::move(c);
        }
    }
    static void TearDownTestSuite() {
        cases_.clear();
        dir_.reset();
    }
    static std::unique_ptr<dltest::TempDir> dir_;
    static std::map<std::size_t, std::unique_ptr<Case>> cases_;
};
std::unique_ptr<dltest::TempDir> ChainOverflowOnly::dir_;
std::map<std::size_t, std::unique_ptr<Case>> ChainOverflowOnly::cases_;

}  // namespace

// The dump is what the test claims: no communication op, only anomalous ops, and clocks skewed
// so that raw time orders the ranks differently from the true order.
TEST_P(ChainOverflowOnly, DumpHoldsNoMessageAndRawClocksMisorder) {
    const Case& c = at(GetParam());
    EXPECT_EQ(c.result.commPairs, 0u);
    for (const OpRecord& o : c.index.ops) {
        const std::string type = c.index.strings.str(o.type);
        EXPECT_TRUE(type != "Send" && type != "Receive" && type != "AllReduce") << type;
    }
    EXPECT_EQ(c.result.anomalousOps, c.index.ops.size()) << "only anomalous ops are dumped";
    EXPECT_TRUE(rawClocksMisorder(c.truth)) << "the skew must matter for this test to mean anything";
}

TEST_P(ChainOverflowOnly, OriginIsTheSimulatedOne) {
    const Case& c = at(GetParam());
    ASSERT_TRUE(c.result.firstOverflow) << toText(c.index, c.result);
    std::string flat = c.truth.origin.fullName;
    std::replace(flat.begin(), flat.end(), '/', '_');
    EXPECT_EQ(int(c.result.firstOverflow->rank), c.truth.origin.rank);
    EXPECT_EQ(int(c.result.firstOverflow->iteration), c.truth.origin.iteration);
    EXPECT_EQ(c.index.strings.str(c.index.ops[c.result.firstOverflow->op].name), flat);
}

// The whole chain: every rank, in the order the damage reached it, TP peers of one hop together.
TEST_P(ChainOverflowOnly, RanksInTheTrueReachOrder) {
    const Case& c = at(GetParam());
    EXPECT_EQ(reachOrder(c.result), truthReachOrder(c.truth)) << toText(c.index, c.result);
}

// Honest about it: placed by data flow (via clock_only, saying so), a warning, no aligned times
// across clocks nothing links, and each step after the step it came from.
TEST_P(ChainOverflowOnly, SaysTheOrderIsInferredFromTheStages) {
    const Case& c = at(GetParam());
    const AnalysisResult& r = c.result;
    EXPECT_TRUE(r.chainOrderedByFlow);
    EXPECT_TRUE(r.chainOrderedByClock);
    EXPECT_FALSE(r.clocksAligned);
    const bool warned = std::any_of(r.warnings.begin(), r.warnings.end(), [](const std::string& w) {
        return w.find("inferred from the pipeline stages") != std::string::npos;
    });
    EXPECT_TRUE(warned) << toText(c.index, r);
    const nlohmann::json j = toJson(c.index, r);
    EXPECT_EQ(j["chain_order"], "happens_before_then_pipeline_flow");
    std::size_t flowPlaced = 0;
    for (std::size_t i = 0; i < r.chain.size(); ++i) {
        const ChainStep& s = r.chain[i];
        if (i == 0) {
            EXPECT_EQ(s.causedBy, -1);
            continue;
        }
        ASSERT_GE(s.causedBy, 0);
        ASSERT_LT(std::size_t(s.causedBy), i) << "step " << i << " listed before the step it came from";
        const ChainStep& from = r.chain[std::size_t(s.causedBy)];
        EXPECT_GE(s.at.iteration, from.at.iteration);
        if (s.clockAligned && from.clockAligned) {
            EXPECT_GE(s.alignedUs, from.alignedUs) << "step " << i;
        }
        if (s.at.rank != 0) {
            EXPECT_TRUE(j["chain"][i]["aligned_us"].is_null())
                << "rank " << s.at.rank << "'s clock is linked to nothing";
        }
        if (s.via == ChainVia::ClockOnly && s.note.find("placed by the pipeline's data flow") != std::string::npos) {
            ++flowPlaced;
            EXPECT_NE(s.note.find("no message in the dump links rank"), std::string::npos) << s.note;
            EXPECT_NE(s.note.find("not comparable across machines"), std::string::npos) << s.note;
            EXPECT_EQ(j["chain"][i]["via"], "clock_only");
        }
    }
    EXPECT_GE(flowPlaced, std::size_t(c.truth.pipelineStages - 1)) << toText(c.index, r);
}

INSTANTIATE_TEST_SUITE_P(Clusters, ChainOverflowOnly, ::testing::Range<std::size_t>(0, 3),
                         [](const auto& info) { return std::string(specs()[info.param].name); });

// The bundled demo's story (README: the SqrtGrad's inf reaches the head weight; the next
// iteration every rank has NaN, rank 3 first, then the backward 2, 1, 0), written overflow-only in
// INF/NAN mode: the chain reaches the ranks in the order the full dump's Send/Receive pairs show.
TEST(ChainOverflowOnlyDemo, InfNanReachesThreeTwoOneZero) {
    auto analyzeVariant = [](bool overflowOnly, DumpIndex& idx) {
        demo::DemoOptions o;
        o.mode = OverflowMode::InfNan;
        o.overflowOnly = overflowOnly;
        demo::DemoVariantInfo info;
        const std::string root = dltest::sharedDemoVariant(o, info);
        IndexOptions io;
        io.useCache = false;
        IndexReport rep;
        std::string error;
        EXPECT_TRUE(indexDump(root, io, idx, rep, error)) << error;
        return analyze(idx);
    };
    DumpIndex fullIdx, ooIdx;
    const AnalysisResult full = analyzeVariant(false, fullIdx);
    const AnalysisResult oo = analyzeVariant(true, ooIdx);
    ASSERT_TRUE(full.clocksAligned) << "the full dump's pairs align the clocks";
    EXPECT_EQ(oo.commPairs, 0u);
    auto ranks = [](const AnalysisResult& r) {
        std::vector<std::uint32_t> out;
        for (const ChainStep& s : r.chain)
            for (std::uint32_t k : ranksOf(s))
                if (std::find(out.begin(), out.end(), k) == out.end()) out.push_back(k);
        return out;
    };
    EXPECT_EQ(ranks(full), (std::vector<std::uint32_t>{3, 2, 1, 0})) << toText(fullIdx, full);
    EXPECT_EQ(ranks(oo), ranks(full)) << toText(ooIdx, oo);
    EXPECT_TRUE(oo.chainOrderedByFlow);
}
