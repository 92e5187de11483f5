// The simulated cluster scenarios (core/demo/cluster_scenario.h): the dumps they write index
// cleanly, hold what the simulation ran, and their first anomalies per rank — found here from
// the index's statistics alone — are the ones the simulation's event log names. The ground-truth
// chain is checked for causal consistency and for the story each scenario promises.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <sstream>

#include "core/demo/cluster_scenario.h"
#include "core/index/dump_indexer.h"
#include "tests/core/temp_dir.h"

namespace fs = std::filesystem;
using namespace dl;
using namespace dl::demo;

namespace {

struct Written {
    fs::path root;
    ClusterScenarioTruth truth;
    DumpIndex index;
};

bool opIsBad(const DumpIndex& idx, const OpRecord& op) {
    for (std::uint32_t i = 0; i < op.tensorCount; ++i) {
        const TensorStats s = idx.stats(idx.tensors[op.firstTensor + i]);
        if (s.nanCount > 0 || s.infCount() > 0) return true;
    }
    return false;
}

// Per rank: the first op, in (iteration, execution position) order, with a NaN/Inf tensor.
std::map<std::uint32_t, const OpRecord*> firstBadOps(const DumpIndex& idx) {
    std::vector<const OpRecord*> ops;
    for (const auto& op : idx.ops) ops.push_back(&op);
    std::sort(ops.begin(), ops.end(), [](const OpRecord* a, const OpRecord* b) {
        return std::tie(a->rank, a->iteration, a->execPos) < std::tie(b->rank, b->iteration, b->execPos);
    });
    std::map<std::uint32_t, const OpRecord*> first;
    for (const OpRecord* op : ops)
        if (!first.count(op->rank) && opIsBad(idx, *op)) first[op->rank] = op;
    return first;
}

std::string describe(const ClusterScenarioTruth& t) {
    std::ostringstream s;
    for (std::size_t i = 0; i < t.chain.size(); ++i) {
        const auto& c = t.chain[i];
        s << "[" << i << "] ranks";
        for (int r : c.ranks) s << " " << r;
        s << " " << c.opType << " it" << c.iteration << " t=" << c.trueUs << " " << clusterViaName(c.via)
          << " caused_by " << c.causedBy << "\n";
    }
    return s.str();
}

class ClusterScenarioTest : public ::testing::Test {
protected:
    static void SetUpTestSuite() {
        m_dir = std::make_unique<dltest::TempDir>("dumplens_cluster_");
        for (ClusterScenario s : allClusterScenarios()) {
            auto& w = m_written[s];
            w.root = m_dir->path / clusterScenarioName(s);
            std::string error;
            ASSERT_TRUE(writeClusterScenario(w.root.string(), s, w.truth, error)) << error;
            IndexOptions opt;
            opt.threads = 2;
            opt.useCache = false;
            IndexReport rep;
            ASSERT_TRUE(indexDump(w.root.string(), opt, w.index, rep, error)) << error;
        }
    }
    static void TearDownTestSuite() {
        m_written.clear();
        m_dir.reset();
    }
    static const Written& get(ClusterScenario s) { return m_written.at(s); }

    static std::unique_ptr<dltest::TempDir> m_dir;
    static std::map<ClusterScenario, Written> m_written;
};

std::unique_ptr<dltest::TempDir> ClusterScenarioTest::m_dir;
std::map<ClusterScenario, Written> ClusterScenarioTest::m_written;

// Stages in the order the truth says they were first reached.
std::vector<int> stageOrder(const ClusterScenarioTruth& t) {
    std::vector<int> ranks;
    for (int r = 0; r < t.ranks; ++r) ranks.push_back(r);
    std::stable_sort(ranks.begin(), ranks.end(), [&](int a, int b) {
        return t.firstAnomaly[std::size_t(a)].trueUs < t.firstAnomaly[std::size_t(b)].trueUs;
    });
    std::vector<int> stages;
    for (int r : ranks)
        if (stages.empty() || stages.back() != t.stageOfRank[std::size_t(r)])
            stages.push_back(t.stageOfRank[std::size_t(r)]);
    return stages;
}

int stepOfFirst(const ClusterScenarioTruth& t, int rank) {
    for (std::size_t i = 0; i < t.chain.size(); ++i) {
        const auto& f = t.chain[i].firstReached;
        if (std::find(f.begin(), f.end(), rank) != f.end()) return int(i);
    }
    return -1;
}

}  // namespace

