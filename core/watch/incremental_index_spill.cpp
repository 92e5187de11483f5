// IncrementalIndex: its settled units written out of memory and read back (unit_spill.h), apart
// from how units are built (incremental_index.cpp) and merged (incremental_index_merge.cpp).
#include <cstdio>
#include <filesystem>

#include <xxhash.h>

#include "core/analysis/first_overflow_inputs.h"
#include "core/index/dump_indexer.h"
#include "core/watch/incremental_index.h"
#include "core/watch/unit_spill.h"

namespace dl {

void IncrementalIndex::setSpill(std::string folder, std::uint64_t afterBatches) {
    m_spillDir = std::move(folder);
    m_spillAfter = afterBatches;
    std::error_code ec;
    if (!m_spillDir.empty()) std::filesystem::create_directories(m_spillDir, ec);
    m_sideFile = m_spillDir.empty() ? nullptr : std::make_unique<UnitSideFile>(m_spillDir + "/clean_iterations.dlside");
}

std::vector<std::string> IncrementalIndex::takeNotes() { return std::exchange(m_notes, {}); }

std::string IncrementalIndex::spillPath(const std::string& unitRel) const {
    char name[32];
    std::snprintf(name, sizeof name, "%016llx.dlunit",
                  static_cast<unsigned long long>(XXH64(unitRel.data(), unitRel.size(), 0)));
    return m_spillDir + "/" + name;
}

void IncrementalIndex::SpilledTotals::add(const SpilledUnit& s, int sign) {
    const auto by = [&](std::uint64_t& total, std::uint64_t n) { total = sign > 0 ? total + n : total - n; };
    by(tensors, s.tensors);
    by(ops, s.ops);
    by(files, s.files);
    by(units, 1);
    const auto count = [&](std::map<std::uint32_t, std::uint64_t>& units, std::uint32_t key) {
        if (sign > 0)
            ++units[key];
        else if (const auto it = units.find(key); it != units.end() && --it->second == 0)
            units.erase(it);
    };
    for (const std::uint32_t r : s.ranks) count(rankUnits, r);
    for (const std::uint32_t i : s.iterations) count(iterationUnits, i);
}

void IncrementalIndex::spill(Shard& sh, std::map<std::string, Unit>::iterator unit) {
    const std::string& unitRel = unit->first;
    Unit& u = unit->second;
    const std::vector<ScannedFile> files(u.files.begin(), u.files.end());
    std::string error;
    if (!writeUnitSpill(spillPath(unitRel), u.index, files, error)) {
        m_spillFailed = true;  // said once; the watch goes on in memory
        m_spillQueue.clear();
        m_notes.push_back("watch keeps every unit in memory from now on: " + error);
        return;
    }
    m_spilledTableBytes += u.resume.bytesRead;
    SpilledUnit s;
    s.tensors = std::uint32_t(u.index.tensors.size());
    s.ops = std::uint32_t(u.index.ops.size());
    s.files = std::uint32_t(files.size());
    s.ranks.assign(u.ranks.begin(), u.ranks.end());
    s.iterations.assign(u.iterations.begin(), u.iterations.end());
    keepCleanIterationInputs(u, s);
    m_spilled.add(s, +1);
    if (!u.index.warnings.empty()) m_spilledWarnings[unitRel] = std::move(u.index.warnings);
    u.index.release();  // DumpIndex::release frees the string pool's text too
    sh.spilled.emplace(unitRel, std::move(s));
    sh.units.erase(unit);
}

// What the analysis of a later first overflow reads of the unit, should its iterations be clean,
// appended to the side file. A unit of more than one rank is read whole (mergedForFirstOverflow
// numbers what it leaves out per rank), as is one whose entry could not be written.
void IncrementalIndex::keepCleanIterationInputs(const Unit& u, SpilledUnit& s) {
    s.side = u.anomalous ? Anomalous : 0;
    std::uint32_t key = 0;
    for (const RankInfo& r : u.index.ranks) {
        key = std::uint32_t(XXH32(r.folder.data(), r.folder.size(), key));
        key = std::uint32_t(XXH32(&r.rank, sizeof r.rank, key));
    }
    s.rankInfoKey = key;
    if (u.anomalous || u.ranks.size() != 1 || !m_sideFile) return;
    // What it leaves out is counted as its tensors less the entry's: only when every tensor is an
    // op's (merged() keeps no other).
    std::uint64_t opTensors = 0;
    for (const OpRecord& o : u.index.ops) opTensors += o.tensorCount;
    if (opTensors != u.index.tensors.size()) return;
    const CleanIterationInputs in = cleanIterationInputs(u.index);
    const DumpIndex part = u.index.subset(in.ops);
    std::string error;
    if (!m_sideFile->append(part, s.sideAt, s.sideBytes, error)) {
        s.sideBytes = 0;
        return;
    }
    s.sideOps = std::uint32_t(part.ops.size());
    s.sideTensors = std::uint32_t(part.tensors.size());
    s.side |= (in.comm ? Comm : 0) | (in.lossOrHead ? LossOrHead : 0) | (in.untimed ? Untimed : 0);
}

// A spill that cannot be read back is not trusted: the unit's folder is listed again (its own
// files only) and built from the dump (its tensor files read again).
IncrementalIndex::Unit& IncrementalIndex::restore(const std::string& shardRel, Shard& sh, const std::string& rel) {
    const auto s = sh.spilled.find(rel);
    if (s == sh.spilled.end()) return sh.units[rel];
    // Taken out of the map as a node: its key, which `rel` may be, lives as long as it does.
    const auto node = sh.spilled.extract(s);
    const std::string& unitRel = node.key();
    m_spilled.add(node.mapped(), -1);
    const bool anomalous = node.mapped().side & Anomalous;
    m_spilledWarnings.erase(unitRel);
    Unit& u = sh.units[unitRel];
    std::vector<ScannedFile> files;
    std::string error;
    const std::string path = spillPath(unitRel);
    const bool read = readUnitSpill(path, u.index, files, error);
    if (read) {
        u.built = true;
        u.anomalous = anomalous;
        u.digests = iterationDigests(u.index);
        u.noteRanksAndIterations();
    } else {
        m_notes.push_back("watch state of " + unitRel + " unreadable (" + error + "): its folder is read again");
        files.clear();
        for (ScannedFile& f : scanFolder(m_root + "/" + unitRel).files) {
            f.rel = unitRel + "/" + f.rel;
            if (unitOf(shardRel, f.rel) == unitRel) files.push_back(std::move(f));
        }
        u.index = DumpIndex();
    }
    for (ScannedFile& f : files) u.files.insert(std::move(f));
    std::error_code ec;
    std::filesystem::remove(path, ec);
    if (!read) {
        touch(shardRel, unitRel, u);
    } else if (!m_spillDir.empty() && !m_spillFailed && u.lastTouched != m_batch) {
        u.lastTouched = m_batch;  // read back unchanged (a file handed on again): written out again once settled
        m_spillQueue.emplace_back(m_batch, shardRel, unitRel);
    }
    return u;
}

void IncrementalIndex::restoreAll(const std::string& shardRel, Shard& sh) {
    while (!sh.spilled.empty()) restore(shardRel, sh, sh.spilled.begin()->first);
}

void IncrementalIndex::spillSettled() {
    if (m_spillDir.empty() || m_spillFailed) return;
    while (!m_spillQueue.empty() && m_batch - std::get<0>(m_spillQueue.front()) >= m_spillAfter) {
        const auto [batch, shardRel, unitRel] = std::move(m_spillQueue.front());
        m_spillQueue.pop_front();
        const auto sh = m_shards.find(shardRel);
        if (sh == m_shards.end()) continue;
        const auto u = sh->second.units.find(unitRel);
        if (u == sh->second.units.end()) continue;
        const Unit& unit = u->second;
        if (unit.lastTouched == batch && unit.built && !unit.stale && !m_spillFailed) spill(sh->second, u);
    }
}

std::size_t IncrementalIndex::spilledUnits() const { return std::size_t(m_spilled.units); }

// A spilled unit that could not be read back: listed and built again from the dump, so that no
// answer is given without its records.
void IncrementalIndex::rebuildUnreadable(const std::string& unitRel) {
    const std::string shardRel = shardOfFile(unitRel + "/x");
    Shard& sh = m_shards[shardRel];
    Unit& u = restore(shardRel, sh, unitRel);
    if (!u.stale) return;  // read back after all
    ShardChange ignored;
    rebuild(shardRel, sh, unitRel, u, {}, ignored);
}

}  // namespace dl
