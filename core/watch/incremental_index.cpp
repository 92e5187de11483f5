#include "core/watch/incremental_index.h"

#include <oneapi/tbb/task_arena.h>
#include <xxhash.h>

#include <algorithm>
#include <unordered_map>

#include "core/analysis/tensor_anomaly.h"
#include "core/index/dump_indexer.h"
#include "core/index/format_reader.h"
#include "core/index/index_file.h"
#include "core/index/index_serializer.h"
#include "core/index/shard_builder.h"
#include "core/util/parallel_for.h"

namespace dl {
namespace {

// What an iteration of a shard holds, condensed: ops, tensors and their figures. Two builds that
// agree on it for an iteration gave that iteration nothing new to analyse.
std::unordered_map<std::uint32_t, std::uint64_t> iterationDigests(const DumpIndex& idx) {
    std::unordered_map<std::uint32_t, std::uint64_t> out;
    for (const OpRecord& o : idx.ops) {
        std::uint64_t h = XXH64(&o.tensorCount, sizeof o.tensorCount, o.rank);
        h ^= XXH64(&o.overflow, sizeof o.overflow, h) + std::uint64_t(o.startUs);
        for (std::uint32_t t = o.firstTensor; t < o.firstTensor + o.tensorCount; ++t) {
            const TensorRecord& r = idx.tensors[t];
            h = XXH64(&r.packedStats, sizeof r.packedStats,
                      h ^ (std::uint64_t(r.flags) << 48) ^ std::uint64_t(r.timestampUs));
        }
        out[o.iteration] += h + 1;
    }
    return out;
}

bool holdsAnomaly(const DumpIndex& idx) {
    if (!idx.overflows.empty()) return true;
    return std::any_of(idx.tensors.begin(), idx.tensors.end(),
                       [&](const TensorRecord& t) { return classifyTensor(idx, t).bad(); });
}

bool isTable(const std::string& rel) {
    return rel == "statistic.csv" || rel.ends_with("/statistic.csv") || rel == "dump.json" ||
        rel.ends_with("/dump.json");
}

}  // namespace

IncrementalIndex::IncrementalIndex(std::string rootAbs, std::string cacheDir, unsigned threads)
    : m_root(std::move(rootAbs)), m_cacheDir(std::move(cacheDir)), m_threads(threads) {}

std::vector<ShardChange> IncrementalIndex::update(const std::vector<WatchedFile>& complete,
                                                  const std::vector<std::string>& removed, std::stop_token stop) {
    return update(complete, removed, {}, stop);
}

std::vector<ShardChange> IncrementalIndex::update(const std::vector<WatchedFile>& complete,
                                                  const std::vector<std::string>& removed,
                                                  const std::vector<std::string>& removedFolders,
                                                  std::stop_token stop) {
    std::set<std::string> touched;
    // Removals first: a folder or file removed and made again in one poll keeps its new files.
    for (const std::string& folder : removedFolders) {
        const std::string prefix = folder + "/";
        for (auto& [rel, s] : m_shards) {
            // A shard's files all start with its rel: a shard outside the folder and the folder
            // outside the shard share no file.
            if (!(rel.empty() || prefix.starts_with(rel + "/") || (rel + "/").starts_with(prefix))) continue;
            for (auto it = s.files.lower_bound(prefix); it != s.files.end() && it->rel.starts_with(prefix);) {
                s.resume.entries.erase(it->rel);
                it = s.files.erase(it);
                s.stale = true;
                touched.insert(rel);
            }
        }
    }
    for (const std::string& rel : removed) {
        const std::string shard = shardOfFile(rel);
        const auto it = m_shards.find(shard);
        if (it == m_shards.end()) continue;
        if (const auto f = it->second.files.find(rel); f != it->second.files.end()) {
            it->second.files.erase(f);
            it->second.resume.entries.erase(rel);
            it->second.stale = true;
            touched.insert(shard);
        }
    }
    for (const WatchedFile& f : complete) {
        const std::string shard = shardOfFile(f.rel);
        Shard& sh = m_shards[shard];
        const auto it = sh.files.find(f.rel);
        if (it != sh.files.end() && it->size == f.size && it->stamp == f.stamp) continue;  // handed on again, unchanged
        if (it != sh.files.end()) sh.files.erase(it);
        sh.files.insert({f.rel, f.size, f.mtimeNs, f.stamp});
        sh.stale = true;
        touched.insert(shard);
    }
    std::vector<ShardChange> changes;
    for (const std::string& rel : touched) {
        if (stop.stop_requested()) break;
        ShardChange c;
        c.shard = rel;
        rebuild(rel, m_shards[rel], stop, c);
        changes.push_back(std::move(c));
    }
    return changes;
}

// The files a build of the shard is offered: msprobe's tensor files mean nothing without their
// dump.json, so they wait for it.
std::vector<const ScannedFile*> IncrementalIndex::offeredFiles(const Shard& s) {
    std::set<std::string> jsonFolders;
    for (const ScannedFile& f : s.files)
        if (const std::string& r = f.rel; r == "dump.json" || r.ends_with("/dump.json"))
            jsonFolders.insert(r.size() == 9 ? "" : r.substr(0, r.size() - 10));
    std::vector<const ScannedFile*> offered;
    offered.reserve(s.files.size());
    for (const ScannedFile& f : s.files) {
        const std::string& r = f.rel;
        const std::size_t at = r.starts_with("dump_tensor_data/") ? 0 : r.find("/dump_tensor_data/");
        if (at != std::string::npos && !jsonFolders.count(at == 0 ? "" : r.substr(0, at))) continue;
        offered.push_back(&f);
    }
    return offered;
}

void IncrementalIndex::rebuild(const std::string& rel, Shard& s, std::stop_token stop, ShardChange& change) {
    const std::vector<const ScannedFile*> offered = offeredFiles(s);
    DumpIndex cached;
    const DumpIndex* previous = s.built ? &s.index : nullptr;
    if (!s.built && !s.cacheTried && !m_cacheDir.empty()) {
        s.cacheTried = true;
        FolderFingerprint fp;
        std::string error;
        if (readIndexFile(shardCacheFile(m_cacheDir, m_root, rel), cached, fp, error) && cached.root == m_root)
            previous = &cached;
    }
    ShardBuilder builder(m_root, rel, previous);
    builder.setResume(&s.resume);
    if (!builder.scan(offered, stop)) return;
    std::vector<StatsJob>& jobs = builder.jobs();
    tbb::task_arena arena(m_threads ? int(m_threads) : tbb::task_arena::automatic);
    if (!jobs.empty())  // most rebuilds read no file: the arena's threads are not woken for nothing
        parallelFor(
            tbb::blocked_range<std::size_t>(0, jobs.size(), 4),
            [&](const tbb::blocked_range<std::size_t>& range) {
                std::vector<std::uint8_t> scratch;
                for (std::size_t i = range.begin(); i != range.end(); ++i) {
                    StatsJobResult r = jobs[i].reader->run(jobs[i], scratch);
                    builder.applyJob(jobs[i], std::move(r));  // each job its own slot
                }
            },
            &arena);
    m_filesRead += jobs.size();
    for (const ScannedFile* f : offered) m_tables += isTable(f->rel);
    ++m_builds;
    DumpIndex built = builder.finish();
    built.root = m_root;
    const std::string host = hostName();
    for (RankInfo& r : built.ranks) {
        r.indexedOn = host;
        r.dataRoot = m_root;
    }
    // The digests of the last build were kept: only the new build's are computed.
    auto after = iterationDigests(built);
    const auto& before = s.digests;
    for (const auto& [it, d] : after)
        if (const auto b = before.find(it); b == before.end() || b->second != d) change.iterations.insert(it);
    for (const auto& [it, d] : before)
        if (!after.count(it)) change.iterations.insert(it);
    s.digests = std::move(after);
    change.anomalous = holdsAnomaly(built);
    s.ranks.clear();
    s.iterations.clear();
    for (const OpRecord& o : built.ops) {
        s.ranks.insert(o.rank);
        s.iterations.insert(o.iteration);
    }
    s.tensors = built.tensors.size();
    // Kept until the shard's next build, for the whole watch: the builder's growth slack (vectors
    // doubled as drafts arrived) would be held on top of the records.
    built.ops.shrink_to_fit();
    built.tensors.shrink_to_fit();
    built.sides.shrink_to_fit();
    built.dims.shrink_to_fit();
    built.histBytes.shrink_to_fit();
    built.wideStats.shrink_to_fit();
    s.index = std::move(built);
    s.built = true;
    s.stale = false;
    s.cacheDirty = true;
}

DumpIndex IncrementalIndex::merged() const {
    DumpIndex out;
    for (const auto& [rel, s] : m_shards)
        if (s.built) out.merge(s.index);
    out.finalize();
    out.root = m_root;
    return out;
}

std::uint64_t IncrementalIndex::tensors() const {
    std::uint64_t n = 0;
    for (const auto& [rel, s] : m_shards) n += s.tensors;
    return n;
}

std::uint64_t IncrementalIndex::ops() const {
    std::uint64_t n = 0;
    for (const auto& [rel, s] : m_shards) n += s.index.ops.size();
    return n;
}

std::uint64_t IncrementalIndex::tableBytesRead() const {
    std::uint64_t n = 0;
    for (const auto& [rel, s] : m_shards) n += s.resume.bytesRead;
    return n;
}

std::size_t IncrementalIndex::files() const {
    std::size_t n = 0;
    for (const auto& [rel, s] : m_shards) n += s.files.size();
    return n;
}

std::set<std::uint32_t> IncrementalIndex::ranks() const {
    std::set<std::uint32_t> out;
    for (const auto& [rel, s] : m_shards) out.insert(s.ranks.begin(), s.ranks.end());
    return out;
}

std::set<std::uint32_t> IncrementalIndex::iterations() const {
    std::set<std::uint32_t> out;
    for (const auto& [rel, s] : m_shards) out.insert(s.iterations.begin(), s.iterations.end());
    return out;
}

std::vector<IndexWarning> IncrementalIndex::warnings() const {
    std::vector<IndexWarning> out;
    for (const auto& [rel, s] : m_shards) out.insert(out.end(), s.index.warnings.begin(), s.index.warnings.end());
    return out;
}

std::vector<std::string> IncrementalIndex::writeCaches() {
    std::vector<std::string> notes;
    if (m_cacheDir.empty()) return notes;
    for (auto& [rel, s] : m_shards) {
        // A shard whose files changed after its last build (a batch cut short by the stop) is not
        // written: its fingerprint would vouch for files its index does not hold.
        if (!s.cacheDirty || s.stale) continue;
        s.cacheDirty = false;
        std::string error;
        const FolderFingerprint fingerprint = shardFingerprint(offeredFiles(s));
        if (!writeIndexFile(shardCacheFile(m_cacheDir, m_root, rel), s.index, fingerprint, kCacheEncoding, error))
            notes.push_back("cache not written: " + shardCacheFile(m_cacheDir, m_root, rel) + ": " + error);
    }
    return notes;
}

}  // namespace dl
