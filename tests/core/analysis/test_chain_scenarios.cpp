// The analyzer's chain against the ground truth of the simulated cluster scenarios
// (core/demo/cluster_scenario.h): the origin, the order in which ranks are reached, through what,
// and every step after the step it came from. The truth comes from the simulation's event log.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <memory>
#include <set>
#include <sstream>

#include "core/analysis/analysis_json.h"
#include "core/analysis/overflow_analyzer.h"
#include "core/demo/cluster_scenario.h"
#include "core/index/dump_indexer.h"
#include "tests/core/temp_dir.h"

using namespace dl;
using namespace dl::demo;

namespace {

struct Reach {
    std::set<int> ranks;
    int iteration = -1;
    std::string via;
    bool operator==(const Reach& o) const { return ranks == o.ranks && iteration == o.iteration && via == o.via; }
};

std::string show(const std::vector<Reach>& v) {
    std::ostringstream s;
    for (const Reach& r : v) {
        s << "{";
        for (int x : r.ranks) s << x << " ";
        s << "it" << r.iteration << " " << r.via << "} ";
    }
    return s.str();
}

// The truth: each step's first-reached ranks, in true-time order.
std::vector<Reach> truthReaches(const ClusterScenarioTruth& t) {
    std::vector<Reach> out;
    for (const ClusterChainStep& c : t.chain) {
        if (c.firstReached.empty()) continue;
        out.push_back({{c.firstReached.begin(), c.firstReached.end()}, c.iteration, clusterViaName(c.via)});
    }
    return out;
}

// The analyzer: the ranks each chain step reaches first (its rank and TP peers), in chain order.
std::vector<Reach> chainReaches(const AnalysisResult& r) {
    std::vector<Reach> out;
    std::set<int> seen;
    for (const ChainStep& s : r.chain) {
        Reach x;
        x.iteration = int(s.at.iteration);
        x.via = s.causedBy < 0 ? "origin" : chainViaName(s.via);
        for (std::uint32_t rank : std::vector<std::uint32_t>{s.at.rank})
            if (seen.insert(int(rank)).second) x.ranks.insert(int(rank));
        for (std::uint32_t rank : s.at.peerRanks)
            if (seen.insert(int(rank)).second) x.ranks.insert(int(rank));
        if (!x.ranks.empty()) out.push_back(x);
    }
    return out;
}

struct Case {
    ClusterScenarioTruth truth;
    DumpIndex index;
    AnalysisResult result;
};

class ChainScenarios : public ::testing::TestWithParam<ClusterScenario> {
protected:
    static void SetUpTestSuite() {
        m_dir = std::make_unique<dltest::TempDir>("dumplens_chainsc_");
        for (ClusterScenario s : allClusterScenarios()) {
            auto c = std::make_unique<Case>();
            const std::string root = (m_dir->path / clusterScenarioName(s)).string();
            std::string error;
            ASSERT_TRUE(writeClusterScenario(root, s, c->truth, error)) << error;
            IndexOptions io;
            io.useCache = false;
            IndexReport rep;
            ASSERT_TRUE(indexDump(root, io, c->index, rep, error)) << error;
            c->result = analyze(c->index);
            m_cases[s] = std::move(c);
        }
    }
    static void TearDownTestSuite() {
        m_cases.clear();
        m_dir.reset();
    }
    static std::unique_ptr<dltest::TempDir> m_dir;
    static std::map<ClusterScenario, std::unique_ptr<Case>> m_cases;
};
std::unique_ptr<dltest::TempDir> ChainScenarios::m_dir;
std::map<ClusterScenario, std::unique_ptr<Case>> ChainScenarios::m_cases;

}  // namespace

TEST_P(ChainScenarios, OriginIsTheSimulatedOne) {
    const Case& c = *m_cases.at(GetParam());
    ASSERT_TRUE(c.result.firstOverflow) << toText(c.index, c.result);
    const OverflowPoint& p = *c.result.firstOverflow;
    EXPECT_EQ(int(p.rank), c.truth.origin.rank);
    EXPECT_EQ(int(p.iteration), c.truth.origin.iteration);
    EXPECT_EQ(c.index.strings.str(c.index.ops[p.op].type), c.truth.origin.opType);
}

TEST_P(ChainScenarios, RanksAreReachedInTheOrderTheDamageTravelled) {
    const Case& c = *m_cases.at(GetParam());
    EXPECT_EQ(show(chainReaches(c.result)), show(truthReaches(c.truth))) << toText(c.index, c.result);
}

TEST_P(ChainScenarios, EveryStepAfterTheStepItCameFrom) {
    const Case& c = *m_cases.at(GetParam());
    ASSERT_FALSE(c.result.chain.empty());
    EXPECT_TRUE(c.result.chainOrderedByClock);
    for (std::size_t i = 1; i < c.result.chain.size(); ++i) {
        const ChainStep& s = c.result.chain[i];
        ASSERT_GE(s.causedBy, 0);
        ASSERT_LT(std::size_t(s.causedBy), i);
        EXPECT_GE(s.alignedUs, c.result.chain[std::size_t(s.causedBy)].alignedUs) << "step " << i + 1 << "\n"
                                                                                  << toText(c.index, c.result);
    }
}

INSTANTIATE_TEST_SUITE_P(Cluster, ChainScenarios, ::testing::ValuesIn(allClusterScenarios()),
                         [](const auto& info) { return std::string(clusterScenarioName(info.param)); });

// MindSpore's own rank table has no stages: the analyzer infers them. The ranks must still be
// reached in the true order (peers of one truth step in any order among themselves).
TEST(ChainScenariosInferredStages, RanksAreReachedInTheTrueOrder) {
    for (ClusterScenario s : allClusterScenarios()) {
        SCOPED_TRACE(clusterScenarioName(s));
        dltest::TempDir dir("dumplens_chainsc_nostage_");
        ClusterScenarioOptions o;
        o.stagesInRankTable = false;
        ClusterScenarioTruth truth;
        std::string error;
        ASSERT_TRUE(writeClusterScenario(dir.path.string(), s, o, truth, error)) << error;
        DumpIndex idx;
        IndexOptions io;
        io.useCache = false;
        IndexReport rep;
        ASSERT_TRUE(indexDump(dir.path.string(), io, idx, rep, error)) << error;
        const AnalysisResult r = analyze(idx);
        std::vector<int> got;
        for (const Reach& x : chainReaches(r)) got.insert(got.end(), x.ranks.begin(), x.ranks.end());
        std::vector<std::set<int>> want;
        for (const Reach& x : truthReaches(truth)) want.push_back(x.ranks);
        std::size_t pos = 0;
        for (const std::set<int>& group : want) {
            ASSERT_LE(pos + group.size(), got.size()) << toText(idx, r);
            const std::set<int> next(got.begin() + long(pos), got.begin() + long(pos + group.size()));
            EXPECT_EQ(next, group) << toText(idx, r);
            pos += group.size();
        }
        EXPECT_EQ(pos, got.size());
    }
}
