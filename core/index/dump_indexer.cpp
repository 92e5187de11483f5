#include "core/index/dump_indexer.h"

#include <oneapi/tbb/enumerable_thread_specific.h>
#include <oneapi/tbb/task_arena.h>
#include <xxhash.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <set>

#include "core/index/dump_layout.h"
#include "core/index/format_reader.h"
#include "core/index/index_file.h"
#include "core/index/index_serializer.h"
#include "core/index/index_summary.h"
#include "core/index/output_guard.h"
#include "core/index/shard_builder.h"
#include "core/util/huge_pages.h"
#include "core/util/parallel_for.h"

namespace dl {
namespace fs = std::filesystem;
namespace {

struct Shard {
    std::string rel;  // "" or "rank_3" (path relative to the root)
    std::vector<const ScannedFile*> files;
    std::string cachePath;
    FolderFingerprint fingerprint;
    DumpIndex cached;
    bool haveCached = false;
    bool fromCache = false;
    std::unique_ptr<ShardBuilder> builder;
    bool built = false;      // `result` holds the finished shard
    std::size_t reused = 0;  // its files whose figures came from `cached`
    DumpIndex result;
};

// Progress from worker threads, serialised: the first file, then at most every 50 ms, and the last.
class ThrottledProgress {
public:
    ThrottledProgress(const ProgressCallback& callback, const Progress& total) : m_callback(callback), m_total(total) {}
    void fileDone(std::uint64_t bytes) {
        const auto fd = ++m_filesDone;
        const auto bd = m_bytesDone += bytes;
        if (!m_callback) return;
        std::lock_guard lock(m_mutex);
        const auto now = std::chrono::steady_clock::now();
        if (!m_last || now - *m_last > std::chrono::milliseconds(50) || fd == m_total.filesTotal) {
            m_last = now;
            m_callback({fd, m_total.filesTotal, bd, m_total.bytesTotal});
        }
    }
    std::uint64_t filesDone() const { return m_filesDone.load(); }

private:
    const ProgressCallback& m_callback;
    const Progress m_total;
    std::atomic<std::uint64_t> m_filesDone{0}, m_bytesDone{0};
    std::mutex m_mutex;
    std::optional<std::chrono::steady_clock::time_point> m_last;  // the first file is reported at once
};

enum class Resolved : std::uint8_t { Dump, IndexFile, Unusable, Stopped };

// One call of indexDump: its steps (defined below indexDump, in the order it calls them) and what
// they hand on to each other.
class IndexRun {
public:
    IndexRun(const IndexOptions& options, DumpIndex& out, IndexReport& report)
        : m_options(options), m_out(out), m_report(report), m_t0(std::chrono::steady_clock::now()) {}

    Resolved resolve(const std::string& path, std::string& error);  // 1. sets root()
    bool openCache();                                               // 2.
    bool build();                                                   // 3.
    void merge();                                                   // 4.

    bool done() {
        m_report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - m_t0).count();
        return true;
    }
    // A stopped index publishes nothing: an empty `out`, no cache written, `report.cancelled`.
    bool cancelled() {
        m_out = DumpIndex();
        m_report.cancelled = true;
        return done();
    }

    const std::string& root() const { return m_root; }  // the dump root, or the .dlx file resolve() found

private:
    void resolveCacheFolder();
    void scanShards();
    bool runStatsJobs();
    void finishShards();
    void finishShard(Shard& s, std::size_t i);
    // Shards share nothing until the merge: each is loaded, scanned and finished on its own core.
    template <class Fn>
    void eachShard(Fn&& fn) {
        parallelFor(
            std::size_t(0), m_shardList.size(), [&](std::size_t i) { fn(*m_shardList[i], i); }, &*m_arena);
    }
    // A worker's cache note goes to its shard's slot; they are reported in shard order.
    void flushNotes() {
        for (std::string& n : m_notes)
            if (!n.empty()) m_report.cacheNotes.push_back(std::move(n));
        m_notes.assign(m_shardList.size(), std::string());
    }

    const IndexOptions& m_options;
    DumpIndex& m_out;
    IndexReport& m_report;
    const std::chrono::steady_clock::time_point m_t0;
    std::string m_root;
    std::string m_cacheDir;
    bool m_useCache = false;
    ScanResult m_scan;
    std::map<std::string, Shard> m_shards;
    std::vector<Shard*> m_shardList;  // map order: the merge order
    FolderFingerprint m_wholeDump;
    std::string m_mergedPath;  // empty: no merged cache (disabled, or one shard)
    std::optional<tbb::task_arena> m_arena;
    std::vector<std::string> m_notes;                  // per shard
    std::vector<std::set<DumpFormat>> m_shardFormats;  // per shard: the writers of its files
    std::string m_host;                                // set once the shards are to be built
};

}  // namespace

