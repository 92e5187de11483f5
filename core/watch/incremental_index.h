#pragma once
// The index of a dump that is still being written, kept shard by shard (one per rank folder, as
// indexDump splits it: shardOfFile) and, within a shard, folder by iteration folder ("units").
// Complete files (folder_watcher.h) are added in batches; a batch rebuilds only the units it
// touched, through the indexer's own ShardBuilder with the unit's previous build as the "cached"
// index, so a batch costs what it adds, not what the dump holds:
//   - a tensor file whose statistics were computed is never read again (ShardContext::reuse);
//   - a growing statistic.csv is read from where it was left: only the bytes added since the last
//     build are read and parsed (the header's column map and the rows parsed before are kept, a
//     partial last line waits for the next read; a file rewritten or replaced is read again);
//   - a rewritten msprobe dump.json is parsed again whole: msprobe rewrites it whole (json.dump
//     of everything so far, every 1,000 entries and at stop), so it is read once per rewrite,
//     when the rewrite is complete (closed, or its size settled);
//   - the other files of a rebuilt unit are re-listed (names parsed, no file read);
//   - other units are not touched, unless a file of the shard's context changed (execution
//     order, graph IR, .dump_metadata: every iteration folder's build reads them), which rebuilds
//     the whole shard.
// A unit is an iteration folder (dump_layout.h: rank_0/Net/0/7/, CANN's .../{n}/, <=1.2's
// m_iteration7/): ops, their order (ShardSources::orderOps), Opdebug records and statistic.csv
// rows are all per folder, so building the folders apart gives the records of one build. The
// shard's other files (its context, a layout without iteration folders, msprobe's step/rank
// folders: one unit each already) form unit "", built with all of them.
// An msprobe dump_tensor_data/ file waits for its dump.json (before it, it would pass for a
// plain .npy).
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <stdexcept>
#include <stop_token>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "core/index/dump_scanner.h"
#include "core/index/index_serializer.h"
#include "core/index/shard_context_cache.h"
#include "core/index/shard_resume.h"
#include "core/model/dump_index.h"
#include "core/watch/folder_watcher.h"
#include "core/watch/unit_spill.h"

namespace dl {

struct ShardChange {
    std::string shard;                   // "" or "rank_3"
    std::string unit;                    // its iteration folder ("rank_3/Net/0/7"), "" the rest
    std::set<std::uint32_t> iterations;  // whose ops or tensors differ from the last build
    bool anomalous = false;              // holds a bad tensor or an overflow record
};

class IncrementalIndex {
public:
    // `cacheDir` empty: no cache. Otherwise a shard's first build starts from its cache entry
    // (its unchanged files are not read) and writeCaches() stores the built shards there.
    IncrementalIndex(std::string rootAbs, std::string cacheDir, unsigned threads = 0);
    ~IncrementalIndex();
    IncrementalIndex(const IncrementalIndex&) = delete;
    IncrementalIndex& operator=(const IncrementalIndex&) = delete;
    // Writes an iteration folder's unit out of memory (unit_spill.h) once `afterBatches` updates
    // have passed without touching it, into `folder` (removed with this object); it is read back
    // when a file of it changes, and by merged() and writeCaches(). A watch that hands no index to
    // a viewer holds then only the units still changing: its memory stays flat however long the
    // run. 0 (the default): everything stays in memory.
    void setSpill(std::string folder, std::uint64_t afterBatches);
    // Notes for the user since the last call (a spill that could not be written or read back).
    std::vector<std::string> takeNotes();

    // Adds or replaces complete files, drops removed ones, rebuilds the units they belong to.
    // A file handed on again with the size and stamp it had is passed over.
    std::vector<ShardChange> update(const std::vector<WatchedFile>& complete, const std::vector<std::string>& removed,
                                    std::stop_token stop = {});
    // The same, and every file under `removedFolders` (WatchChanges::removedFolders) dropped.
    std::vector<ShardChange> update(const std::vector<WatchedFile>& complete, const std::vector<std::string>& removed,
                                    const std::vector<std::string>& removedFolders, std::stop_token stop = {});
    // Every shard merged in shard order and finalized, as indexDump would give for these files.
    // Reads spilled units back (one rebuilt from the dump when its spill is unreadable).
    DumpIndex merged();
    // merged() less what the analysis of the first overflow does not read (first_overflow_inputs.h):
    // a written-out unit whose iterations all come before `from`, the first iteration any unit
    // holds a bad tensor or an overflow record in, stands in by its clean-iteration inputs (kept
    // apart when it was written out: one small read), or by nothing when another unit already gave
    // what it would. The analysis of the cut index gives merged()'s first overflow and chain, its
    // numbers mapped back by wholeOp/wholeTensor. A watch whose first overflow comes late in a
    // long run so reads back only the iterations from the first bad one on.
    struct CutIndex {
        DumpIndex index;
        std::uint32_t from = 0;
        // Per rank, the ops and tensors left out (all of iterations before `from`).
        std::map<std::uint32_t, std::pair<std::uint64_t, std::uint64_t>> dropped;
        std::uint64_t unitsCut = 0, unitsLeftOut = 0;
        // The number merged() gives an op or tensor of `index`; nullopt for one of an iteration
        // before `from` (numbered among ops left out).
        std::optional<std::uint64_t> wholeOp(std::uint32_t op) const;
        std::optional<std::uint64_t> wholeTensor(std::uint32_t tensor) const;

