#include "core/distributed/index_merge.h"

#include <set>

#include "core/index/dump_indexer.h"
#include "core/index/index_file.h"
#include "core/index/output_guard.h"

namespace dl {

void rebaseIndex(DumpIndex& index, const std::string& shardRel, const std::string& dumpRoot) {
    if (!shardRel.empty()) {
        const std::string prefix = shardRel + "/";
        // Strings are shared by many records: rewrite each referenced path id once.
        std::vector<StrId> remap(index.strings.size(), 0xffffffffu);
        auto rebase = [&](StrId& id) {
            if (id == 0) return;
            if (remap[id] == 0xffffffffu) remap[id] = index.strings.intern(prefix + index.strings.str(id));
            id = remap[id];
        };
        for (auto& s : index.sides) rebase(s.file);
        for (auto& o : index.overflows) rebase(o.file);
        for (auto& w : index.warnings) w.path = prefix + w.path;
        for (auto& r : index.ranks) r.folder = r.folder.empty() ? shardRel : prefix + r.folder;
    }
    index.root = dumpRoot;
}

bool indexShards(const std::string& root, const std::vector<std::string>& shardRels, unsigned threads, bool useCache,
                 DumpIndex& out, std::string& error) {
    out = DumpIndex();
    out.root = root;
    for (const auto& rel : shardRels) {
        DumpIndex shard;
        IndexReport report;
        IndexOptions opt;
        opt.threads = threads;
        opt.useCache = useCache;
        std::string err;
        if (!indexDump(rel.empty() ? root : root + "/" + rel, opt, shard, report, err)) {
            out.warnings.push_back(
                {rel.empty() ? "." : rel, "folder not indexed: " + err, WarningSeverity::Unreadable});
            continue;
        }
        rebaseIndex(shard, rel, root);
        out.merge(std::move(shard));
    }
    out.finalize();
    out.root = root;
    (void)error;
    return true;
}

bool mergeIndexFiles(const std::vector<std::string>& paths, DumpIndex& out, std::string& error,
                     std::vector<std::string>* inputDumps) {
    out = DumpIndex();
    std::set<std::pair<std::string, std::uint32_t>> seenRanks;  // (folder, rank)
    std::size_t loaded = 0;
    for (const auto& path : paths) {
        DumpIndex part;
        IndexReport report;
        std::string err;
        if (!loadIndexFile(path, part, report, err)) {
            out.warnings.push_back({path, "index file not merged: " + err, WarningSeverity::Unreadable});
            continue;
        }
        if (inputDumps)
            for (std::string& r : dumpRootsOf(part)) inputDumps->push_back(std::move(r));
        bool duplicate = false;
        for (const auto& r : part.ranks)
            if (seenRanks.count({r.folder, r.rank})) duplicate = true;
        if (duplicate) {
            out.warnings.push_back({path, "holds a rank folder already merged from an earlier file; skipped",
                                    WarningSeverity::Unreadable});
            continue;
        }
        for (const auto& r : part.ranks) seenRanks.insert({r.folder, r.rank});
        if (out.root.empty())
            out.root = part.root;
        else if (part.root != out.root)
            out.warnings.push_back({path,
                                    "indexed with dump root " + part.root + " (first file: " + out.root +
                                        "); its files are reached through its ranks' data roots",
                                    WarningSeverity::Note});
        out.merge(std::move(part));
        ++loaded;
    }
    out.finalize();
    if (loaded == 0) {
        error = "none of the " + std::to_string(paths.size()) + " index file(s) could be read";
        for (const auto& w : out.warnings) error += "\n  " + w.path + ": " + w.reason;
        return false;
    }
    return true;
}

}  // namespace dl
