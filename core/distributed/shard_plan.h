#pragma once
// Splitting a dump into per-rank-folder shards and sharing them among processes by bytes, for
// distributed indexing (MPI or any launcher). No MPI here: the plan is plain data.
#include <cstdint>
#include <string>
#include <vector>

namespace dl {

struct ShardInfo {
    std::string rel;  // rank folder relative to the dump root ("rank_3"); "" = the root itself
    std::uint64_t bytes = 0;
    std::uint64_t files = 0;
};

// The rank folders (rank_N / device_N, outermost ones) under root, with their sizes; when there are
// none, the root itself as one shard. Unreadable folders are skipped.
std::vector<ShardInfo> listShards(const std::string& root);

// visible[p]: the shards process p can read. Each shard goes to exactly one process that sees it,
// largest first to the least-loaded candidate (longest-processing-time rule), so bytes balance
// even when folder sizes differ. Returns the shard rels per process.
std::vector<std::vector<std::string>> planShards(const std::vector<std::vector<ShardInfo>>& visible);

// Line form for sending over the wire: "bytes\tfiles\trel\n" per shard.
std::string encodeShardList(const std::vector<ShardInfo>& shards);
std::vector<ShardInfo> decodeShardList(const std::string& text);

}  // namespace dl
