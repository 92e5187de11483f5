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

bool indexDump(const std::string& path, const IndexOptions& options, DumpIndex& out, IndexReport& report,
               std::string& error) {
    const auto t0 = std::chrono::steady_clock::now();
    std::error_code ec;
    fs::path rootPath = fs::weakly_canonical(fs::absolute(path, ec), ec);
    if (ec || !fs::exists(rootPath, ec)) {
        error = "'" + path + "' does not exist";
        return false;
    }
    // msprobe's own CLI takes the dump.json of a rank: it stands for its folder (dump.json,
    // stack.json, construct.json and dump_tensor_data/ are read together).
    if (rootPath.filename() == "dump.json" && fs::is_regular_file(rootPath, ec)) rootPath = rootPath.parent_path();
    if (!fs::is_directory(rootPath, ec)) {
        if (!fs::is_regular_file(rootPath, ec)) {  // opening a FIFO would wait for a writer for ever
            error = "'" + path + "' is not a folder or a regular file; not read";
            return false;
        }
        if (isIndexFile(rootPath.string())) return loadIndexFile(rootPath.string(), out, report, error);
        error = "'" + path +
            "' is not a folder (point at the dump path, a rank_N folder, an iteration folder, an msprobe dump.json or "
            "a "
            ".dlx index file; use `dumplens-cli inspect` for a single tensor file)";
        return false;
    }
    const std::string rootAbs = rootPath.string();
    // Absolute before the inside-the-dump check: a relative folder that does not exist yet would
    // otherwise compare as relative and never be found inside the dump.
    const fs::path cacheAbs =
        fs::weakly_canonical(fs::absolute(options.cacheDir.empty() ? defaultCacheDir() : options.cacheDir, ec), ec);
    const std::string cacheDir = cacheAbs.string();
    // Against the whole dump, not only the folder given: for dump/rank_0 a cache in dump/.cache is
    // inside the dump too.
    const bool cacheInside = !ec && isInsideOrEqual(cacheAbs, fs::path(dumpExtent(rootAbs)));
    const bool useCache = options.useCache && !ec && !cacheInside;
    if (options.useCache && ec)
        report.cacheNotes.push_back("cache folder unusable (" + ec.message() + "); cache disabled");
    else if (options.useCache && cacheInside)
        report.cacheNotes.push_back("cache folder lies inside the dump; cache disabled (never writing into a dump)");

    // A stopped index publishes nothing: an empty `out`, no cache written, `report.cancelled`.
    const auto cancelled = [&] {
        out = DumpIndex();
        report.cancelled = true;
        report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        return true;
    };
    ScanResult scan = scanFolder(rootAbs, options.stop);
    if (options.stop.stop_requested()) return cancelled();
    std::map<std::string, Shard> shards;
    for (const auto& f : scan.files) shards[shardOf(f.rel)].files.push_back(&f);
    std::vector<Shard*> shardList;  // map order: the merge order, whatever the thread count
    for (auto& [rel, s] : shards) {
        s.rel = rel;
        s.fingerprint = fingerprintOf(s.files);
        if (useCache) s.cachePath = cacheFileFor(cacheDir, rootAbs, rel);
        shardList.push_back(&s);
    }
    const FolderFingerprint wholeDump = combinedFingerprint(shardList);
    const std::string mergedPath =
        useCache && shardList.size() > 1 ? mergedCacheFileFor(cacheDir, rootAbs) : std::string();
    if (!mergedPath.empty()) {
        std::string note;
        const bool hit = loadMergedCache(mergedPath, rootAbs, wholeDump, out, note);
        if (!note.empty()) report.cacheNotes.push_back(std::move(note));
        if (hit) {
            report.shardsFromCache = shardList.size();
            std::set<DumpFormat> seen;  // in enum order, as a rebuild lists them
            for (const auto& r : out.ranks) seen.insert(r.format);
            for (DumpFormat f : seen)
                if (f != DumpFormat::Unknown) report.formats.emplace_back(dumpFormatName(f));
            report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
            return true;
        }
    }
    tbb::task_arena arena(options.threads ? int(options.threads) : tbb::task_arena::automatic);
    // Shards share nothing until the merge: each is loaded, scanned and finished on its own core.
    auto eachShard = [&](auto&& fn) {
        parallelFor(
            std::size_t(0), shardList.size(), [&](std::size_t i) { fn(*shardList[i], i); }, &arena);
    };
    std::vector<std::string> notes(shardList.size());
    auto flushNotes = [&] {
        for (std::string& n : notes)
            if (!n.empty()) report.cacheNotes.push_back(std::move(n));
        notes.assign(shardList.size(), std::string());
    };
    if (useCache) {
        eachShard([&](Shard& s, std::size_t i) { loadCache(s, rootAbs, notes[i]); });
        flushNotes();
    }
    std::vector<std::set<DumpFormat>> shardFormats(shardList.size());
    const std::string host = hostName();
    // A builder is freed as soon as its shard is built, so the drafts of all shards and all the
    // results are never held together.
    const auto finishShard = [&](Shard& s, std::size_t i) {  // after s.result = s.builder->finish()
        shardFormats[i] = s.builder->formats();
        s.reused = s.builder->reusedFiles();
        s.builder.reset();
        s.cached = DumpIndex();
        s.result.root = rootAbs;
        for (auto& r : s.result.ranks) {
            r.indexedOn = host;
            r.dataRoot = rootAbs;
        }
        s.built = true;
    };
    // Structure pass (names, csv, records) per shard, then one pool of statistics jobs for all. A
    // shard without jobs (statistics only: its statistic.csv rows are its tensors) is finished at
    // once, so only the drafts of the shards being parsed are alive, not those of all shards.
    {
        // The file count is known from here on: the listing reports the files of each shard listed.
        std::uint64_t listTotal = 0;
        for (const Shard* s : shardList)
            if (!s->fromCache) listTotal += s->files.size();
        std::atomic<std::uint64_t> listed{0};
        std::mutex listMutex;
        std::optional<std::chrono::steady_clock::time_point> lastList;
        const auto reportListed = [&](std::uint64_t files) {
            const std::uint64_t done = listed += files;
            if (!options.progress || !listTotal) return;
            std::lock_guard lock(listMutex);
            const auto now = std::chrono::steady_clock::now();
            if (lastList && now - *lastList < std::chrono::milliseconds(50) && done != 0 && done != listTotal) return;
            lastList = now;
            Progress p;
            p.filesDone = done;
            p.filesTotal = listTotal;
            p.phase = ProgressPhase::Listing;
            options.progress(p);
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
            s.builder = std::make_unique<ShardBuilder>(rootAbs, s.rel, s.haveCached ? &s.cached : nullptr);
            s.builder->adoptBuffers(std::move(buffers.local()));
            if (s.builder->scan(s.files, options.stop) && s.builder->jobs().empty() && !options.stop.stop_requested()) {
                DraftBuffers& mine = buffers.local();  // the same thread's, unless it was stolen meanwhile
                s.result = s.builder->finish();
                mine = s.builder->releaseBuffers();
                finishShard(s, i);
            }
        });
    }
    if (options.stop.stop_requested()) return cancelled();
    struct JobRef {
        Shard* shard;
        std::size_t job;
    };
    std::vector<JobRef> jobs;
    Progress total;
    for (auto& [rel, s] : shards) {
        if (s.fromCache) continue;
        report.filesReused += s.built ? s.reused : s.builder->reusedFiles();
        if (s.built) continue;
        for (std::size_t j = 0; j < s.builder->jobs().size(); ++j) {
            jobs.push_back({&s, j});
            total.bytesTotal += s.builder->jobs()[j].fileSize;
        }
    }
    total.filesTotal = jobs.size();
    std::atomic<std::uint64_t> filesDone{0}, bytesDone{0};
    std::mutex progressMutex;
    std::optional<std::chrono::steady_clock::time_point> lastReport;  // the first file is reported at once
    parallelFor(
        tbb::blocked_range<std::size_t>(0, jobs.size(), 8),
        [&](const tbb::blocked_range<std::size_t>& range) {
            std::vector<std::uint8_t> scratch;
            for (std::size_t i = range.begin(); i != range.end(); ++i) {
                if (options.stop.stop_requested()) return;
                Shard& s = *jobs[i].shard;
                const StatsJob& job = s.builder->jobs()[jobs[i].job];
                StatsJobResult r = job.reader->run(job, scratch);  // one virtual call per file
                s.builder->applyJob(job, std::move(r));            // each job fills its own draft: no lock needed
                const auto fd = ++filesDone;
                const auto bd = bytesDone += job.fileSize;
                if (options.progress) {
                    std::lock_guard lock(progressMutex);
                    const auto now = std::chrono::steady_clock::now();
                    if (!lastReport || now - *lastReport > std::chrono::milliseconds(50) || fd == jobs.size()) {
                        lastReport = now;
                        options.progress({fd, total.filesTotal, bd, total.bytesTotal});
                    }
                }
            }
        },
        &arena);
    report.filesRead = filesDone.load();
    if (filesDone.load() < jobs.size()) return cancelled();  // only a stop leaves jobs undone

    out = DumpIndex();
    out.root = rootAbs;
    out.warnings = scan.warnings;
    // Finish every shard not finished yet and write the caches, in parallel (a stopped index has
    // returned above: it writes no cache).
    eachShard([&](Shard& s, std::size_t i) {
        if (s.fromCache) {
            s.result = std::move(s.cached);
            return;
        }
        if (!s.built) {
            s.result = s.builder->finish();
            finishShard(s, i);
        }
        if (useCache) {
            std::string werr;
            if (!writeIndexFile(s.cachePath, s.result, s.fingerprint, kCacheEncoding, werr))
                notes[i] = "cache not written: " + s.cachePath + ": " + werr;
        }
    });
    flushNotes();
    // One allocation per array, then each shard is appended and freed: linear, and the peak is
    // the index plus one shard's worth of records.
    std::size_t opCount = 0, tensorCount = 0, dimCount = 0, sideCount = 0;
    for (Shard* s : shardList) {
        opCount += s->result.ops.size();
        tensorCount += s->result.tensors.size();
        dimCount += s->result.dims.size();
        sideCount += s->result.sides.size();
        ++(s->fromCache ? report.shardsFromCache : report.shardsIndexed);
    }
    for (std::size_t i = 0; i < shardList.size(); ++i) {
        if (i == 1) {  // the first shard was moved in whole; make room for the rest once
            out.ops.reserve(opCount);
            out.tensors.reserve(tensorCount);
            out.dims.reserve(dimCount);
            out.sides.reserve(sideCount);
            adviseHugePages(out.ops.data(), opCount * sizeof(OpRecord));
            adviseHugePages(out.tensors.data(), tensorCount * sizeof(TensorRecord));
            adviseHugePages(out.dims.data(), dimCount * sizeof(std::int64_t));
        }
        out.merge(std::move(shardList[i]->result));
        shardList[i]->result = DumpIndex();
    }
    out.finalize();
    out.root = rootAbs;
    if (!mergedPath.empty()) {
        std::string werr;
        if (!writeIndexFile(mergedPath, out, wholeDump, kCacheEncoding, werr))
            report.cacheNotes.push_back("merged cache not written: " + mergedPath + ": " + werr);
    }
    // Formats: what each rebuilt shard's files were written by, plus the cached shards' ranks.
    std::map<DumpFormat, int> formats;
    for (const auto& r : out.ranks) formats[r.format]++;
    for (const auto& list : shardFormats)
        for (DumpFormat f : list) formats[f]++;
    for (const auto& [f, n] : formats)
        if (f != DumpFormat::Unknown) report.formats.emplace_back(dumpFormatName(f));
    report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return true;
}

}  // namespace dl
