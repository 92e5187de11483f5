#pragma once
// Combining shard indexes built anywhere (MPI processes, a Slurm array, a shell loop per node)
// into one index whose paths are relative to the dump root.
#include <string>
#include <vector>

#include "core/model/dump_index.h"

namespace dl {

// An index built with a rank folder as its root, re-expressed relative to the dump root: file
// paths and rank folders get the `shardRel/` prefix.
void rebaseIndex(DumpIndex& index, const std::string& shardRel, const std::string& dumpRoot);

// Indexes the given shards of `root` (each on its own, so any subset works) and returns them
// merged and rebased. Shards that fail become warnings naming the folder.
bool indexShards(const std::string& root, const std::vector<std::string>& shardRels, unsigned threads, bool useCache,
                 DumpIndex& out, std::string& error);

// Merges index files (.dlx or cache shards). Unreadable files become warnings; false only when
// none could be read. Ops of a rank that appears in two inputs are kept from the first, with a warning.
// `inputDumps`, when given, receives the dumps every readable input was made from (dumpRootsOf),
// skipped duplicates included: an output must go into none of them.
bool mergeIndexFiles(const std::vector<std::string>& paths, DumpIndex& out, std::string& error,
                     std::vector<std::string>* inputDumps = nullptr);

}  // namespace dl