// The four steps of an index, each below: resolve the path into a dump root and its shards, open
// what the cache holds of them, build the shards it does not, merge them into `out`.
bool indexDump(const std::string& path, const IndexOptions& options, DumpIndex& out, IndexReport& report,
               std::string& error) {
    IndexRun run(options, out, report);
    switch (run.resolve(path, error)) {
        case Resolved::Unusable:
            return false;
        case Resolved::IndexFile:  // a .dlx file is read as it is
            return loadIndexFile(run.root(), out, report, error);
        case Resolved::Stopped:
            return run.cancelled();
        case Resolved::Dump:
            break;
    }
    if (run.openCache()) return run.done();  // the merged cache is the dump as scanned: `out` holds it
    if (!run.build()) return run.cancelled();
    run.merge();
    return run.done();
}

namespace {

// Shard = the path prefix up to the first rank_N / device_N folder; files outside any: root shard.
std::string shardOf(const std::string& rel) {
    std::size_t start = 0;
    while (true) {
        const auto slash = rel.find('/', start);
        if (slash == std::string::npos) return {};
        if (rankFromFolderName(std::string_view(rel).substr(start, slash - start))) return rel.substr(0, slash);
        start = slash + 1;
    }
}

FolderFingerprint fingerprintOf(const std::vector<const ScannedFile*>& files) {
    XXH64_state_t* st = XXH64_createState();
    XXH64_reset(st, 0);
    FolderFingerprint fp;
    for (const ScannedFile* f : files) {
        XXH64_update(st, f->rel.data(), f->rel.size() + 0);
        XXH64_update(st, &f->size, sizeof f->size);
        XXH64_update(st, &f->stamp, sizeof f->stamp);
        ++fp.files;
        fp.bytes += f->size;
    }
    fp.hash = XXH64_digest(st);
    XXH64_freeState(st);
    return fp;
}

std::string cacheFileFor(const std::string& cacheDir, const std::string& rootAbs, const std::string& shardRel) {
    const std::string key = rootAbs + "\n" + shardRel;
    char name[40];
    std::snprintf(name, sizeof name, "%016llx.dlshard",
                  static_cast<unsigned long long>(XXH64(key.data(), key.size(), 0)));
    return cacheDir + "/shards/" + name;
}

// Runs on a worker: a note goes to `note`, the caller adds it to the report in shard order.
void loadCache(Shard& s, const std::string& rootAbs, std::string& note) {
    std::string error;
    if (!fs::exists(s.cachePath)) return;
    FolderFingerprint fp;
    if (!readIndexFile(s.cachePath, s.cached, fp, error)) {
        note = "cache for '" + (s.rel.empty() ? "." : s.rel) + "' rebuilt: " + s.cachePath + ": " + error;
        return;
    }
    if (s.cached.root != rootAbs) return;  // hash collision: another dump
    s.haveCached = true;
    s.fromCache = fp == s.fingerprint;
}

// The whole merged index of a dump, next to its shards: a reopen of an unchanged dump reads this
// one file straight into `out` (no per-shard load, merge or sort).
std::string mergedCacheFileFor(const std::string& cacheDir, const std::string& rootAbs) {
    char name[40];
    std::snprintf(name, sizeof name, "%016llx.dlx",
                  static_cast<unsigned long long>(XXH64(rootAbs.data(), rootAbs.size(), 1)));
    return cacheDir + "/merged/" + name;
}

// Fingerprint of the whole dump: every shard's folder and fingerprint, in shard order.
FolderFingerprint combinedFingerprint(const std::vector<Shard*>& shards) {
    FolderFingerprint all;
    XXH64_state_t* st = XXH64_createState();
    XXH64_reset(st, 2);
    for (const Shard* s : shards) {
        XXH64_update(st, s->rel.data(), s->rel.size());
        XXH64_update(st, "\n", 1);
        XXH64_update(st, &s->fingerprint, sizeof s->fingerprint);
        all.files += s->fingerprint.files;
        all.bytes += s->fingerprint.bytes;
    }
    all.hash = XXH64_digest(st);
    XXH64_freeState(st);
    return all;
}

// True when the merged cache matches the dump as scanned now; then `out` holds it.
bool loadMergedCache(const std::string& path, const std::string& rootAbs, const FolderFingerprint& want, DumpIndex& out,
                     std::string& note) {
    std::error_code ec;
    if (!fs::exists(path, ec)) return false;
    std::string error;
    FolderFingerprint fp;
    if (!readIndexFile(path, out, fp, error)) {
        note = "merged cache rebuilt: " + path + ": " + error;
        out = DumpIndex();
        return false;
    }
    if (out.root == rootAbs && fp == want) return true;
    out = DumpIndex();  // the dump changed since (or another dump with the same hash)
    return false;
}

}  // namespace