TEST_F(ClusterScenarioTest, DumpsIndexCleanlyWithWhatTheSimulationRan) {
    for (ClusterScenario s : allClusterScenarios()) {
        SCOPED_TRACE(clusterScenarioName(s));
        const Written& w = get(s);
        const auto& t = w.truth;
        EXPECT_TRUE(w.index.warnings.empty())
            << w.index.warnings.front().path << ": " << w.index.warnings.front().reason;
        EXPECT_EQ(int(w.index.ranks.size()), t.ranks);
        EXPECT_EQ(t.ranks, t.pipelineStages * t.tensorParallel);
        EXPECT_EQ(w.index.meta.dumpMode, "statistic");
        std::vector<std::uint32_t> iters;
        for (int i = 0; i < t.iterations; ++i) iters.push_back(std::uint32_t(i));
        EXPECT_EQ(w.index.iterations(), iters);
        std::map<std::pair<std::uint32_t, std::uint32_t>, std::pair<std::size_t, std::size_t>> counts;
        for (const auto& op : w.index.ops) {
            auto& c = counts[{op.rank, op.iteration}];
            ++c.first;
            c.second += op.tensorCount;
            EXPECT_NE(op.scope, 0u) << "op without execution-order name: " << w.index.strings.view(op.name);
        }
        for (int r = 0; r < t.ranks; ++r)
            for (int i = 0; i < t.iterations; ++i) {
                const auto c = counts[{std::uint32_t(r), std::uint32_t(i)}];
                EXPECT_EQ(c.first, t.opsPerRankIteration[std::size_t(r)][std::size_t(i)])
                    << "rank " << r << " it " << i;
                EXPECT_EQ(c.second, t.tensorsPerRankIteration[std::size_t(r)][std::size_t(i)])
                    << "rank " << r << " it " << i;
            }
        // One graph per stage: TP peers list the same ops under the same names.
        for (int r = 0; r < t.ranks; ++r) {
            std::ifstream a(w.root / ("rank_" + std::to_string(r)) / "execution_order/ms_execution_order_graph_0.csv");
            std::ifstream b(w.root / ("rank_" + std::to_string(t.stageOfRank[std::size_t(r)] * t.tensorParallel)) /
                            "execution_order/ms_execution_order_graph_0.csv");
            std::stringstream sa, sb;
            sa << a.rdbuf();
            sb << b.rdbuf();
            EXPECT_EQ(sa.str(), sb.str()) << "rank " << r;
        }
    }
}

TEST_F(ClusterScenarioTest, FirstAnomalyPerRankInTheIndexIsTheSimulatedOne) {
    for (ClusterScenario s : allClusterScenarios()) {
        SCOPED_TRACE(clusterScenarioName(s));
        const Written& w = get(s);
        const auto first = firstBadOps(w.index);
        EXPECT_EQ(int(first.size()), w.truth.ranks);  // every scenario reaches every rank
        for (const auto& a : w.truth.firstAnomaly) {
            ASSERT_GE(a.rank, 0);
            const auto it = first.find(std::uint32_t(a.rank));
            ASSERT_NE(it, first.end()) << "rank " << a.rank;
            const OpRecord& op = *it->second;
            EXPECT_EQ(w.index.strings.view(op.scope), a.fullName) << "rank " << a.rank;
            EXPECT_EQ(w.index.strings.view(op.type), a.opType) << "rank " << a.rank;
            EXPECT_EQ(int(op.iteration), a.iteration) << "rank " << a.rank;
            EXPECT_EQ(op.startUs, a.rawTimestampUs) << "rank " << a.rank;
        }
        // The origin is the only op whose inputs are clean and whose outputs are not.
        EXPECT_EQ(w.truth.spontaneousOverflows, 1u);
        EXPECT_EQ(w.truth.firstAnomaly[std::size_t(w.truth.origin.rank)].fullName, w.truth.origin.fullName);
    }
}

