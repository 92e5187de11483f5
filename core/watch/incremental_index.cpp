#include "core/watch/incremental_index.h"

#include <oneapi/tbb/task_arena.h>
#include <xxhash.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <unordered_map>

#include "core/analysis/first_overflow_inputs.h"
#include "core/index/dump_indexer.h"
#include "core/index/dump_layout.h"
#include "core/index/format_reader.h"
#include "core/index/index_file.h"
#include "core/index/index_serializer.h"
#include "core/index/shard_builder.h"
#include "core/index/shard_sources.h"
#include "core/util/parallel_for.h"
#include "core/watch/unit_spill.h"

namespace dl {
namespace {}  // namespace

// What an iteration of a shard holds, condensed: ops, tensors and their figures. Two builds that
// agree on it for an iteration gave that iteration nothing new to analyse.
std::unordered_map<std::uint32_t, std::uint64_t> IncrementalIndex::iterationDigests(const DumpIndex& idx) {
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

namespace {

bool isTable(const std::string& rel) {
    return rel == "statistic.csv" || rel.ends_with("/statistic.csv") || rel == "dump.json" ||
        rel.ends_with("/dump.json");
}

}  // namespace

IncrementalIndex::IncrementalIndex(std::string rootAbs, std::string cacheDir, unsigned threads)
    : m_root(std::move(rootAbs)), m_cacheDir(std::move(cacheDir)), m_threads(threads) {}

IncrementalIndex::~IncrementalIndex() {
    std::error_code ec;
    if (!m_spillDir.empty()) std::filesystem::remove_all(m_spillDir, ec);
}

void IncrementalIndex::touch(const std::string& shardRel, const std::string& unitRel, Unit& u) {
    u.stale = true;
    if (u.lastTouched != m_batch && !unitRel.empty() && !m_spillDir.empty() && !m_spillFailed)
        m_spillQueue.emplace_back(m_batch, shardRel, unitRel);
    u.lastTouched = m_batch;
    m_touched.insert(shardRel);
}

void IncrementalIndex::makeWhole(const std::string& shardRel, Shard& sh) {
    sh.whole = true;
    restoreAll(shardRel, sh);
    Unit& base = sh.units[""];
    for (auto it = sh.units.begin(); it != sh.units.end();) {
        if (it->first.empty()) {
            ++it;
            continue;
        }
        for (const ScannedFile& f : it->second.files) base.files.insert(f);
        for (auto& [rel, entry] : it->second.resume.entries) base.resume.entries[rel] = std::move(entry);
        it = sh.units.erase(it);
    }
    touch(shardRel, "", base);
}

bool IncrementalIndex::Shard::stale() const {
    return std::any_of(units.begin(), units.end(), [](const auto& u) { return u.second.stale; });
}

std::vector<std::string> IncrementalIndex::Shard::unitRels() const {
    std::vector<std::string> rels;
    rels.reserve(units.size() + spilled.size());
    for (const auto& [rel, u] : units) rels.push_back(rel);
    for (const auto& [rel, u] : spilled) rels.push_back(rel);
    std::sort(rels.begin(), rels.end());
    return rels;
}

// The iteration folder holding `rel` within `shard`, "" when it lies in none (module header). An
// msprobe dump_tensor_data/ file belongs with the folder of its dump.json.
std::string IncrementalIndex::unitOf(const std::string& shard, const std::string& rel) {
    std::string_view dir(rel);
    if (const auto at = dir.find("/dump_tensor_data/"); at != std::string_view::npos)
        dir = dir.substr(0, at + 1);
    else if (dir.starts_with("dump_tensor_data/"))
        return {};
    const auto slash = dir.rfind('/');
    if (slash == std::string_view::npos) return {};
    dir = dir.substr(0, slash);
    if (dir.size() <= shard.size()) return {};  // the shard folder itself
    const std::vector<std::string_view> parts = splitPath(dir);
    if (parts.empty() || !locateDumpFolder(parts).iteration) return {};
    return std::string(dir);
}

std::vector<ShardChange> IncrementalIndex::update(const std::vector<WatchedFile>& complete,
                                                  const std::vector<std::string>& removed, std::stop_token stop) {
    return update(complete, removed, {}, stop);
}

std::vector<ShardChange> IncrementalIndex::update(const std::vector<WatchedFile>& complete,
                                                  const std::vector<std::string>& removed,
                                                  const std::vector<std::string>& removedFolders,
                                                  std::stop_token stop) {
    ++m_batch;
    m_touched.clear();
    // A file of the shard's context read by every unit's build: all of them are built again.
    const auto markStale = [&](const std::string& shardRel, Shard& sh, const std::string& unitRel, Unit& u,
                               const std::string& rel) {
        touch(shardRel, unitRel, u);
        if (unitRel.empty() && ShardSources::isShardContext(rel)) {
            restoreAll(shardRel, sh);
            for (auto& [r, other] : sh.units) touch(shardRel, r, other);
        }
    };
    // Removals first: a folder or file removed and made again in one poll keeps its new files.
    for (const std::string& folder : removedFolders) {
        const std::string prefix = folder + "/";
        for (auto& [rel, sh] : m_shards) {
            // A shard's files all start with its rel: a shard outside the folder and the folder
            // outside the shard share no file.
            if (!(rel.empty() || prefix.starts_with(rel + "/") || (rel + "/").starts_with(prefix))) continue;
            std::vector<std::string> under;
            for (const auto& [unitRel, s] : sh.spilled)
                if ((unitRel + "/").starts_with(prefix) || prefix.starts_with(unitRel + "/")) under.push_back(unitRel);
            for (const std::string& unitRel : under) restore(rel, sh, unitRel);
            for (auto& [unitRel, u] : sh.units) {
                for (auto it = u.files.lower_bound(prefix); it != u.files.end() && it->rel.starts_with(prefix);) {
                    u.resume.entries.erase(it->rel);
                    const std::string gone = it->rel;
                    it = u.files.erase(it);
                    markStale(rel, sh, unitRel, u, gone);
                }
            }
        }
    }
    for (const std::string& rel : removed) {
        const std::string shard = shardOfFile(rel);
        const auto it = m_shards.find(shard);
        if (it == m_shards.end()) continue;
        const std::string unitRel = unitOf(it->second, shard, rel);
        if (it->second.spilled.count(unitRel)) restore(shard, it->second, unitRel);
        const auto u = it->second.units.find(unitRel);
        if (u == it->second.units.end()) continue;
        if (const auto f = u->second.files.find(rel); f != u->second.files.end()) {
            u->second.files.erase(f);
            u->second.resume.entries.erase(rel);
            markStale(shard, it->second, unitRel, u->second, rel);
        }
    }
    for (const WatchedFile& f : complete) {
        const std::string shard = shardOfFile(f.rel);
        Shard& sh = m_shards[shard];
        const std::string unitRel = unitOf(sh, shard, f.rel);
        Unit& u = restore(shard, sh, unitRel);
        const auto it = u.files.find(f.rel);
        if (it != u.files.end() && it->size == f.size && it->stamp == f.stamp) continue;  // handed on again, unchanged
        if (it != u.files.end()) u.files.erase(it);
        u.files.insert({f.rel, f.size, f.mtimeNs, f.stamp});
        // A new unit needs the shard's context, which unit "" holds: built once, even if empty.
        if (!unitRel.empty() && !sh.units.count("")) sh.units[""];
        markStale(shard, sh, unitRel, u, f.rel);
    }
    std::vector<ShardChange> changes;
    const std::set<std::string> touched = m_touched;
    for (const std::string& rel : touched) {
        Shard& sh = m_shards[rel];
        if (!sh.cacheTried && !m_cacheDir.empty()) {
            sh.cacheTried = true;
            FolderFingerprint fp;
            std::string error;
            sh.hasCached = readIndexFile(shardCacheFile(m_cacheDir, m_root, rel), sh.cached, fp, error) &&
                sh.cached.root == m_root;
            // Each unit's part of the entry, found once (not a scan of the whole entry per unit).
            if (sh.hasCached)
                for (const TensorRecord& t : sh.cached.tensors)
                    if (const StrId file = sh.cached.side(t).file)
                        sh.cachedByUnit[unitOf(sh, rel, sh.cached.strings.str(file))].push_back(&t);
        }
        const auto buildStale = [&] {
            for (auto& [unitRel, u] : sh.units) {
                if (!u.stale) continue;
                if (stop.stop_requested()) break;
                ShardChange c;
                c.shard = rel;
                c.unit = unitRel;
                rebuild(rel, sh, unitRel, u, stop, c);
                changes.push_back(std::move(c));
            }
        };
        buildStale();
        const bool plainNpy = std::any_of(sh.units.begin(), sh.units.end(), [](const auto& u) {
            return std::any_of(u.second.index.ranks.begin(), u.second.index.ranks.end(),
                               [](const RankInfo& r) { return r.format == DumpFormat::PlainNpy; });
        });
        if (!sh.whole && sh.units.size() + sh.spilled.size() > 1 && plainNpy && !stop.stop_requested()) {
            makeWhole(rel, sh);
            buildStale();
        }
        std::erase_if(sh.units,
                      [](const auto& u) { return u.second.files.empty() && !u.second.stale && !u.first.empty(); });
        if (!stop.stop_requested()) {
            sh.hasCached = false;  // its files are all in the units' builds now
            sh.cached.release();
            sh.cachedByUnit.clear();
        }
    }
    if (!touched.empty())  // order files removed or changed: their tables are not held for nothing
        m_context.prune([&](const std::string& rel, std::uint64_t size, std::int64_t stamp) {
            const auto sh = m_shards.find(shardOfFile(rel));
            if (sh == m_shards.end()) return false;
            const auto base = sh->second.units.find("");
            if (base == sh->second.units.end()) return false;
            const auto f = base->second.files.find(rel);
            return f != base->second.files.end() && f->size == size && f->stamp == stamp;
        });
    spillSettled();
    return changes;
}

// The files a build of a unit is offered: its own, and for an iteration folder the shard's
// context (ShardSources::isShardContext). msprobe's tensor files mean nothing without their
// dump.json, so they wait for it.
std::vector<const ScannedFile*> IncrementalIndex::offeredFiles(const Shard& sh, const std::string& unitRel,
                                                               const Unit& u) {
    std::vector<const ScannedFile*> offered;
    if (!unitRel.empty())
        if (const auto base = sh.units.find(""); base != sh.units.end())
            for (const ScannedFile& f : base->second.files)
                if (ShardSources::isShardContext(f.rel)) offered.push_back(&f);
    std::set<std::string> jsonFolders;
    for (const ScannedFile& f : u.files)
        if (const std::string& r = f.rel; r == "dump.json" || r.ends_with("/dump.json"))
            jsonFolders.insert(r.size() == 9 ? "" : r.substr(0, r.size() - 10));
    offered.reserve(offered.size() + u.files.size());
    for (const ScannedFile& f : u.files) {
        const std::string& r = f.rel;
        const std::size_t at = r.starts_with("dump_tensor_data/") ? 0 : r.find("/dump_tensor_data/");
        if (at != std::string::npos && !jsonFolders.count(at == 0 ? "" : r.substr(0, at))) continue;
        offered.push_back(&f);
    }
    // In rel order, as indexDump offers a shard's files (context folders sort apart from units').
    std::sort(offered.begin(), offered.end(),
              [](const ScannedFile* a, const ScannedFile* b) { return a->rel < b->rel; });
    return offered;
}

void IncrementalIndex::rebuild(const std::string& shardRel, Shard& sh, const std::string& unitRel, Unit& u,
                               std::stop_token stop, ShardChange& change) {
    const std::vector<const ScannedFile*> offered = offeredFiles(sh, unitRel, u);
    // The unit's last build, or on the shard's first the part of its cache entry under the unit.
    const auto cachedPart = sh.cachedByUnit.find(unitRel);
    ShardBuilder builder = u.built ? ShardBuilder(m_root, shardRel, &u.index)
        : sh.hasCached && cachedPart != sh.cachedByUnit.end()
        ? ShardBuilder(m_root, shardRel, &sh.cached, std::span<const TensorRecord* const>(cachedPart->second))
        : ShardBuilder(m_root, shardRel, nullptr);
    builder.setResume(&u.resume);
    builder.setContextCache(&m_context);
    if (!builder.scan(offered, stop)) return;
    std::vector<StatsJob>& jobs = builder.jobs();
    // A unit's build reads only the files that landed since its last (a few under a steady writer):
    // those are read on this thread, since waking the pool's threads costs more than reading a
    // few small files, and they spin a while after (perf: ~9 % of the watch's CPU in TBB's yield).
    constexpr std::size_t kParallelJobs = 32;
    if (jobs.size() < kParallelJobs) {
        std::vector<std::uint8_t> buffer;
        for (StatsJob& job : jobs) builder.applyJob(job, job.reader->run(job, buffer));
    } else {
        tbb::task_arena arena(m_threads ? int(m_threads) : tbb::task_arena::automatic);
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
    }
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
    if (!unitRel.empty())  // the context's warnings are unit ""'s to give, once
        std::erase_if(built.warnings, [](const IndexWarning& w) { return ShardSources::isShardContext(w.path); });
    // The digests of the last build were kept: only the new build's are computed.
    auto after = iterationDigests(built);
    const auto& before = u.digests;
    for (const auto& [it, d] : after)
        if (const auto b = before.find(it); b == before.end() || b->second != d) change.iterations.insert(it);
    for (const auto& [it, d] : before)
        if (!after.count(it)) change.iterations.insert(it);
    u.digests = std::move(after);
    change.anomalous = holdsAnomaly(built);
    u.anomalous = change.anomalous;
    // Kept until the unit's next build, for the whole watch: the builder's growth slack (vectors
    // doubled as drafts arrived) would be held on top of the records.
    built.ops.shrink_to_fit();
    built.tensors.shrink_to_fit();
    built.sides.shrink_to_fit();
    built.dims.shrink_to_fit();
    built.histBytes.shrink_to_fit();
    built.wideStats.shrink_to_fit();
    u.index = std::move(built);
    u.noteRanksAndIterations();
    u.built = true;
    u.stale = false;
    sh.cacheDirty = true;
}

std::uint64_t IncrementalIndex::tensors() const {
    std::uint64_t n = m_spilled.tensors;
    forEachUnit([&](const Unit& u) { n += u.index.tensors.size(); });
    return n;
}

std::uint64_t IncrementalIndex::ops() const {
    std::uint64_t n = m_spilled.ops;
    forEachUnit([&](const Unit& u) { n += u.index.ops.size(); });
    return n;
}

std::uint64_t IncrementalIndex::tableBytesRead() const {
    std::uint64_t n = m_spilledTableBytes;
    forEachUnit([&](const Unit& u) { n += u.resume.bytesRead; });
    return n;
}

std::size_t IncrementalIndex::files() const {
    std::size_t n = std::size_t(m_spilled.files);
    forEachUnit([&](const Unit& u) { n += u.files.size(); });
    return n;
}

std::size_t IncrementalIndex::units() const {
    std::size_t n = std::size_t(m_spilled.units);
    forEachUnit([&](const Unit&) { ++n; });
    return n;
}

std::set<std::uint32_t> IncrementalIndex::ranks() const {
    std::set<std::uint32_t> out;
    for (const auto& [rank, n] : m_spilled.rankUnits) out.insert(rank);
    forEachUnit([&](const Unit& u) { out.insert(u.ranks.begin(), u.ranks.end()); });
    return out;
}

std::set<std::uint32_t> IncrementalIndex::iterations() const {
    std::set<std::uint32_t> out;
    for (const auto& [iteration, n] : m_spilled.iterationUnits) out.insert(iteration);
    forEachUnit([&](const Unit& u) { out.insert(u.iterations.begin(), u.iterations.end()); });
    return out;
}

std::vector<IndexWarning> IncrementalIndex::warnings() const {
    std::vector<IndexWarning> out;
    for (const auto& [unitRel, w] : m_spilledWarnings) out.insert(out.end(), w.begin(), w.end());
    forEachUnit([&](const Unit& u) { out.insert(out.end(), u.index.warnings.begin(), u.index.warnings.end()); });
    return out;
}

}  // namespace dl
