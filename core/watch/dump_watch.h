#pragma once
// `dumplens-cli watch DIR`: follows a dump while the job writes it and reports the first overflow
// as soon as its file is complete (folder_watcher.h), again whenever a later file moves it
// earlier. Per batch of complete files: the shards they belong to are rebuilt
// (incremental_index.h); the analysis runs again only when a rebuilt shard changed an iteration
// at or before the first overflow so far (or, with none yet, holds a bad tensor or an Opdebug
// record). It then runs on the merged index cut down to what the analysis reads of the clean
// iterations before the first bad one (IncrementalIndex::mergedForFirstOverflow), without replay
// (it would read tensor files again), so its first overflow and chain are what `analyze` gives for
// the files complete so far, however long the run before them.
// Events go to a sink, each with the JSON object `--json` prints and a readable line.
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <stop_token>
#include <string>

#include <nlohmann/json.hpp>

namespace dl {

struct DumpIndex;

// Note: for the user, not an event of the JSON stream (the CLI prints it on stderr): the folder
// awaited, a cache that cannot be written.
enum class WatchEventKind { Watching, Progress, Overflow, Warning, Note, Stopped };

struct WatchEvent {
    WatchEventKind kind = WatchEventKind::Progress;
    nlohmann::json json;  // with its "event" field (null for a Note)
    std::string text;     // one readable line
};

struct WatchOptions {
    std::string dir;
    int settleMs = 500;
    bool useInotify = true;
    bool untilOverflow = false;  // return right after the first overflow event
    bool useCache = true;
    std::string cacheDir;  // empty: defaultCacheDir()
    unsigned threads = 0;
    int progressIntervalMs = 1000;  // at most one progress event per interval
    // The least time between two batches (and at least the last batch's cost): files landing
    // meanwhile wait, so a steady writer gets batches of files instead of one rebuild per file.
    int batchIntervalMs = 50;
    // The most complete files one batch takes (0: all waiting); the rest wait for the next.
    int batchMaxFiles = 20000;
    std::stop_token stop;
    // For a viewer (the app): the merged index of the files complete so far, as `index` would give
    // for them, handed on the watch's thread after files changed it, at most once per
    // snapshotIntervalMs and never sooner than 10 times the last merge took (a large index is
    // merged at most a tenth of the time); the last change is always handed on (at the latest
    // before "stopped").
    // Empty: none is made (the CLI).
    std::function<void(std::shared_ptr<const DumpIndex>)> onSnapshot;
    int snapshotIntervalMs = 250;
    // With a cache and no onSnapshot: an iteration folder untouched for this many batches is
    // written out of memory (IncrementalIndex::setSpill); 0 keeps everything in memory. Counted in
    // batches, not seconds: a folder still filling gets files in every batch, and a loaded watcher's
    // batches grow longer (at 16, a watch behind at 1 s a batch held 16 s of folders: 724 MiB at 1M
    // files instead of ~50); one read back for a late file costs a small read.
    int spillAfterBatches = 3;
};

// The overflow as the event names it (the first_overflow of `analyze --json`, condensed).
struct WatchOverflow {
    std::string opName, opType, tensor, kind;
    std::uint32_t rank = 0, iteration = 0;
    bool operator==(const WatchOverflow&) const = default;
};

struct WatchSummary {
    bool ok = true;  // false: the folder is not usable (error says why)
    std::string error;
    std::string dirAbs;
    std::optional<WatchOverflow> overflow;
    std::uint64_t tensors = 0, files = 0, filesRead = 0, shardBuilds = 0, analyses = 0, tablesParsed = 0;
    std::uint64_t cutAnalyses = 0;     // of the analyses, those of the cut index (the rest: the whole one)
    std::uint64_t tableBytesRead = 0;  // from growing statistic.csv files (IncrementalIndex::tableBytesRead)
    std::set<std::uint32_t> ranks, iterations;
    std::string text;  // "clean so far: ..." or the overflow
};

using WatchSink = std::function<void(const WatchEvent&)>;

// Runs until `options.stop` (or, with untilOverflow, the first overflow event). The sink is
// called on this thread. The last event is always "stopped".
WatchSummary watchDump(const WatchOptions& options, const WatchSink& sink);

// "ranks 0-3, 5" for a set of numbers.
std::string numberRanges(const std::set<std::uint32_t>& values);

}  // namespace dl
