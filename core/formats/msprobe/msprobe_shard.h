#pragma once
// The msprobe part of a shard (docs/formats.md 3): every folder holding a dump.json becomes one op per
// entry, in file order, with the entry's tensors and their dump.json statistics. stack.json gives
// call stacks, construct.json the enclosing module; dump_tensor_data/*.npy (MindSpore) are read
// for full statistics, *.pt (PyTorch) are listed with the dump.json figures.
#include <cstdint>
#include <string>
#include <vector>

#include "core/index/dump_scanner.h"
#include "core/index/stats_job.h"
#include "core/model/dump_index.h"

namespace dl {

class MsprobeShard {
public:
    // Reads the msprobe folders among `files` into `out` (ops and tensors appended) and queues a
    // job per saved .npy / .pt tensor (its reader is set by the caller).
    void collect(const std::string& rootAbs, const std::vector<const ScannedFile*>& files, DumpIndex& out,
                 std::vector<StatsJob>& jobs, std::vector<IndexWarning>& warnings);
    bool found() const { return !m_dirs.empty(); }
    // True for the files collect() consumed (json files and dump_tensor_data/ of msprobe folders).
    bool owns(const std::string& rel) const;
    void apply(const StatsJob& job, StatsJobResult&& result);  // worker threads, one slot per job
    void finish(DumpIndex& out);                               // writes the npy figures into the tensors
    void fillRankInfo(const std::string& shardRel, DumpIndex& out) const;

private:
    struct Linked {
        std::uint32_t tensor = 0;
        std::string rel;
        StatsJobResult result;
    };
    struct Dir {
        std::string rel;  // folder of dump.json ("" for the root)
        std::uint32_t rank = 0, step = 0;
        std::string proc;        // "proc1234" when the folder names a process, not a rank
        std::string rankFolder;  // RankInfo::folder: rel without step folders ("rank1", "proc1234")
    };
    void readDir(const std::string& rootAbs, const Dir& dir, const std::vector<const ScannedFile*>& files,
                 DumpIndex& out, std::vector<StatsJob>& jobs, std::vector<IndexWarning>& warnings);
    std::vector<Dir> m_dirs;
    std::vector<Linked> m_linked;
};

}  // namespace dl
