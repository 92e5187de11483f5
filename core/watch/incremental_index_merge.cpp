// IncrementalIndex: its units merged into the index one build of the dump gives (per-rank
// decisions made again over the units) and written to the cache beside the dump.
#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <tuple>

#include "core/index/dump_indexer.h"
#include "core/index/dump_layout.h"
#include "core/index/index_serializer.h"
#include "core/index/shard_builder.h"
#include "core/index/shard_sources.h"
#include "core/watch/incremental_index.h"
#include "core/watch/unit_spill.h"

namespace dl {

// Every file a whole-shard build would be offered, in rel order: what the shard's cache entry vouches for.
std::vector<ScannedFile> IncrementalIndex::allFiles(const Shard& sh) const {
    std::vector<ScannedFile> all;
    for (const auto& [unitRel, u] : sh.units)
        for (const ScannedFile* f : offeredFiles(sh, "", u)) all.push_back(*f);
    for (const auto& [unitRel, s] : sh.spilled) {
        Unit back;
        std::vector<ScannedFile> files;
        std::string error;
        if (!readUnitSpill(spillPath(unitRel), back.index, files, error)) throw SpillUnreadable{unitRel};
        for (ScannedFile& f : files) back.files.insert(std::move(f));
        for (const ScannedFile* f : offeredFiles(sh, "", back)) all.push_back(*f);
    }
    std::sort(all.begin(), all.end(), [](const ScannedFile& a, const ScannedFile& b) { return a.rel < b.rel; });
    return all;
}

// A shard's units as one whole-shard build would give them: the iteration folders, then unit ""
// (so a rank's entry comes from a build that read its tensors), each rank's op order the weakest
// of its folders' (RankInfo::orderSource).
DumpIndex IncrementalIndex::mergedShard(const Shard& sh) const {
    DumpIndex out, scratch;
    // What one build decides per rank from all its folders, decided again over the units, in
    // their rel order ("" first): gathered while each unit's index is at hand (a spilled one is
    // read back once).
    struct Decision {
        std::optional<std::string> order;
        std::optional<DumpFormat> named;  // the last folder's, as ShardBuilder::finish lets it win
        DumpFormat mindspore = DumpFormat::Unknown;
    };
    std::map<std::pair<std::uint32_t, std::string>, Decision> decisions;
    const auto decide = [&](const DumpIndex& unit) {
        for (const RankInfo& x : unit.ranks) {
            Decision& d = decisions[{x.rank, x.folder}];
            if (ShardSources::orderSourceStrength(x.orderSource) >= 0 &&
                (!d.order ||
                 ShardSources::orderSourceStrength(x.orderSource) < ShardSources::orderSourceStrength(*d.order)))
                d.order = x.orderSource;
            if (ShardBuilder::namesRankFormat(x.format))
                d.named = x.format;
            else if (ShardSources::rankFormatStrength(x.format) > ShardSources::rankFormatStrength(d.mindspore))
                d.mindspore = x.format;
        }
    };
    const auto base = sh.units.find("");
    if (base != sh.units.end()) decide(base->second.index);
    for (const std::string& unitRel : sh.unitRels()) {
        if (unitRel.empty()) continue;
        const auto live = sh.units.find(unitRel);
        if (live != sh.units.end() && !live->second.built) {
            decide(live->second.index);
            continue;
        }
        const DumpIndex& unit = indexOf(sh, unitRel, scratch);
        decide(unit);
        out.merge(unit);
    }
    if (base != sh.units.end() && base->second.built) out.merge(base->second.index);
    for (RankInfo& r : out.ranks) {
        const auto d = decisions.find({r.rank, r.folder});
        if (d == decisions.end()) continue;
        if (d->second.order) r.orderSource = *d->second.order;
        if (d->second.named)
            r.format = *d->second.named;
        else if (d->second.mindspore != DumpFormat::Unknown)
            r.format = d->second.mindspore;
    }
    // The notes orderOps gives once per rank: each unit's build gave its own; one build, that of the
    // first folder it orders (ShardContext::emitOrder: by iteration and graph).
    std::map<std::pair<int, std::uint32_t>, std::pair<std::tuple<std::uint32_t, std::uint32_t>, std::size_t>> first;
    const auto keyOf = [](const IndexWarning& w, int kind) {
        const std::vector<std::string_view> dirs = splitPath(w.path);
        const DumpLocation loc = locateDumpFolder(dirs);
        return std::pair(std::pair(kind, loc.rank.value_or(0)), std::tuple(loc.iteration.value_or(0), loc.graph));
    };
    for (std::size_t i = 0; i < out.warnings.size(); ++i)
        if (const int kind = ShardSources::oncePerRankNote(out.warnings[i]); kind >= 0) {
            const auto [key, where] = keyOf(out.warnings[i], kind);
            if (const auto it = first.find(key); it == first.end() || where < it->second.first) first[key] = {where, i};
        }
    std::size_t i = 0;
    std::erase_if(out.warnings, [&](const IndexWarning& w) {
        const std::size_t at = i++;
        const int kind = ShardSources::oncePerRankNote(w);
        return kind >= 0 && first.at(keyOf(w, kind).first).second != at;
    });
    return out;
}

DumpIndex IncrementalIndex::merged() {
    while (true) {
        try {
            DumpIndex out;
            // Its records counted before (the spilled units' too): one allocation each, as indexDump.
            out.ops.reserve(ops());
            out.tensors.reserve(tensors());
            for (const auto& [rel, sh] : m_shards) {
                if (sh.single()) {
                    if (sh.units.begin()->second.built) out.merge(sh.units.begin()->second.index);
                } else {
                    out.merge(mergedShard(sh));
                }
            }
            out.finalize();
            out.root = m_root;
            return out;
        } catch (const SpillUnreadable& e) {
            rebuildUnreadable(e.unitRel);
        }
    }
}

std::vector<std::string> IncrementalIndex::writeCaches() {
    std::vector<std::string> notes;
    if (m_cacheDir.empty()) return notes;
    for (auto& [rel, sh] : m_shards) {
        // A shard whose files changed after its last build (a batch cut short by the stop) is not
        // written: its fingerprint would vouch for files its index does not hold.
        if (!sh.cacheDirty || sh.stale()) continue;
        std::string error;
        std::vector<ScannedFile> files;
        DumpIndex whole;
        // A unit whose spill cannot be read back is built again from the dump, then the shard retried.
        for (bool done = false; !done;) {
            try {
                files = allFiles(sh);
                whole = sh.single() ? sh.units.begin()->second.index : mergedShard(sh);
                done = true;
            } catch (const SpillUnreadable& e) {
                rebuildUnreadable(e.unitRel);
            }
        }
        sh.cacheDirty = false;
        std::vector<const ScannedFile*> pointers;
        for (const ScannedFile& f : files) pointers.push_back(&f);
        const FolderFingerprint fingerprint = shardFingerprint(pointers);
        if (!sh.single()) whole.finalize();
        whole.root = m_root;
        if (!writeIndexFile(shardCacheFile(m_cacheDir, m_root, rel), whole, fingerprint, kCacheEncoding, error))
            notes.push_back("cache not written: " + shardCacheFile(m_cacheDir, m_root, rel) + ": " + error);
    }
    return notes;
}

}  // namespace dl
