// The order tables the watch keeps across builds of a rank's folders (shard_context_cache.h): one
// per file at its size and stamp, shared between files that list the same kernels, dropped when
// the file goes or changes.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/index/shard_context_cache.h"

namespace {

dl::ScannedFile order(const std::string& rank, std::int64_t stamp) {
    return {rank + "/execution_order/ms_execution_order_graph_0.csv", 100, 0, stamp};
}

const std::vector<std::string> kKernels = {"Default/net/MatMul-op1", "Default/net/Add-op2"};

TEST(ShardContextCache, FilesListingTheSameKernelsShareOneTable) {
    dl::ShardContextCache cache;
    const auto a = cache.add(order("rank_0", 1), kKernels);
    const auto b = cache.add(order("rank_1", 2), kKernels);
    const auto c = cache.add(order("rank_2", 3), {"Default/net/Mul-op3"});
    EXPECT_EQ(a.get(), b.get());
    EXPECT_NE(a.get(), c.get());
    EXPECT_EQ(a->names(), kKernels);
    EXPECT_EQ(cache.entries(), 3u);
    EXPECT_EQ(cache.tables(), 2u);
    // The same names in another grouping are another order: "a","bc" is not "ab","c".
    const auto d = cache.add(order("rank_3", 4), {"Default/net/MatMul-op1Default/net/Add-op2"});
    EXPECT_NE(a.get(), d.get());
}

TEST(ShardContextCache, AnEntryServesOnlyTheFileAsItWasParsed) {
    dl::ShardContextCache cache;
    const auto a = cache.add(order("rank_0", 1), kKernels);
    EXPECT_EQ(cache.find(order("rank_0", 1)).get(), a.get());
    EXPECT_EQ(cache.find(order("rank_0", 2)), nullptr);  // rewritten: another stamp
    dl::ScannedFile grown = order("rank_0", 1);
    grown.size = 101;
    EXPECT_EQ(cache.find(grown), nullptr);
    EXPECT_EQ(cache.find(order("rank_1", 1)), nullptr);
}

TEST(ShardContextCache, PruneDropsWhatNoFileVouchesFor) {
    dl::ShardContextCache cache;
    cache.add(order("rank_0", 1), kKernels);
    cache.add(order("rank_1", 2), kKernels);
    cache.add(order("rank_2", 3), {"Default/net/Mul-op3"});
    // rank_1's file changed (stamp 5), rank_2's is gone.
    cache.prune([](const std::string& rel, std::uint64_t, std::int64_t stamp) {
        return rel.starts_with("rank_0/") || (rel.starts_with("rank_1/") && stamp == 5);
    });
    EXPECT_EQ(cache.entries(), 1u);
    EXPECT_EQ(cache.tables(), 1u);
    EXPECT_NE(cache.find(order("rank_0", 1)), nullptr);
    EXPECT_EQ(cache.find(order("rank_1", 2)), nullptr);
    // A table no entry holds is freed: an identical order added later is parsed anew, not revived.
    cache.prune([](const std::string&, std::uint64_t, std::int64_t) { return false; });
    EXPECT_EQ(cache.entries(), 0u);
    EXPECT_EQ(cache.tables(), 0u);
}

}  // namespace
