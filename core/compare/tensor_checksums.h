#pragma once
// Per-tensor checksums of a run for the comparison: msprobe's "md5" field (a CRC-32, written by
// summary_mode "md5", formats.md 3.2). The index does not keep them, so they are read back from
// the run's dump.json files, and only from those that hold an "md5" key.
#include <string>
#include <vector>

#include "core/model/dump_index.h"

namespace dl {

// One entry per tensor of `idx` ("" where none is known); empty when the run has no checksums.
// Files that cannot be read or parsed are named in `warnings`.
std::vector<std::string> loadTensorChecksums(const DumpIndex& idx, std::vector<std::string>& warnings);

}  // namespace dl