// 1. Resolve: the dump root (msprobe's dump.json stands for its folder), the cache folder (never
// inside the dump), the dump's files (scanFolder) grouped into shards with their fingerprints.
Resolved IndexRun::resolve(const std::string& path, std::string& error) {
    std::error_code ec;
    fs::path rootPath = fs::weakly_canonical(fs::absolute(path, ec), ec);
    if (ec || !fs::exists(rootPath, ec)) {
        error = "'" + path + "' does not exist";
        return Resolved::Unusable;
    }
    // msprobe's own CLI takes the dump.json of a rank: it stands for its folder (dump.json,
    // stack.json, construct.json and dump_tensor_data/ are read together).
    if (rootPath.filename() == "dump.json" && fs::is_regular_file(rootPath, ec)) rootPath = rootPath.parent_path();
    if (!fs::is_directory(rootPath, ec)) {
        if (!fs::is_regular_file(rootPath, ec)) {  // opening a FIFO would wait for a writer for ever
            error = "'" + path + "' is not a folder or a regular file; not read";
            return Resolved::Unusable;
        }
        m_root = rootPath.string();
        if (isIndexFile(m_root)) return Resolved::IndexFile;
        error = "'" + path +
            "' is not a folder (point at the dump path, a rank_N folder, an iteration folder, an msprobe dump.json or "
            "a "
            ".dlx index file; use `dumplens-cli inspect` for a single tensor file)";
        return Resolved::Unusable;
    }
    m_root = rootPath.string();
    resolveCacheFolder();
    m_scan = scanFolder(m_root, m_options.stop);
    if (m_options.stop.stop_requested()) return Resolved::Stopped;
    for (const auto& f : m_scan.files) m_shards[shardOf(f.rel)].files.push_back(&f);
    for (auto& [rel, s] : m_shards) {  // map order: the merge order, whatever the thread count
        s.rel = rel;
        s.fingerprint = fingerprintOf(s.files);
        if (m_useCache) s.cachePath = cacheFileFor(m_cacheDir, m_root, rel);
        m_shardList.push_back(&s);
    }
    m_wholeDump = combinedFingerprint(m_shardList);
    return Resolved::Dump;
}

void IndexRun::resolveCacheFolder() {
    std::error_code ec;
    // Absolute before the inside-the-dump check: a relative folder that does not exist yet would
    // otherwise compare as relative and never be found inside the dump.
    const fs::path cacheAbs =
        fs::weakly_canonical(fs::absolute(m_options.cacheDir.empty() ? defaultCacheDir() : m_options.cacheDir, ec), ec);
    m_cacheDir = cacheAbs.string();
    // Against the whole dump, not only the folder given: for dump/rank_0 a cache in dump/.cache is
    // inside the dump too.
    const bool cacheInside = !ec && isInsideOrEqual(cacheAbs, fs::path(dumpExtent(m_root)));
    m_useCache = m_options.useCache && !ec && !cacheInside;
    if (m_options.useCache && ec)
        m_report.cacheNotes.push_back("cache folder unusable (" + ec.message() + "); cache disabled");
    else if (m_options.useCache && cacheInside)
        m_report.cacheNotes.push_back("cache folder lies inside the dump; cache disabled (never writing into a dump)");
}

