#include "core/watch/dump_watch.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <map>
#include <utility>

#include "core/analysis/analysis_json.h"
#include "core/analysis/overflow_analyzer.h"
#include "core/index/dump_indexer.h"
#include "core/index/output_guard.h"
#include "core/watch/folder_watcher.h"
#include "core/watch/incremental_index.h"
#include "core/watch/unit_spill.h"

namespace dl {
namespace fs = std::filesystem;
using nlohmann::json;
namespace {

using Clock = std::chrono::steady_clock;

std::string overflowText(const WatchOverflow& o) {
    return o.opType + " " + o.opName + " on rank " + std::to_string(o.rank) + ", iteration " +
        std::to_string(o.iteration) + ", " + o.tensor + " (" + o.kind + ")";
}

std::string cleanText(const IncrementalIndex& idx) {
    const auto ranks = idx.ranks(), its = idx.iterations();
    return "clean so far: " + std::to_string(idx.tensors()) + " tensors, ranks " +
        (ranks.empty() ? std::string("none") : numberRanges(ranks)) + ", iterations " +
        (its.empty() ? std::string("none") : numberRanges(its));
}

// Whether the batch can have changed the first overflow: with one, only a change at or before
// its iteration (a later iteration cannot hold an earlier overflow); without, only a shard that
// holds a bad tensor or an Opdebug record can make one.
bool worthAnalysing(const std::vector<ShardChange>& changes, const std::optional<std::uint32_t>& firstBad) {
    for (const ShardChange& c : changes) {
        if (!firstBad && c.anomalous) return true;
        if (firstBad && !c.iterations.empty() && *c.iterations.begin() <= *firstBad) return true;
    }
    return false;
}

// The first overflow and chain of the files complete so far, as `analyze --json` gives them,
// without replay (it would read tensor files again). Analysed on the index cut down to what the
// analysis reads of the clean iterations before the first bad one (first_overflow_inputs.h), so a
// late first overflow does not read the whole run back; on the whole index when the cut one
// names an op it cannot number as the whole one does.
struct Verdict {
    bool cancelled = false, overflow = false, cut = false;
    json firstOverflow, chain;
};

Verdict firstOverflowSoFar(IncrementalIndex& idx, std::stop_token stop) {
    AnalysisOptions ao;
    ao.replay = false;
    ao.stop = stop;
    Verdict v;
    {
        const IncrementalIndex::CutIndex cut = idx.mergedForFirstOverflow();
        const AnalysisResult r = analyze(cut.index, ao);
        v.cancelled = r.cancelled;
        v.cut = true;
        if (r.cancelled || !r.firstOverflow) return v;
        v.firstOverflow = firstOverflowJson(cut.index, r);
        v.chain = chainJson(cut.index, r);
        const auto op = [&](std::uint32_t i) { return cut.wholeOp(i); };
        const auto tensor = [&](std::uint32_t i) { return cut.wholeTensor(i); };
        v.overflow = v.cut = renumberIndices(v.firstOverflow, op, tensor) && renumberIndices(v.chain, op, tensor);
        if (v.cut) return v;
    }
    const DumpIndex merged = idx.merged();
    const AnalysisResult r = analyze(merged, ao);
    v.cancelled = r.cancelled;
    v.overflow = !r.cancelled && r.firstOverflow;
    if (v.overflow) {
        v.firstOverflow = firstOverflowJson(merged, r);
        v.chain = chainJson(merged, r);
    }
    return v;
}

}  // namespace

std::string numberRanges(const std::set<std::uint32_t>& values) {
    std::string out;
    for (auto it = values.begin(); it != values.end();) {
        const std::uint32_t first = *it;
        std::uint32_t last = first;
        while (++it != values.end() && *it == last + 1) last = *it;
        if (!out.empty()) out += ", ";
        out += std::to_string(first);
        if (last != first) out += "-" + std::to_string(last);
    }
    return out;
}

WatchSummary watchDump(const WatchOptions& opt, const WatchSink& sink) {
    WatchSummary summary;
    std::error_code ec;
    const fs::path dirAbs = fs::weakly_canonical(fs::absolute(opt.dir, ec), ec);
    summary.dirAbs = dirAbs.string();
    if (ec || (fs::exists(dirAbs, ec) && !fs::is_directory(dirAbs, ec))) {
        summary.ok = false;
        summary.error = "'" + opt.dir + "' is not a folder";
        return summary;
    }
    const auto note = [&](const std::string& text) { sink({WatchEventKind::Note, nullptr, text}); };
    // The cache as indexDump keeps it: beside the dump, never inside it.
    std::string cacheDir;
    if (opt.useCache) {
        const fs::path cacheAbs =
            fs::weakly_canonical(fs::absolute(opt.cacheDir.empty() ? defaultCacheDir() : opt.cacheDir, ec), ec);
        if (ec)
            note("cache folder unusable (" + ec.message() + "); cache disabled");
        else if (isInsideOrEqual(cacheAbs, dirAbs))
            note("cache folder lies inside the watched folder; cache disabled (never writing into a dump)");
        else
            cacheDir = cacheAbs.string();
    }
    FolderWatcher watcher(summary.dirAbs, {opt.settleMs, -1, opt.useInotify});
    IncrementalIndex idx(summary.dirAbs, cacheDir, opt.threads);
    // Without a viewer nothing needs the whole index between analyses: settled iteration folders go
    // to the cache folder, and the watch's memory stays flat however long the run.
    if (!cacheDir.empty() && !opt.onSnapshot && opt.spillAfterBatches > 0)
        idx.setSpill(unitSpillFolder(cacheDir, summary.dirAbs), std::uint64_t(opt.spillAfterBatches));
    std::optional<std::uint32_t> firstBad;
    json lastOverflow = nullptr;
    bool progressDirty = false, stoppedByOverflow = false, snapshotDirty = false;
    Clock::time_point lastProgress{}, lastSnapshot{};
    Clock::duration snapshotCost{};  // the last merge: the next waits 10 times that (a tenth of a core)
    const auto handSnapshot = [&](Clock::time_point at) {
        snapshotDirty = false;
        lastSnapshot = at;
        auto snapshot = std::make_shared<const DumpIndex>(idx.merged());
        snapshotCost = Clock::now() - at;
        opt.onSnapshot(std::move(snapshot));
    };
    std::map<std::pair<std::string, std::string>, Clock::time_point> pendingWarnings;
    std::map<std::pair<std::string, std::string>, WarningSeverity> severities;
    std::set<std::pair<std::string, std::string>> warned;
    if (!fs::exists(dirAbs, ec)) note("waiting for " + summary.dirAbs + " to appear");

    // Complete files wait here while the last batch's cost has not passed since it ended: a batch
    // re-lists every unit (iteration folder) it touches, so back-to-back batches under a steady
    // writer would take a whole core; paced so, batches take at most about half of one, and grow.
    WatchChanges pending;
    Clock::time_point lastBatchEnd{};
    Clock::duration lastBatchCost{};
    // A unit being filled is rebuilt whole by every batch that adds to it, so many small batches
    // cost more than a few larger ones: a batch also waits batchIntervalMs after the last.
    const auto batchGap = [&] {
        return std::max<Clock::duration>(lastBatchCost, std::chrono::milliseconds(opt.batchIntervalMs));
    };
    const auto addPending = [&](WatchChanges& ch) {
        for (const std::string& rel : ch.removed)
            std::erase_if(pending.complete, [&](const WatchedFile& f) { return f.rel == rel; });
        for (const std::string& dir : ch.removedFolders)
            std::erase_if(pending.complete, [&](const WatchedFile& f) { return f.rel.starts_with(dir + "/"); });
        pending.removed.insert(pending.removed.end(), ch.removed.begin(), ch.removed.end());
        pending.removedFolders.insert(pending.removedFolders.end(), ch.removedFolders.begin(), ch.removedFolders.end());
        pending.complete.insert(pending.complete.end(), std::make_move_iterator(ch.complete.begin()),
                                std::make_move_iterator(ch.complete.end()));
    };

    while (!opt.stop.stop_requested() && !stoppedByOverflow) {
        const bool waiting = !pending.complete.empty() || !pending.removed.empty() || !pending.removedFolders.empty();
        const auto dueIn =
            std::chrono::duration_cast<std::chrono::milliseconds>(lastBatchEnd + batchGap() - Clock::now());
        WatchChanges ch = watcher.poll(waiting ? int(std::clamp<std::int64_t>(dueIn.count() + 1, 1, 100)) : 100);
        const auto now = Clock::now();
        addPending(ch);
        for (const std::string& n : ch.notes)
            sink({WatchEventKind::Warning,
                  {{"event", "warning"}, {"path", summary.dirAbs}, {"reason", n}, {"severity", "note"}},
                  "warning: " + n});
        if (ch.appeared)
            sink({WatchEventKind::Watching,
                  {{"event", "watching"},
                   {"dir", summary.dirAbs},
                   {"mode", watcher.usingInotify() ? "inotify" : "rescan"},
                   {"settle_ms", opt.settleMs}},
                  "watching " + summary.dirAbs + " (" + (watcher.usingInotify() ? "inotify" : "rescanning") +
                      ", settle " + std::to_string(opt.settleMs) + " ms)"});
        if ((!pending.complete.empty() || !pending.removed.empty() || !pending.removedFolders.empty()) &&
            now - lastBatchEnd >= batchGap()) {
            // A watch behind a writer takes its backlog in batches of at most batchMaxFiles: what a
            // batch builds is held until its folders settle, so an unbounded batch would hold it all.
            WatchChanges batch;
            if (opt.batchMaxFiles > 0 && pending.complete.size() > std::size_t(opt.batchMaxFiles)) {
                const auto cut = pending.complete.begin() + opt.batchMaxFiles;
                batch.complete.assign(std::make_move_iterator(pending.complete.begin()), std::make_move_iterator(cut));
                pending.complete.erase(pending.complete.begin(), cut);
                batch.removed = std::exchange(pending.removed, {});
                batch.removedFolders = std::exchange(pending.removedFolders, {});
            } else {
                batch = std::exchange(pending, WatchChanges{});
            }
            const std::vector<ShardChange> changes =
                idx.update(batch.complete, batch.removed, batch.removedFolders, opt.stop);
            progressDirty = true;
            snapshotDirty = static_cast<bool>(opt.onSnapshot);
            for (const std::string& n : idx.takeNotes()) note(n);
            if (worthAnalysing(changes, firstBad) && !opt.stop.stop_requested()) {
                const Verdict v = firstOverflowSoFar(idx, opt.stop);
                ++summary.analyses;
                summary.cutAnalyses += v.cut;
                if (!v.cancelled && v.overflow) {
                    const json& fo = v.firstOverflow;
                    WatchOverflow w{fo["op_name"], fo["op_type"], fo["tensor"],
                                    fo["kind"],    fo["rank"],    fo["iteration"]};
                    firstBad = w.iteration;
                    if (!summary.overflow || !(*summary.overflow == w)) {
                        json e = {{"event", "overflow"},
                                  {"first_overflow", fo},
                                  {"chain", v.chain},
                                  {"moved_from",
                                   lastOverflow.is_null() ? json(nullptr)
                                                          : json{{"op_name", lastOverflow["op_name"]},
                                                                 {"rank", lastOverflow["rank"]},
                                                                 {"iteration", lastOverflow["iteration"]}}},
                                  {"files", idx.files()},
                                  {"tensors", idx.tensors()}};
                        const std::string text =
                            std::string(summary.overflow ? "first overflow moved: " : "OVERFLOW: ") + overflowText(w) +
                            "; chain of " + std::to_string(v.chain.size()) + " step(s)";
                        summary.overflow = w;
                        lastOverflow = fo;
                        sink({WatchEventKind::Overflow, std::move(e), text});
                        if (opt.untilOverflow) stoppedByOverflow = true;
                    }
                } else if (!v.cancelled) {
                    firstBad.reset();  // files were replaced or removed: it is gone
                }
            }
            severities.clear();
            for (const IndexWarning& w : idx.warnings()) {
                auto key = std::make_pair(w.path, w.reason);
                severities.emplace(key, w.severity);
                pendingWarnings.emplace(key, now);
            }
            std::erase_if(pendingWarnings, [&](const auto& p) { return !severities.count(p.first); });
            lastBatchEnd = Clock::now();
            lastBatchCost = lastBatchEnd - now;
        }
        if (stoppedByOverflow) break;  // --until-overflow: the overflow event is the last before "stopped"
        // A warning is news once the file it names has stayed as it was for the settle time:
        // a file being written again would be read again.
        for (const auto& [key, since] : pendingWarnings) {
            if (warned.count(key) || now - since < std::chrono::milliseconds(opt.settleMs) ||
                watcher.isIncomplete(key.first))
                continue;
            warned.insert(key);
            const bool unreadable = severities[key] == WarningSeverity::Unreadable;
            sink({WatchEventKind::Warning,
                  {{"event", "warning"},
                   {"path", key.first},
                   {"reason", key.second},
                   {"severity", unreadable ? "unreadable" : "note"}},
                  "warning: " + key.first + ": " + key.second});
        }
        if (progressDirty && now - lastProgress >= std::chrono::milliseconds(opt.progressIntervalMs)) {
            progressDirty = false;
            lastProgress = now;
            const auto ranks = idx.ranks(), its = idx.iterations();
            json e = {{"event", "progress"},
                      {"files", idx.files()},
                      {"tensors", idx.tensors()},
                      {"ops", idx.ops()},
                      {"ranks", ranks},
                      {"iterations", its.size()},
                      {"first_iteration", its.empty() ? json(nullptr) : json(*its.begin())},
                      {"last_iteration", its.empty() ? json(nullptr) : json(*its.rbegin())},
                      {"files_being_written", watcher.incompleteFiles()},
                      {"behind_ms", watcher.oldestIncomplete().count()},
                      {"files_read", idx.filesRead()},
                      {"shard_builds", idx.shardBuilds()},
                      {"analyses", summary.analyses}};
            sink({WatchEventKind::Progress, std::move(e),
                  std::to_string(idx.files()) + " files, " + std::to_string(idx.tensors()) + " tensors, ranks " +
                      (ranks.empty() ? std::string("none") : numberRanges(ranks)) + ", iterations " +
                      (its.empty() ? std::string("none") : numberRanges(its)) + ", " +
                      std::to_string(watcher.incompleteFiles()) + " being written"});
        }
        if (snapshotDirty &&
            now - lastSnapshot >=
                std::max<Clock::duration>(std::chrono::milliseconds(opt.snapshotIntervalMs), 10 * snapshotCost))
            handSnapshot(now);
    }
    if (snapshotDirty) handSnapshot(Clock::now());
    // The cache beside the dump, as `index` keeps it; said once when it cannot be written.
    const std::vector<std::string> cacheNotes = idx.writeCaches();
    if (!cacheNotes.empty())
        note(cacheNotes.front() +
             (cacheNotes.size() > 1 ? " (and " + std::to_string(cacheNotes.size() - 1) + " more shard(s))" : ""));
    summary.tensors = idx.tensors();
    summary.files = idx.files();
    summary.filesRead = idx.filesRead();
    summary.shardBuilds = idx.shardBuilds();
    summary.tablesParsed = idx.tablesParsed();
    summary.tableBytesRead = idx.tableBytesRead();
    summary.ranks = idx.ranks();
    summary.iterations = idx.iterations();
    summary.text = summary.overflow ? "overflow: " + overflowText(*summary.overflow) : cleanText(idx);
    sink({WatchEventKind::Stopped,
          {{"event", "stopped"},
           {"reason", stoppedByOverflow ? "until_overflow" : "signal"},
           {"overflow", summary.overflow.has_value()},
           {"first_overflow", lastOverflow},
           {"files", summary.files},
           {"tensors", summary.tensors},
           {"ranks", summary.ranks},
           {"iterations", summary.iterations.size()},
           {"files_read", summary.filesRead},
           {"shard_builds", summary.shardBuilds},
           {"analyses", summary.analyses},
           {"summary", summary.text}},
          summary.text});
    return summary;
}

}  // namespace dl
