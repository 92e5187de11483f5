// IncrementalIndex: its settled units written out of memory and read back (unit_spill.h), apart
// from how units are built (incremental_index.cpp) and merged (incremental_index_merge.cpp).
#include <cstdio>
#include <filesystem>

#include <xxhash.h>

#include "core/index/dump_indexer.h"
#include "core/watch/incremental_index.h"
#include "core/watch/unit_spill.h"

namespace dl {

void IncrementalIndex::setSpill(std::string folder, std::uint64_t afterBatches) {
    m_spillDir = std::move(folder);
    m_spillAfter = afterBatches;
    std::error_code ec;
    if (!m_spillDir.empty()) std::filesystem::create_directories(m_spillDir, ec);
}

std::vector<std::string> IncrementalIndex::takeNotes() { return std::exchange(m_notes, {}); }

std::string IncrementalIndex::spillPath(const std::string& unitRel) const {
    char name[32];
    std::snprintf(name, sizeof name, "%016llx.dlunit",
                  static_cast<unsigned long long>(XXH64(unitRel.data(), unitRel.size(), 0)));
    return m_spillDir + "/" + name;
}

void IncrementalIndex::spill(Unit& u, const std::string& unitRel) {
    const std::vector<ScannedFile> files(u.files.begin(), u.files.end());
    std::string error;
    if (!writeUnitSpill(spillPath(unitRel), u.index, files, error)) {
        m_spillFailed = true;  // said once; the watch goes on in memory
        m_spillQueue.clear();
        m_notes.push_back("watch keeps every unit in memory from now on: " + error);
        return;
    }
    m_spilledTableBytes += u.resume.bytesRead;
    u.spilledTensors = u.index.tensors.size();
    u.spilledOps = u.index.ops.size();
    u.spilledFiles = files.size();
    u.spilledWarnings = u.index.warnings;
    u.spilledRanks = u.index.ranks;
    u.index.release();
    u.files.clear();
    u.resume = ShardResume();
    u.spilled = true;
}

// A spill that cannot be read back is not trusted: the unit's folder is listed again (its own
// files only) and built from the dump (its tensor files read again).
void IncrementalIndex::restore(const std::string& shardRel, Unit& u, const std::string& unitRel) {
    if (!u.spilled) return;
    DumpIndex index;
    std::vector<ScannedFile> files;
    std::string error;
    const std::string path = spillPath(unitRel);
    const bool read = readUnitSpill(path, index, files, error);
    if (read) {
        u.index = std::move(index);
    } else {
        m_notes.push_back("watch state of " + unitRel + " unreadable (" + error + "): its folder is read again");
        files.clear();
        for (ScannedFile& f : scanFolder(m_root + "/" + unitRel).files) {
            f.rel = unitRel + "/" + f.rel;
            if (unitOf(shardRel, f.rel) == unitRel) files.push_back(std::move(f));
        }
        u.index = DumpIndex();
        u.built = false;
    }
    u.files.clear();
    for (ScannedFile& f : files) u.files.insert(std::move(f));
    std::error_code ec;
    std::filesystem::remove(path, ec);
    u.spilled = false;
    u.spilledTensors = u.spilledOps = u.spilledFiles = 0;
    u.spilledWarnings.clear();
    u.spilledRanks.clear();
    if (!read) {
        touch(shardRel, unitRel, u);
    } else if (!m_spillDir.empty() && !m_spillFailed && u.lastTouched != m_batch) {
        u.lastTouched = m_batch;  // read back unchanged (a file handed on again): written out again once settled
        m_spillQueue.emplace_back(m_batch, shardRel, unitRel);
    }
}

const DumpIndex& IncrementalIndex::indexOf(const Unit& u, const std::string& unitRel, DumpIndex& scratch) const {
    if (!u.spilled) return u.index;
    std::vector<ScannedFile> files;
    std::string error;
    scratch = DumpIndex();
    if (!readUnitSpill(spillPath(unitRel), scratch, files, error)) throw SpillUnreadable{unitRel};
    return scratch;
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
        Unit& unit = u->second;
        if (unit.lastTouched == batch && unit.built && !unit.stale && !unit.spilled && !m_spillFailed)
            spill(unit, unitRel);
    }
}

std::size_t IncrementalIndex::spilledUnits() const {
    std::size_t n = 0;
    forEachUnit([&](const Unit& u) { n += u.spilled; });
    return n;
}

// A spilled unit that could not be read back: listed and built again from the dump, so that no
// answer is given without its records.
void IncrementalIndex::rebuildUnreadable(const std::string& unitRel) {
    const std::string shardRel = shardOfFile(unitRel + "/x");
    Shard& sh = m_shards[shardRel];
    Unit& u = sh.units[unitRel];
    restore(shardRel, u, unitRel);
    if (!u.stale) return;  // read back after all
    ShardChange ignored;
    rebuild(shardRel, sh, unitRel, u, {}, ignored);
}

}  // namespace dl