// 2. Cache: true when the merged cache of a dump of several shards matches it as scanned (then
// `out` holds it). Otherwise each shard's cache entry is loaded: an unchanged shard is reopened
// whole, a changed one keeps the figures of its unchanged files.
bool IndexRun::openCache() {
    if (m_useCache && m_shardList.size() > 1) m_mergedPath = mergedCacheFileFor(m_cacheDir, m_root);
    if (!m_mergedPath.empty()) {
        std::string note;
        const bool hit = loadMergedCache(m_mergedPath, m_root, m_wholeDump, m_out, note);
        if (!note.empty()) m_report.cacheNotes.push_back(std::move(note));
        if (hit) {
            m_report.shardsFromCache = m_shardList.size();
            std::set<DumpFormat> seen;  // in enum order, as a rebuild lists them
            for (const auto& r : m_out.ranks) seen.insert(r.format);
            for (DumpFormat f : seen)
                if (f != DumpFormat::Unknown) m_report.formats.emplace_back(dumpFormatName(f));
            return true;
        }
    }
    m_host = hostName();
    m_arena.emplace(m_options.threads ? int(m_options.threads) : tbb::task_arena::automatic);
    m_notes.assign(m_shardList.size(), std::string());
    m_shardFormats.assign(m_shardList.size(), {});
    if (m_useCache) {
        eachShard([&](Shard& s, std::size_t i) { loadCache(s, m_root, m_notes[i]); });
        flushNotes();
    }
    return false;
}

// 3. Build: every shard not reopened from the cache, in three passes (structure, statistics,
// finish); each finished shard is written to its cache entry. False when stopped: nothing is
// published and no cache written.
bool IndexRun::build() {
    scanShards();
    if (m_options.stop.stop_requested()) return false;
    if (!runStatsJobs()) return false;
    finishShards();
    return true;
}

// The structure pass (names, csv, records) per shard, its progress the Listing phase. A shard without statistics jobs
// (statistics only: its statistic.csv rows are its tensors) is finished at once, so only the drafts of the shards being
// parsed are alive, not those of all shards.
void IndexRun::scanShards() {
    // The file count is known from here on: the listing reports the files of each shard listed.
    std::uint64_t listTotal = 0;
    for (const Shard* s : m_shardList)
        if (!s->fromCache) listTotal += s->files.size();
    std::atomic<std::uint64_t> listed{0};
    std::mutex listMutex;
    std::optional<std::chrono::steady_clock::time_point> lastList;
    const auto reportListed = [&](std::uint64_t files) {
        const std::uint64_t done = listed += files;
        if (!m_options.progress || !listTotal) return;
        std::lock_guard lock(listMutex);
        const auto now = std::chrono::steady_clock::now();
        if (lastList && now - *lastList < std::chrono::milliseconds(50) && done != 0 && done != listTotal) return;
        lastList = now;
        Progress p;
        p.filesDone = done;
        p.filesTotal = listTotal;
        p.phase = ProgressPhase::Listing;
        m_options.progress(p);
    };
    reportListed(0);
    tbb::enumerable_thread_specific<DraftBuffers> buffers;  // freed before the merge
    eachShard([&](Shard& s, std::size_t i) {
        if (s.fromCache) return;
        struct Listed {  // counted however the shard's pass ends
            const decltype(reportListed)& report;
            std::uint64_t files;
            ~Listed() { report(files); }
        } listedOnExit{reportListed, s.files.size()};
        s.builder = std::make_unique<ShardBuilder>(m_root, s.rel, s.haveCached ? &s.cached : nullptr);
        s.builder->adoptBuffers(std::move(buffers.local()));
        if (s.builder->scan(s.files, m_options.stop) && s.builder->jobs().empty() && !m_options.stop.stop_requested()) {
            DraftBuffers& mine = buffers.local();  // the same thread's, unless it was stolen meanwhile
            s.result = s.builder->finish();
            mine = s.builder->releaseBuffers();
            finishShard(s, i);
        }
    });
}

// One pool of statistics jobs for all shards; false when a stop left jobs undone.
bool IndexRun::runStatsJobs() {
    struct JobRef {
        Shard* shard;
        std::size_t job;
    };
    std::vector<JobRef> jobs;
    Progress total;
    for (Shard* s : m_shardList) {
        if (s->fromCache) continue;
        m_report.filesReused += s->built ? s->reused : s->builder->reusedFiles();
        if (s->built) continue;
        for (std::size_t j = 0; j < s->builder->jobs().size(); ++j) {
            jobs.push_back({s, j});
            total.bytesTotal += s->builder->jobs()[j].fileSize;
        }
    }
    total.filesTotal = jobs.size();
    ThrottledProgress progress(m_options.progress, total);
    parallelFor(
        tbb::blocked_range<std::size_t>(0, jobs.size(), 8),
        [&](const tbb::blocked_range<std::size_t>& range) {
            std::vector<std::uint8_t> scratch;
            for (std::size_t i = range.begin(); i != range.end(); ++i) {
                if (m_options.stop.stop_requested()) return;
                Shard& s = *jobs[i].shard;
                const StatsJob& job = s.builder->jobs()[jobs[i].job];
                StatsJobResult r = job.reader->run(job, scratch);  // one virtual call per file
                s.builder->applyJob(job, std::move(r));            // each job fills its own draft: no lock needed
                progress.fileDone(job.fileSize);
            }
        },
        &*m_arena);
    m_report.filesRead = progress.filesDone();
    return progress.filesDone() == jobs.size();  // only a stop leaves jobs undone
}

