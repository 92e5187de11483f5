// IncrementalIndex: its units merged into the index one build of the dump gives (per-rank
// decisions made again over the units) and written to the cache beside the dump.
#include <algorithm>
#include <atomic>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <thread>
#include <tuple>

#include "core/index/dump_indexer.h"
#include "core/index/dump_layout.h"
#include "core/index/index_serializer.h"
#include "core/index/shard_builder.h"
#include "core/index/shard_sources.h"
#include "core/watch/incremental_index.h"
#include "core/watch/unit_spill.h"

namespace dl {

// A shard's units as one whole-shard build would give them: the iteration folders, then unit ""
// (so a rank's entry comes from a build that read its tensors), each rank's op order the weakest
// of its folders' (RankInfo::orderSource). With `files`, also every file a whole-shard build would
// be offered, in rel order (what the shard's cache entry vouches for), from the same read of each
// spilled unit.
DumpIndex IncrementalIndex::mergedShard(const Shard& sh, std::vector<ScannedFile>* files, const TakeOf* take) const {
    DumpIndex out;
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
    // Spilled units are read back a chunk at a time, many reads in flight (a long run's dump pushes
    // them out of the page cache: then the reads wait on the disk, ~0.2 ms each, and 16 at once cut
    // that), then merged in rel order on this thread.
    const std::vector<std::string> rels = sh.unitRels();
    constexpr std::size_t kChunk = 1024;
    constexpr std::size_t kReaders = 16;
    std::vector<DumpIndex> back(std::min(kChunk, rels.size()));
    std::vector<std::vector<ScannedFile>> backFiles(back.size());
    std::vector<char> unreadable(back.size());
    std::vector<Take> how(back.size());
    std::vector<std::string> errors(back.size());
    std::vector<const SpilledUnit*> spilledOf(back.size());
    for (std::size_t at = 0; at < rels.size(); at += kChunk) {
        const std::size_t n = std::min(kChunk, rels.size() - at);
        for (std::size_t i = 0; i < n; ++i) {
            const auto s = sh.spilled.find(rels[at + i]);
            spilledOf[i] = s == sh.spilled.end() ? nullptr : &s->second;
            how[i] = spilledOf[i] && take ? (*take)(*spilledOf[i]) : Take::Whole;
        }
        std::atomic<std::size_t> next{0};
        const auto readSome = [&] {
            for (std::size_t i; (i = next.fetch_add(1)) < n;) {
                unreadable[i] = 0;
                if (!spilledOf[i] || how[i] == Take::Skip) continue;
                std::string& error = errors[i];
                try {
                    if (how[i] == Take::Side)
                        unreadable[i] =
                            !m_sideFile->read(spilledOf[i]->sideAt, spilledOf[i]->sideBytes, back[i], error);
                    else
                        unreadable[i] = !readUnitSpill(spillPath(rels[at + i]), back[i], backFiles[i], error);
                } catch (const std::exception& e) {  // out of memory on a reader: that read failed
                    unreadable[i] = 1;
                    error = e.what();
                }
            }
        };
        {
            std::vector<std::jthread> readers;
            for (std::size_t k = 1; k < std::min(kReaders, n); ++k) readers.emplace_back(readSome);
            readSome();
        }
        for (std::size_t i = 0; i < n; ++i) {
            const std::string& unitRel = rels[at + i];
            if (const auto live = sh.units.find(unitRel); live != sh.units.end()) {
                if (files)
                    for (const ScannedFile* f : offeredFiles(sh, "", live->second)) files->push_back(*f);
                if (unitRel.empty()) continue;  // decided first, merged last
                decide(live->second.index);
                if (live->second.built) out.merge(live->second.index);
                continue;
            }
            if (how[i] == Take::Skip) continue;
            if (unreadable[i] && how[i] == Take::Side) throw SideUnreadable(errors[i]);
            if (unreadable[i]) throw SpillUnreadable{unitRel};
            decide(back[i]);
            out.merge(back[i]);
            back[i].release();
            if (files) {
                Unit listed;
                for (ScannedFile& f : backFiles[i]) listed.files.insert(std::move(f));
                for (const ScannedFile* f : offeredFiles(sh, "", listed)) files->push_back(*f);
            }
            backFiles[i].clear();
        }
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

IncrementalIndex::CutIndex IncrementalIndex::mergedForFirstOverflow() {
    while (true) {
        try {
            CutIndex cut;
            std::uint32_t from = std::numeric_limits<std::uint32_t>::max();
            std::set<std::uint32_t> ranksSeen, lossRanks;  // given by a unit taken whole or a side entry
            for (const auto& [rel, sh] : m_shards) {
                for (const auto& [unitRel, u] : sh.units) {
                    if (u.anomalous && !u.iterations.empty()) from = std::min(from, *u.iterations.begin());
                    ranksSeen.insert(u.ranks.begin(), u.ranks.end());
                }
                for (const auto& [unitRel, s] : sh.spilled)
                    if ((s.side & Anomalous) && !s.iterations.empty()) from = std::min(from, s.iterations.front());
            }
            cut.from = from;
            std::set<std::uint32_t> rankInfoKeys;
            bool untimedSeen = false;
            // Units in rel order, shard by shard: a clean unit's side entry is read when it holds
            // comm ops or the first of something the analysis asks only exists (a rank, its
            // RankInfo, a loss or head op on the rank, an untimed op); otherwise it is left out.
            const TakeOf takeOf = [&](const SpilledUnit& s) {
                // No side entry: anomalous, of several ranks, or not written (keepCleanIterationInputs).
                if (!m_sideFile || !s.sideBytes || s.iterations.empty() || s.iterations.back() >= from) {
                    ranksSeen.insert(s.ranks.begin(), s.ranks.end());
                    return Take::Whole;
                }
                const std::uint32_t rank = s.ranks.front();
                bool need = (s.side & Comm) != 0;
                need |= rankInfoKeys.insert(s.rankInfoKey).second;
                need |= ranksSeen.insert(rank).second;
                if (s.side & LossOrHead) need |= lossRanks.insert(rank).second;
                if ((s.side & Untimed) && !untimedSeen) need = untimedSeen = true;
                auto& [ops, tensors] = cut.dropped[rank];
                if (!need) {
                    ops += s.ops;
                    tensors += s.tensors;
                    ++cut.unitsLeftOut;
                    return Take::Skip;
                }
                ops += s.ops - s.sideOps;
                tensors += s.tensors - s.sideTensors;
                ++cut.unitsCut;
                return Take::Side;
            };
            for (const auto& [rel, sh] : m_shards) {
                if (sh.single()) {
                    if (sh.units.begin()->second.built) cut.index.merge(sh.units.begin()->second.index);
                } else {
                    cut.index.merge(mergedShard(sh, nullptr, &takeOf));
                }
            }
            std::erase_if(cut.dropped, [](const auto& d) { return d.second.first == 0 && d.second.second == 0; });
            cut.index.finalize();
            cut.index.root = m_root;
            return cut;
        } catch (const SpillUnreadable& e) {
            rebuildUnreadable(e.unitRel);
        } catch (const SideUnreadable& e) {
            // One damaged entry makes the file suspect: every folder written out so far is read
            // whole from now on, and a new side file serves the folders written out later.
            m_notes.push_back(std::string("watch side file unreadable (") + e.what() +
                              "): a late first overflow's analysis reads the folders written out so far whole");
            for (auto& [rel, sh] : m_shards)
                for (auto& [unitRel, s] : sh.spilled) s.sideBytes = 0;
            m_sideFile = std::make_unique<UnitSideFile>(m_spillDir + "/clean_iterations.dlside");
        }
    }
}

// Ops are ordered by rank, then iteration: every op left out (a clean iteration before `from`)
// of a rank up to this one's comes before an op of an iteration from `from` on, and tensors follow
// their ops. `n` is the op (or tensor) number, `op` its op.
std::optional<std::uint64_t> IncrementalIndex::CutIndex::shifted(std::uint64_t n, std::uint32_t op,
                                                                 bool tensors) const {
    if (op >= index.ops.size()) return std::nullopt;
    const OpRecord& o = index.ops[op];
    if (o.iteration < from && dropped.count(o.rank)) return std::nullopt;
    for (const auto& [rank, d] : dropped) {
        if (rank > o.rank) break;
        n += tensors ? d.second : d.first;
    }
    return n;
}

std::optional<std::uint64_t> IncrementalIndex::CutIndex::wholeOp(std::uint32_t op) const {
    return shifted(op, op, false);
}

std::optional<std::uint64_t> IncrementalIndex::CutIndex::wholeTensor(std::uint32_t tensor) const {
    if (tensor >= index.tensors.size()) return std::nullopt;
    return shifted(tensor, index.tensors[tensor].op, true);
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
                files.clear();
                if (sh.single()) {
                    whole = sh.units.begin()->second.index;
                    for (const ScannedFile* f : offeredFiles(sh, "", sh.units.begin()->second)) files.push_back(*f);
                } else {
                    whole = mergedShard(sh, &files);
                }
                std::sort(files.begin(), files.end(),
                          [](const ScannedFile& a, const ScannedFile& b) { return a.rel < b.rel; });
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