TEST_F(ClusterScenarioTest, TruthChainIsOrderedByTimeAndEachStepFollowsItsCause) {
    for (ClusterScenario s : allClusterScenarios()) {
        SCOPED_TRACE(clusterScenarioName(s));
        const auto& t = get(s).truth;
        const DumpIndex& idx = get(s).index;
        ASSERT_FALSE(t.chain.empty());
        EXPECT_EQ(t.chain[0].via, ClusterVia::Origin);
        EXPECT_EQ(t.chain[0].causedBy, -1);
        EXPECT_EQ(t.chain[0].fullName, t.origin.fullName);
        for (std::size_t i = 0; i < t.chain.size(); ++i) {
            const auto& c = t.chain[i];
            SCOPED_TRACE("step " + std::to_string(i) + "\n" + describe(t));
            if (i > 0) {
                EXPECT_GE(c.trueUs, t.chain[i - 1].trueUs);
                ASSERT_GE(c.causedBy, 0);
                ASSERT_LT(c.causedBy, int(i));
                EXPECT_LT(t.chain[std::size_t(c.causedBy)].trueUs, c.trueUs);
                EXPECT_TRUE(std::count(c.possibleCauses.begin(), c.possibleCauses.end(), c.causedBy));
                for (int p : c.possibleCauses) EXPECT_LT(p, int(i));
                EXPECT_NE(c.via, ClusterVia::Origin);
            }
            ASSERT_EQ(c.ranks.size(), c.fullNames.size());
            ASSERT_EQ(c.ranks.size(), c.rawTimestampUs.size());
            // Every step is an anomalous op of the dump, at the rank clock's timestamp.
            for (std::size_t k = 0; k < c.ranks.size(); ++k) {
                const auto found = std::find_if(idx.ops.begin(), idx.ops.end(), [&](const OpRecord& op) {
                    return int(op.rank) == c.ranks[k] && int(op.iteration) == c.iteration &&
                        idx.strings.view(op.scope) == c.fullNames[k];
                });
                ASSERT_NE(found, idx.ops.end()) << c.fullNames[k] << " on rank " << c.ranks[k];
                EXPECT_TRUE(opIsBad(idx, *found));
                EXPECT_EQ(found->startUs, c.rawTimestampUs[k]);
            }
            if (c.via == ClusterVia::SendReceive) {
                EXPECT_EQ(c.opType, "Receive");
                EXPECT_NE(c.viaOp.find("_sr_tag_" + std::to_string(c.tag) + "/"), std::string::npos) << c.viaOp;
                ASSERT_EQ(c.viaRanks.size(), c.ranks.size());
                for (std::size_t k = 0; k < c.ranks.size(); ++k)  // neighbouring stage, same TP lane
                    EXPECT_EQ(std::abs(c.viaRanks[k] - c.ranks[k]), t.tensorParallel);
            }
            if (c.via == ClusterVia::WeightUpdate) {
                ASSERT_GE(c.causedBy, 0);
                const auto& u = t.chain[std::size_t(c.causedBy)];
                EXPECT_EQ(u.opType, "ApplyMomentum");
                EXPECT_EQ(c.viaOp, u.fullName);
                EXPECT_EQ(u.iteration + 1, c.iteration);
            }
        }
        // Every rank's first anomaly is in exactly one step.
        for (int r = 0; r < t.ranks; ++r) {
            int n = 0;
            for (const auto& c : t.chain) n += int(std::count(c.firstReached.begin(), c.firstReached.end(), r));
            EXPECT_EQ(n, 1) << "rank " << r;
        }
        // Raw timestamps lie about the order for at least one cause -> effect pair.
        bool lie = false;
        for (const auto& c : t.chain)
            if (c.causedBy >= 0)
                lie = lie ||
                    *std::min_element(c.rawTimestampUs.begin(), c.rawTimestampUs.end()) <
                        *std::min_element(t.chain[std::size_t(c.causedBy)].rawTimestampUs.begin(),
                                          t.chain[std::size_t(c.causedBy)].rawTimestampUs.end());
        EXPECT_TRUE(lie);
    }
}