// Every shard not finished yet is finished, and each shard written to its cache entry, in parallel.
void IndexRun::finishShards() {
    eachShard([&](Shard& s, std::size_t i) {
        if (s.fromCache) {
            s.result = std::move(s.cached);
            return;
        }
        if (!s.built) {
            s.result = s.builder->finish();
            finishShard(s, i);
        }
        if (m_useCache) {
            std::string werr;
            if (!writeIndexFile(s.cachePath, s.result, s.fingerprint, kCacheEncoding, werr))
                m_notes[i] = "cache not written: " + s.cachePath + ": " + werr;
        }
    });
    flushNotes();
}

// A builder is freed as soon as its shard is built, so the drafts of all shards and all the
// results are never held together.
void IndexRun::finishShard(Shard& s, std::size_t i) {  // after s.result = s.builder->finish()
    m_shardFormats[i] = s.builder->formats();
    s.reused = s.builder->reusedFiles();
    s.builder.reset();
    s.cached.release();
    s.result.root = m_root;
    for (auto& r : s.result.ranks) {
        r.indexedOn = m_host;
        r.dataRoot = m_root;
    }
    s.built = true;
}

// 4. Merge: the shards into `out` in shard order, finalized, written to the merged cache; the
// formats found.
void IndexRun::merge() {
    m_out = DumpIndex();
    m_out.root = m_root;
    m_out.warnings = m_scan.warnings;
    // One allocation per array, then each shard is appended and freed: linear, and the peak is
    // the index plus one shard's worth of records.
    std::size_t opCount = 0, tensorCount = 0, dimCount = 0, sideCount = 0;
    for (Shard* s : m_shardList) {
        opCount += s->result.ops.size();
        tensorCount += s->result.tensors.size();
        dimCount += s->result.dims.size();
        sideCount += s->result.sides.size();
        ++(s->fromCache ? m_report.shardsFromCache : m_report.shardsIndexed);
    }
    for (std::size_t i = 0; i < m_shardList.size(); ++i) {
        if (i == 1) {  // the first shard was moved in whole; make room for the rest once
            m_out.ops.reserve(opCount);
            m_out.tensors.reserve(tensorCount);
            m_out.dims.reserve(dimCount);
            m_out.sides.reserve(sideCount);
            adviseHugePages(m_out.ops.data(), opCount * sizeof(OpRecord));
            adviseHugePages(m_out.tensors.data(), tensorCount * sizeof(TensorRecord));
            adviseHugePages(m_out.dims.data(), dimCount * sizeof(std::int64_t));
        }
        m_out.merge(std::move(m_shardList[i]->result));
        m_shardList[i]->result.release();
    }
    m_out.finalize();
    m_out.root = m_root;
    if (!m_mergedPath.empty()) {
        std::string werr;
        if (!writeIndexFile(m_mergedPath, m_out, m_wholeDump, kCacheEncoding, werr))
            m_report.cacheNotes.push_back("merged cache not written: " + m_mergedPath + ": " + werr);
    }
    // Formats: what each rebuilt shard's files were written by, plus the cached shards' ranks.
    std::map<DumpFormat, int> formats;
    for (const auto& r : m_out.ranks) formats[r.format]++;
    for (const auto& list : m_shardFormats)
        for (DumpFormat f : list) formats[f]++;
    for (const auto& [f, n] : formats)
        if (f != DumpFormat::Unknown) m_report.formats.emplace_back(dumpFormatName(f));
}

std::string shardOfFile(const std::string& rel) { return shardOf(rel); }

std::string shardCacheFile(const std::string& cacheDir, const std::string& rootAbs, const std::string& shardRel) {
    return cacheFileFor(cacheDir, rootAbs, shardRel);
}

FolderFingerprint shardFingerprint(const std::vector<const ScannedFile*>& files) { return fingerprintOf(files); }

std::string defaultCacheDir() {
    if (const char* d = std::getenv("DUMPLENS_CACHE_DIR"); d && *d) return d;
    if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return std::string(x) + "/dumplens";
    if (const char* h = std::getenv("HOME"); h && *h) return std::string(h) + "/.cache/dumplens";
    return (fs::temp_directory_path() / "dumplens-cache").string();
}

}  // namespace dl
