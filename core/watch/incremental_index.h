#pragma once
// The index of a dump that is still being written, kept shard by shard (one per rank folder, as
// indexDump splits it: shardOfFile). Complete files (folder_watcher.h) are added in batches; a
// batch rebuilds only the shards it touched, through the indexer's own ShardBuilder with the
// shard's previous build as the "cached" index, so:
//   - a tensor file whose statistics were computed is never read again (ShardContext::reuse);
//   - a changed statistic.csv, or msprobe dump.json with its tensors, is parsed again whole, with
//     the other files of its shard re-listed (names parsed, no file read);
//   - other shards are not touched.
// An msprobe dump_tensor_data/ file waits for its dump.json (before it, it would pass for a
// plain .npy).
#include <cstdint>
#include <map>
#include <set>
#include <stop_token>
#include <string>
#include <vector>

#include "core/index/dump_scanner.h"
#include "core/index/index_serializer.h"
#include "core/model/dump_index.h"
#include "core/watch/folder_watcher.h"

namespace dl {

struct ShardChange {
    std::string shard;                   // "" or "rank_3"
    std::set<std::uint32_t> iterations;  // whose ops or tensors differ from the last build
    bool anomalous = false;              // holds a bad tensor or an overflow record
};

class IncrementalIndex {
public:
    // `cacheDir` empty: no cache. Otherwise a shard's first build starts from its cache entry
    // (its unchanged files are not read) and writeCaches() stores the built shards there.
    IncrementalIndex(std::string rootAbs, std::string cacheDir, unsigned threads = 0);

    // Adds or replaces complete files, drops removed ones, rebuilds the shards they belong to.
    std::vector<ShardChange> update(const std::vector<WatchedFile>& complete, const std::vector<std::string>& removed,
                                    std::stop_token stop = {});
    // Every shard merged in shard order and finalized, as indexDump would give for these files.
    DumpIndex merged() const;

    std::uint64_t tensors() const;
    std::uint64_t ops() const;
    std::size_t files() const;  // complete files known
    std::set<std::uint32_t> ranks() const;
    std::set<std::uint32_t> iterations() const;
    std::uint64_t filesRead() const { return m_filesRead; }  // statistics computed (each once)
    std::uint64_t shardBuilds() const { return m_builds; }
    std::uint64_t tablesParsed() const { return m_tables; }  // statistic.csv / dump.json parses
    // Every shard's warnings, as its last build left them.
    std::vector<IndexWarning> warnings() const;
    // Writes every shard built since the last call to the cache; the reasons it could not.
    std::vector<std::string> writeCaches();

private:
    struct Shard {
        std::map<std::string, ScannedFile> files;  // complete files, by rel
        DumpIndex index;
        FolderFingerprint fingerprint;  // of the files the last build was offered
        bool built = false, cacheTried = false, cacheDirty = false;
        std::set<std::uint32_t> ranks, iterations;
        std::uint64_t tensors = 0;
    };
    void rebuild(const std::string& rel, Shard& s, std::stop_token stop, ShardChange& change);

    std::string m_root, m_cacheDir;
    unsigned m_threads;
    std::map<std::string, Shard> m_shards;
    std::uint64_t m_filesRead = 0, m_builds = 0, m_tables = 0;
};

}  // namespace dl