TEST_F(ClusterScenarioTest, BackwardNextIterationReachesStage2FirstAndStage0Last) {
    const auto& t = get(ClusterScenario::BackwardNextIteration).truth;
    EXPECT_EQ(t.ranks, 4);
    EXPECT_EQ(t.origin.rank, 3);
    EXPECT_EQ(t.origin.opType, "SqrtGrad");
    EXPECT_EQ(stageOrder(t), (std::vector<int>{3, 2, 1, 0}));
    for (int r = 0; r < 3; ++r) EXPECT_EQ(t.firstAnomaly[std::size_t(r)].iteration, t.origin.iteration + 1);
    // The path crosses the iteration on rank 3 through the optimizer.
    const int reach2 = stepOfFirst(t, 2);
    ASSERT_GT(reach2, 0);
    const auto& entry = t.chain[std::size_t(t.chain[std::size_t(reach2)].causedBy)];
    EXPECT_EQ(entry.ranks, std::vector<int>{3});
    EXPECT_EQ(entry.via, ClusterVia::WeightUpdate);
    EXPECT_EQ(entry.iteration, t.origin.iteration + 1);
}

TEST_F(ClusterScenarioTest, ForwardThenBackwardReachesRank0AfterRank3) {
    const auto& t = get(ClusterScenario::ForwardThenBackward).truth;
    EXPECT_EQ(t.origin.rank, 1);
    EXPECT_EQ(stageOrder(t), (std::vector<int>{1, 2, 3, 0}));
    for (const auto& a : t.firstAnomaly) EXPECT_EQ(a.iteration, t.origin.iteration);
    const auto& r0 = t.chain[std::size_t(stepOfFirst(t, 0))];
    EXPECT_EQ(r0.via, ClusterVia::SendReceive);
    EXPECT_EQ(r0.viaRanks, std::vector<int>{1});
    EXPECT_NE(r0.fullName.find("Gradients/"), std::string::npos);  // reached by the backward
    EXPECT_GT(r0.trueUs, t.firstAnomaly[3].trueUs);
}

TEST_F(ClusterScenarioTest, TensorParallelPeerIsReachedByAllReduceThenLanesTravelTogether) {
    const auto& t = get(ClusterScenario::TensorParallel).truth;
    EXPECT_EQ(t.ranks, 8);
    EXPECT_EQ(t.tensorParallel, 2);
    EXPECT_EQ(t.origin.rank, 6);
    const auto& peer = t.chain[std::size_t(stepOfFirst(t, 7))];
    EXPECT_EQ(peer.via, ClusterVia::Collective);
    EXPECT_EQ(peer.opType, "AllReduce");
    EXPECT_EQ(peer.viaRanks, (std::vector<int>{6, 7}));
    EXPECT_EQ(peer.iteration, t.origin.iteration + 1);
    EXPECT_EQ(stageOrder(t), (std::vector<int>{3, 2, 1, 0}));
    for (int st = 0; st < 3; ++st) {  // both lanes of a stage in one step
        const int a = stepOfFirst(t, st * 2), b = stepOfFirst(t, st * 2 + 1);
        EXPECT_EQ(a, b) << "stage " << st;
        EXPECT_EQ(t.chain[std::size_t(a)].ranks, (std::vector<int>{st * 2, st * 2 + 1}));
        EXPECT_EQ(t.firstAnomaly[std::size_t(st * 2)].fullName, t.firstAnomaly[std::size_t(st * 2 + 1)].fullName);
    }
}

