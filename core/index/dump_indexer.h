#pragma once
// Indexes a dump folder (the dump `path`, a rank_N folder or one iteration folder) into a
// DumpIndex: one shard per rank folder, statistics computed on all cores, shards cached.
#include <cstdint>
#include <stop_token>
#include <string>
#include <vector>

#include "core/index/dump_scanner.h"
#include "core/index/index_serializer.h"
#include "core/model/dump_index.h"
#include "core/util/progress.h"

namespace dl {

struct IndexOptions {
    unsigned threads = 0;  // 0: all cores
    bool useCache = true;
    std::string cacheDir;  // empty: defaultCacheDir()
    // Called from worker threads, serialised: for the first file, then at most every 50 ms, and for
    // the last file, so a caller need not throttle it again.
    ProgressCallback progress;
    std::stop_token stop;
};

struct IndexReport {
    bool cancelled = false;
    double seconds = 0;
    std::size_t shardsFromCache = 0;      // reopened unchanged from the cache
    std::size_t shardsIndexed = 0;        // (re)built
    std::size_t filesRead = 0;            // tensor files whose statistics were computed
    std::size_t filesReused = 0;          // unchanged files whose statistics came from the cache
    std::vector<std::string> cacheNotes;  // cache rebuilt / not writable, with reasons
    std::vector<std::string> formats;     // formats found, e.g. "MindSpore npy (8-field)"
};

// Returns false (with `error`) only when the path itself is unusable; problems with individual
// files become warnings inside the index.
bool indexDump(const std::string& path, const IndexOptions& options, DumpIndex& out, IndexReport& report,
               std::string& error);

// $DUMPLENS_CACHE_DIR, else $XDG_CACHE_HOME/dumplens, else ~/.cache/dumplens.
std::string defaultCacheDir();

// How indexDump splits a dump, for callers that build shards themselves (core/watch): the shard
// of a file (its path up to the first rank_N / device_N folder, "" outside any) and the cache
// file of a shard.
std::string shardOfFile(const std::string& rel);
std::string shardCacheFile(const std::string& cacheDir, const std::string& rootAbs, const std::string& shardRel);
// The fingerprint a shard's cache entry is checked against (its files' paths, sizes and stamps).
FolderFingerprint shardFingerprint(const std::vector<const ScannedFile*>& files);

}  // namespace dl
