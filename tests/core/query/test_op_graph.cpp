// The cap on an op graph's kernels (the Graph tab's and the report's kMaxGraphNodes): on the
// demo's IR, a cap gives the most whole hops that fit it, node for node the uncapped graph at
// those hops; when not even 1 hop fits, its first kernels (producers first) and `truncated`.
// Without a cap the graph is the one asked for.
#include <gtest/gtest.h>

#include <set>
#include <tuple>

#include "core/analysis/overflow_analyzer.h"
#include "core/analysis/rank_dataflow.h"
#include "core/query/op_graph.h"
#include "core/query/op_state.h"
#include "tests/core/index_uncached.h"
#include "tests/core/shared_demo.h"

using namespace dl;

namespace {

struct Demo {
    DumpIndex index;
    AnalysisResult analysis;
    OpStates states;
    std::uint32_t origin = kNoIndex;
};

const Demo& demoRun() {
    static const Demo d = [] {
        Demo x;
        demo::DemoVariantInfo info;
        x.index = dltest::indexUncached(dltest::sharedDemoVariant(demo::DemoOptions{}, info));
        x.analysis = analyze(x.index);
        x.states = computeOpStates(x.index, &x.analysis, x.analysis.nearLimitThreshold);
        if (x.analysis.firstOverflow) x.origin = x.analysis.firstOverflow->op;
        return x;
    }();
    return d;
}

OpGraph graphOf(int hops, std::size_t cap = 0) {
    const Demo& d = demoRun();
    RankDataflow flow(d.index);
    OpGraph g;
    std::string error;
    EXPECT_TRUE(buildOpGraph(d.index, &d.analysis, d.states, flow, d.origin, hops, g, error, cap)) << error;
    return g;
}

std::size_t kernels(const OpGraph& g) {
    std::size_t n = 0;
    for (const OpGraphNode& x : g.nodes) n += x.kind == "kernel";
    return n;
}

using Key = std::tuple<std::string, std::string, int>;
std::set<Key> keys(const OpGraph& g) {
    std::set<Key> s;
    for (const OpGraphNode& n : g.nodes) s.insert({n.kind, n.name, n.distance});
    return s;
}

}  // namespace

TEST(OpGraphCap, WholeHopsThatFitOrTheNearestKernelsOfOne) {
    ASSERT_NE(demoRun().origin, kNoIndex);
    const OpGraph full = graphOf(4);
    EXPECT_EQ(full.hops, 4);
    EXPECT_EQ(full.requestedHops, 4);
    EXPECT_FALSE(full.truncated);
    const OpGraph one = graphOf(1), two = graphOf(2);
    ASSERT_LT(kernels(one), kernels(two));
    ASSERT_LT(kernels(two), kernels(full));

    // A cap between 2 and 4 hops' kernels: exactly the 2- or 3-hop graph, whichever is the largest that fits.
    const std::size_t cap = kernels(two);
    const OpGraph capped = graphOf(4, cap);
    EXPECT_EQ(capped.requestedHops, 4);
    EXPECT_FALSE(capped.truncated);
    EXPECT_LE(kernels(capped), cap);
    EXPECT_GE(capped.hops, 2);
    EXPECT_LT(capped.hops, 4);
    const OpGraph same = graphOf(capped.hops);
    EXPECT_EQ(keys(capped), keys(same));
    EXPECT_EQ(capped.edges.size(), same.edges.size());
    if (capped.hops < 3) {
        EXPECT_GT(kernels(graphOf(capped.hops + 1)), cap);
    }

    // Not even 1 hop fits: the centre and the first producer(s), and the graph says it was cut.
    ASSERT_GT(kernels(one), 2u);
    const OpGraph cut = graphOf(3, 2);
    EXPECT_TRUE(cut.truncated);
    EXPECT_EQ(cut.hops, 1);
    EXPECT_EQ(kernels(cut), 2u);
    EXPECT_TRUE(cut.nodes.front().centre);
    const std::set<Key> oneKeys = keys(one);
    for (const OpGraphNode& n : cut.nodes) EXPECT_TRUE(oneKeys.count({n.kind, n.name, n.distance})) << n.name;
    EXPECT_EQ(cut.nodes[1].distance, -1);  // producers first
}