TEST_F(ClusterScenarioTest, GlobalNormAllReduceReachesEveryStageInOneHop) {
    const auto& t = get(ClusterScenario::GlobalNorm).truth;
    EXPECT_EQ(t.origin.rank, 3);
    ASSERT_EQ(t.chain.size(), 2u) << describe(t);
    const auto& hop = t.chain[1];
    EXPECT_EQ(hop.via, ClusterVia::Collective);
    EXPECT_EQ(hop.causedBy, 0);
    EXPECT_EQ(hop.ranks, (std::vector<int>{0, 1, 2}));
    EXPECT_EQ(hop.viaRanks, (std::vector<int>{0, 1, 2, 3}));
    for (int r = 0; r < 3; ++r) EXPECT_EQ(t.firstAnomaly[std::size_t(r)].trueUs, hop.trueUs);
}

TEST(ClusterScenario, TensorOptionWritesNpyWithTheSameAnomalies) {
    dltest::TempDir dir("dumplens_cluster_npy_");
    ClusterScenarioOptions opt;
    opt.writeTensors = true;
    ClusterScenarioTruth truth;
    std::string error;
    ASSERT_TRUE(writeClusterScenario(dir.path.string(), ClusterScenario::ForwardThenBackward, opt, truth, error))
        << error;
    DumpIndex idx;
    IndexReport rep;
    IndexOptions io;
    io.threads = 2;
    io.useCache = false;
    ASSERT_TRUE(indexDump(dir.path.string(), io, idx, rep, error)) << error;
    EXPECT_TRUE(idx.warnings.empty()) << idx.warnings.front().path << ": " << idx.warnings.front().reason;
    EXPECT_EQ(idx.meta.dumpMode, "full");
    EXPECT_TRUE(
        std::all_of(idx.tensors.begin(), idx.tensors.end(), [](const TensorRecord& t) { return t.flags & HasData; }));
    const auto first = firstBadOps(idx);
    for (const auto& a : truth.firstAnomaly) {
        ASSERT_TRUE(first.count(std::uint32_t(a.rank)));
        EXPECT_EQ(idx.strings.view(first.at(std::uint32_t(a.rank))->scope), a.fullName);
    }
}

TEST(ClusterScenario, DeterministicAndFailsCleanlyOnAnUnwritableRoot) {
    dltest::TempDir a("dumplens_cluster_a_"), b("dumplens_cluster_b_");
    ClusterScenarioTruth ta, tb;
    std::string error;
    ASSERT_TRUE(writeClusterScenario(a.path.string(), ClusterScenario::GlobalNorm, ta, error)) << error;
    ASSERT_TRUE(writeClusterScenario(b.path.string(), ClusterScenario::GlobalNorm, tb, error)) << error;
    std::size_t files = 0;
    for (const auto& e : fs::recursive_directory_iterator(a.path)) {
        if (!e.is_regular_file()) continue;
        ++files;
        std::ifstream fa(e.path(), std::ios::binary), fb(b.path / fs::relative(e.path(), a.path), std::ios::binary);
        std::stringstream sa, sb;
        sa << fa.rdbuf();
        sb << fb.rdbuf();
        EXPECT_EQ(sa.str(), sb.str()) << e.path();
    }
    EXPECT_EQ(files, ta.filesWritten);

    dltest::writeFile(a.path / "plain_file", "x");
    ClusterScenarioTruth tc;
    error.clear();
    EXPECT_FALSE(writeClusterScenario((a.path / "plain_file/dump").string(), ClusterScenario::GlobalNorm, tc, error));
    EXPECT_NE(error.find("plain_file"), std::string::npos) << error;
}