    private:
        std::optional<std::uint64_t> shifted(std::uint64_t n, std::uint32_t op, bool tensors) const;
    };
    CutIndex mergedForFirstOverflow();

    std::uint64_t tensors() const;
    std::uint64_t ops() const;
    std::size_t files() const;  // complete files known
    std::set<std::uint32_t> ranks() const;
    std::set<std::uint32_t> iterations() const;
    std::uint64_t filesRead() const { return m_filesRead; }  // statistics computed (each once)
    std::uint64_t shardBuilds() const { return m_builds; }   // unit builds
    std::size_t units() const;
    std::size_t spilledUnits() const;
    std::uint64_t tablesParsed() const { return m_tables; }  // statistic.csv / dump.json reads
    // Bytes read from growing statistic.csv files over all builds: what was added, plus the few
    // bytes before it that tell an append from a rewrite.
    std::uint64_t tableBytesRead() const;
    // Every shard's warnings, as its last build left them.
    std::vector<IndexWarning> warnings() const;
    // Writes every shard built since the last call to the cache; the reasons it could not.
    std::vector<std::string> writeCaches();

private:
    struct ByRel {
        using is_transparent = void;
        static const std::string& key(const ScannedFile& f) { return f.rel; }
        static const std::string& key(const std::string& s) { return s; }
        template <class A, class B>
        bool operator()(const A& a, const B& b) const {
            return key(a) < key(b);
        }
    };
    struct Unit {  // held in memory: still changing, or not written out (no spill folder)
        // Complete files, by rel (the rel held once: ~130 bytes a file less than a map by rel).
        std::set<ScannedFile, ByRel> files;
        DumpIndex index;
        bool built = false;
        bool stale = false;  // files changed since the last build
        std::set<std::uint32_t> ranks, iterations;
        std::unordered_map<std::uint32_t, std::uint64_t> digests;  // of `index`, per iteration
        ShardResume resume;                                        // growing files read from where they were left
        std::uint64_t lastTouched = 0;                             // the update that last changed it
        bool anomalous = false;                                    // holds a bad tensor or an overflow record
        // `ranks` and `iterations` from `index` (so the figures need not walk its ops).
        void noteRanksAndIterations() {
            ranks.clear();
            iterations.clear();
            for (const OpRecord& o : index.ops) {
                ranks.insert(o.rank);
                iterations.insert(o.iteration);
            }
        }
    };
    // A settled unit written out of memory (setSpill): what stands in for it until it is read back,
    // ~200 bytes with its map entry against ~1.4 KB for an empty Unit, so that a watch of 200,000
    // iteration folders holds tens of MB. Its warnings, rarely any, are kept in m_spilledWarnings.
    struct SpilledUnit {
        std::vector<std::uint32_t> ranks, iterations;  // those its ops hold (one of each, as a rule)
        // Its clean-iteration inputs (cleanIterationInputs) in m_sideFile: where, how long (0: none
        // kept, it is read whole), how many ops and tensors; what it holds (Side bits).
        std::uint64_t sideAt = 0;
        std::uint32_t tensors = 0, ops = 0, files = 0;
        std::uint32_t sideBytes = 0, sideOps = 0, sideTensors = 0;
        std::uint32_t rankInfoKey = 0;  // a hash of its RankInfo (rank, folder) entries
        std::uint8_t side = 0;
    };
    enum Side : std::uint8_t { Anomalous = 1, Comm = 2, LossOrHead = 4, Untimed = 8 };
    struct SpilledTotals {  // over every spilled unit, so that no figure walks them
        std::uint64_t tensors = 0, ops = 0, files = 0, units = 0;
        std::map<std::uint32_t, std::uint64_t> rankUnits, iterationUnits;  // how many spilled units hold each
        void add(const SpilledUnit& s, int sign);
    };
    struct SideUnreadable : std::runtime_error {
        using std::runtime_error::runtime_error;
    };
    struct SpillUnreadable : std::runtime_error {
        explicit SpillUnreadable(std::string unit)
            : std::runtime_error("watch spill unreadable"), unitRel(std::move(unit)) {}
        std::string unitRel;
    };
    struct Shard {
        std::map<std::string, Unit> units;           // in memory, by iteration folder; "" the shard's other files
        std::map<std::string, SpilledUnit> spilled;  // written out (never ""), by iteration folder
        // Plain .npy files (np.save in program order) are ordered across all their folders by
        // modification time: a shard holding them is built whole, as unit "".
        bool whole = false;
        std::unordered_map<std::string, std::vector<const TensorRecord*>> cachedByUnit;  // of `cached`
        bool cacheTried = false, cacheDirty = false;
        bool hasCached = false;
        DumpIndex cached;  // the shard's cache entry, until the first batch that built it
        bool stale() const;
        bool single() const { return units.size() == 1 && spilled.empty(); }
        // Every unit's rel, in memory or spilled, in rel order ("" first).
        std::vector<std::string> unitRels() const;
    };
    static std::string unitOf(const std::string& shard, const std::string& rel);
    static std::string unitOf(const Shard& sh, const std::string& shard, const std::string& rel) {
        return sh.whole ? std::string() : unitOf(shard, rel);
    }
    // A unit changed this batch: built again in it, written out again once settled.
    void touch(const std::string& shardRel, const std::string& unitRel, Unit& u);
    // Folds every unit of a shard that holds plain .npy into unit "" (Shard::whole).
    void makeWhole(const std::string& shardRel, Shard& sh);
    void rebuild(const std::string& shardRel, Shard& sh, const std::string& unitRel, Unit& u, std::stop_token stop,
                 ShardChange& change);
    static std::unordered_map<std::uint32_t, std::uint64_t> iterationDigests(const DumpIndex& idx);
    static std::vector<const ScannedFile*> offeredFiles(const Shard& sh, const std::string& unitRel, const Unit& u);
    // How mergedShard takes a spilled unit: read whole, its side entry only, or left out.
    enum class Take : std::uint8_t { Whole, Side, Skip };
    // `take`: asked for each spilled unit, in rel order (null: all whole).
    using TakeOf = std::function<Take(const SpilledUnit&)>;
    DumpIndex mergedShard(const Shard& sh, std::vector<ScannedFile>* files = nullptr,
                          const TakeOf* take = nullptr) const;
    std::string spillPath(const std::string& unitRel) const;
    void spill(Shard& sh, std::map<std::string, Unit>::iterator unit);
    void keepCleanIterationInputs(const Unit& u, SpilledUnit& s);
    // Before any change to a unit: one spilled is read back into memory (one whose spill is
    // unreadable is listed and built again from the dump, touched). Returns the unit in memory.
    Unit& restore(const std::string& shardRel, Shard& sh, const std::string& unitRel);
    // Every spilled unit of the shard read back (its context changed, or it is made whole).
    void restoreAll(const std::string& shardRel, Shard& sh);
    void spillSettled();
    void rebuildUnreadable(const std::string& unitRel);
    // The units in memory: those still changing, bounded by the spill (every unit without one).
    template <class F>
    void forEachUnit(F&& f) const {
        for (const auto& [rel, sh] : m_shards)
            for (const auto& [unitRel, u] : sh.units) f(u);
    }

    std::string m_root, m_cacheDir;
    unsigned m_threads;
    std::map<std::string, Shard> m_shards;
    std::uint64_t m_filesRead = 0, m_builds = 0, m_tables = 0;
    std::string m_spillDir;
    std::uint64_t m_spillAfter = 0, m_batch = 0;
    std::deque<std::tuple<std::uint64_t, std::string, std::string>> m_spillQueue;  // (batch touched, shard, unit)
    mutable std::vector<std::string> m_notes;
    std::set<std::string> m_touched;        // shards with a unit to build, this update
    std::uint64_t m_spilledTableBytes = 0;  // tableBytesRead of units whose resume state was spilled
    SpilledTotals m_spilled;
    ShardContextCache m_context;  // the shards' order files, parsed once for all their units' builds
    std::map<std::string, std::vector<IndexWarning>> m_spilledWarnings;  // by unit rel, those that have any
    bool m_spillFailed = false;
    std::unique_ptr<UnitSideFile> m_sideFile;  // the written-out units' clean-iteration inputs
};

}  // namespace dl
