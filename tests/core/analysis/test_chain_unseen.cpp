// The chain on simulated clusters the scenario tests do not cover (PP2, PP8, PP2xTP4, PP4xTP4, a
// forward origin under TP, a global-norm AllReduce under TP, clocks skewed per rank), every step
// checked against the simulation's event log (cluster_truth.h): the order ranks are reached, each
// truth step's via and its link (Send and sr_tag, collective type and group, optimizer op), and
// that walking back caused_by reaches a step the bad data really came from.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <set>
#include <sstream>

#include "core/analysis/analysis_json.h"
#include "core/analysis/overflow_analyzer.h"
#include "core/demo/cluster_scenario.h"
#include "core/demo/cluster_sim.h"
#include "core/index/dump_indexer.h"
#include "tests/core/cluster_run.h"
#include "tests/core/temp_dir.h"

using namespace dl;
using namespace dl::demo;

namespace {

struct Spec {
    const char* name;
    int pp, tp;
    ClusterOrigin origin;
    bool globalNorm;
    std::vector<std::int64_t> offsets;  // empty: the scenarios' default skew
    bool timestamps = true;             // false: all written as 0; order from execution_order and messages
};

const std::vector<Spec>& specs() {
    static const std::vector<Spec> s = {
        {"pp2", 2, 1, ClusterOrigin::HeadSqrtGrad, false, {}},
        {"pp8", 8, 1, ClusterOrigin::HeadSqrtGrad, false, {}},
        {"pp2_tp4", 2, 4, ClusterOrigin::HeadSqrtGrad, false, {}},
        {"pp4_tp4", 4, 4, ClusterOrigin::HeadSqrtGrad, false, {}},
        {"pp4_tp2_forward", 4, 2, ClusterOrigin::ForwardResidual, false, {}},
        {"pp4_tp2_global_norm", 4, 2, ClusterOrigin::HeadSqrtGrad, true, {}},
        {"pp2_tp2_global_norm_skewed", 2, 2, ClusterOrigin::HeadSqrtGrad, true, {-2000, 2000, 0, 100}},
        {"pp4_skewed", 4, 1, ClusterOrigin::HeadSqrtGrad, false, {0, -9000, 7000, -400}},
        {"pp8_forward_skewed",
         8,
         1,
         ClusterOrigin::ForwardResidual,
         false,
         {5000, -5000, 3000, -3000, 1000, -1000, 0, 200}},
        {"pp4_no_timestamps", 4, 1, ClusterOrigin::HeadSqrtGrad, false, {}, false},
        {"pp8_forward_no_timestamps", 8, 1, ClusterOrigin::ForwardResidual, false, {}, false},
        {"pp4_tp2_no_timestamps", 4, 2, ClusterOrigin::HeadSqrtGrad, false, {}, false},
        {"pp4_tp2_forward_no_timestamps", 4, 2, ClusterOrigin::ForwardResidual, false, {}, false},
        {"pp4_tp2_global_norm_no_timestamps", 4, 2, ClusterOrigin::HeadSqrtGrad, true, {}, false},
    };
    return s;
}

std::string flat(std::string s) {  // MindSpore 2.4 file names spell '/' as '_'
    std::replace(s.begin(), s.end(), '/', '_');
    return s;
}

std::set<std::uint32_t> ranksOf(const ChainStep& s) {
    std::set<std::uint32_t> r(s.at.peerRanks.begin(), s.at.peerRanks.end());
    r.insert(s.at.rank);
    return r;
}

struct Case {
    ClusterScenarioTruth truth;
    DumpIndex index;
    AnalysisResult result;
    std::map<std::size_t, std::size_t> truthStepOf;  // chain step -> truth step showing the same op on a shared rank
};

class ChainUnseen : public ::testing::TestWithParam<std::size_t> {
protected:
    static void SetUpTestSuite() { dir_ = std::make_unique<dltest::TempDir>("dumplens_chainunseen_"); }
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
            spec.globalNorm = sp.globalNorm;
            ClusterScenarioOptions o;
            o.rankClockOffsetUs = sp.offsets;
            o.timestamps = sp.timestamps;
            const std::string root = (dir_->path / sp.name).string();
            std::string error;
            ASSERT_TRUE(dltest::writeAndIndexCluster(root, spec, o, c->truth, c->index, error))
                << sp.name << ": " << error;
            c->result = analyze(c->index);
            const auto& chain = c->result.chain;
            for (std::size_t i = 0; i < chain.size(); ++i) {
                const std::string op = c->index.strings.str(c->index.ops[chain[i].at.op].name);
                for (std::size_t t = 0; t < c->truth.chain.size(); ++t) {
                    const ClusterChainStep& ts = c->truth.chain[t];
                    bool shared = false;
                    for (std::size_t m = 0; m < ts.ranks.size(); ++m)
                        shared |= ranksOf(chain[i]).count(std::uint32_t(ts.ranks[m])) && flat(ts.fullNames[m]) == op;
                    if (shared && int(chain[i].at.iteration) == ts.iteration) c->truthStepOf[i] = t;
                }
            }
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
std::unique_ptr<dltest::TempDir> ChainUnseen::dir_;
std::map<std::size_t, std::unique_ptr<Case>> ChainUnseen::cases_;

}  // namespace

TEST_P(ChainUnseen, OriginIsTheSimulatedOne) {
    const Case& c = at(GetParam());
    ASSERT_TRUE(c.result.firstOverflow) << toText(c.index, c.result);
    const OverflowPoint& p = *c.result.firstOverflow;
    EXPECT_EQ(int(p.rank), c.truth.origin.rank);
    EXPECT_EQ(int(p.iteration), c.truth.origin.iteration);
    EXPECT_EQ(c.index.strings.str(c.index.ops[p.op].name), flat(c.truth.origin.fullName));
}

// Ranks reached first, step by step, in the true order, by the true kind of hop.
TEST_P(ChainUnseen, RanksAreReachedInTheTrueOrder) {
    const Case& c = at(GetParam());
    std::ostringstream got, want;
    std::set<std::uint32_t> seen;
    for (const ChainStep& s : c.result.chain) {
        std::vector<std::uint32_t> fresh;
        for (std::uint32_t r : ranksOf(s))
            if (seen.insert(r).second) fresh.push_back(r);
        if (fresh.empty()) continue;
        got << "{";
        for (std::uint32_t r : fresh) got << r << " ";
        got << "it" << s.at.iteration << " " << (s.causedBy < 0 ? "origin" : chainViaName(s.via)) << "} ";
    }
    for (const ClusterChainStep& t : c.truth.chain) {
        if (t.firstReached.empty()) continue;
        std::vector<int> f = t.firstReached;
        std::sort(f.begin(), f.end());
        want << "{";
        for (int r : f) want << r << " ";
        want << "it" << t.iteration << " " << clusterViaName(t.via) << "} ";
    }
    EXPECT_EQ(got.str(), want.str()) << toText(c.index, c.result);
}

// Every truth step is in the chain with its ranks, its via and its link.
TEST_P(ChainUnseen, EveryTrueStepWithItsLink) {
    const Case& c = at(GetParam());
    const nlohmann::json j = toJson(c.index, c.result);
    for (std::size_t t = 0; t < c.truth.chain.size(); ++t) {
        const ClusterChainStep& ts = c.truth.chain[t];
        SCOPED_TRACE("truth step " + std::to_string(t) + " " + ts.fullName);
        std::vector<std::size_t> at;
        std::set<int> covered;
        for (const auto& [i, k] : c.truthStepOf)
            if (k == t) {
                at.push_back(i);
                for (std::uint32_t r : ranksOf(c.result.chain[i])) covered.insert(int(r));
            }
        ASSERT_FALSE(at.empty()) << toText(c.index, c.result);
        for (int r : ts.ranks) EXPECT_TRUE(covered.count(r)) << "rank " << r << "\n" << toText(c.index, c.result);
        if (t == 0) continue;
        const nlohmann::json& step = j["chain"][at.front()];
        EXPECT_EQ(step["via"], clusterViaName(ts.via)) << toText(c.index, c.result);
        const nlohmann::json& d = step["via_detail"];
        if (ts.via == ClusterVia::SendReceive) {
            EXPECT_EQ(d["send_op"], flat(ts.viaOp));
            EXPECT_EQ(d["tag"], ts.tag);
            EXPECT_NE(std::find(ts.viaRanks.begin(), ts.viaRanks.end(), d["link_rank"].get<int>()), ts.viaRanks.end());
        } else if (ts.via == ClusterVia::Collective) {
            EXPECT_EQ(d["type"], "AllReduce");
            std::vector<int> group = ts.viaRanks;
            std::sort(group.begin(), group.end());
            EXPECT_EQ(d["group_ranks"].get<std::vector<int>>(), group);
        } else if (ts.via == ClusterVia::WeightUpdate) {
            EXPECT_EQ(d["link_op"], flat(ts.viaOp));
            EXPECT_EQ(d["optimizer_in_dump"], true);
        }
    }
}

// Walking back caused_by from a truth step reaches a step its bad data really came from, and
// every step comes after its caused_by in the list and on the aligned clock (without timestamps:
// in happens-before position within an iteration).
TEST_P(ChainUnseen, CausedByLeadsToATrueCause) {
    const Case& c = at(GetParam());
    const auto& chain = c.result.chain;
    ASSERT_EQ(c.result.chainOrderedByClock, specs()[GetParam()].timestamps);
    for (std::size_t i = 1; i < chain.size(); ++i) {
        ASSERT_GE(chain[i].causedBy, 0);
        ASSERT_LT(std::size_t(chain[i].causedBy), i);
        const ChainStep& from = chain[std::size_t(chain[i].causedBy)];
        if (c.result.chainOrderedByClock) {
            EXPECT_GE(chain[i].alignedUs, from.alignedUs) << "step " << i + 1;
        } else if (chain[i].at.iteration == from.at.iteration) {
            EXPECT_GE(chain[i].orderKey, from.orderKey) << "step " << i + 1;  // collective members: one position
        }
    }
    for (const auto& [i, t] : c.truthStepOf) {
        if (t == 0) continue;
        int k = chain[i].causedBy;
        while (k >= 0 && !c.truthStepOf.count(std::size_t(k))) k = chain[std::size_t(k)].causedBy;
        ASSERT_GE(k, 0) << "step " << i + 1 << "\n" << toText(c.index, c.result);
        const ClusterChainStep& ts = c.truth.chain[t];
        const int got = int(c.truthStepOf.at(std::size_t(k)));
        EXPECT_TRUE(got == ts.causedBy || std::count(ts.possibleCauses.begin(), ts.possibleCauses.end(), got))
            << "step " << i + 1 << " leads back to truth step " << got << ", true causes " << ts.causedBy << "\n"
            << toText(c.index, c.result);
    }
}

// A Send step shows what it carried (its own output, when dumped, is not what it moved): one of
// its inputs, whose figures in the index are non-finite, and that anomaly as the step's kind.
TEST_P(ChainUnseen, SendStepsShowTheBadInputTheyCarried) {
    const Case& c = at(GetParam());
    std::size_t sends = 0;
    for (const ChainStep& s : c.result.chain) {
        if (s.role != ChainRole::Send || c.index.strings.str(c.index.ops[s.at.op].type) != "Send") continue;
        ++sends;
        const std::string op = c.index.strings.str(c.index.ops[s.at.op].name);
        ASSERT_LT(s.at.tensor, c.index.tensors.size()) << op;
        const TensorRecord& t = c.index.tensors[s.at.tensor];
        EXPECT_EQ(t.op, s.at.op) << op;
        EXPECT_EQ(t.io, Io::Input) << op;
        const TensorStats st = c.index.stats(t);
        const bool nan = st.nanCount > 0 || std::isnan(st.max) || std::isnan(st.min);
        const bool inf = st.infCount() > 0 || std::isinf(st.max) || std::isinf(st.min);
        EXPECT_TRUE(nan || inf) << op;
        EXPECT_EQ(s.at.kind, inf ? AnomalyKind::Inf : AnomalyKind::Nan) << op;  // Inf ranks above NaN
    }
    const bool hops = std::any_of(c.truth.chain.begin(), c.truth.chain.end(),
                                  [](const ClusterChainStep& t) { return t.via == ClusterVia::SendReceive; });
    if (hops) {
        EXPECT_GT(sends, 0u) << toText(c.index, c.result);
    }
}

INSTANTIATE_TEST_SUITE_P(Cluster, ChainUnseen, ::testing::Range<std::size_t>(0, specs().size()),
                         [](const auto& info) { return std::string(specs()[info.param].name); });
