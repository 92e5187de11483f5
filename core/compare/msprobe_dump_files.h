#pragma once
// The dump.json files of an msprobe run, with the rank and step their folders name: what the
// msprobe table and the argument comparison read beside the index.
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "core/model/dump_index.h"

namespace dl {

struct MsprobeDumpFile {
    std::uint32_t rank = 0, step = 0;
    std::filesystem::path dir;  // the folder holding dump.json
};

// Every dump.json under the run's root (a dump.json root stands for its folder; dump_tensor_data
// folders skipped), ordered by rank, step. Empty for runs that are not msprobe dumps; `error`
// set when the folder cannot be listed.
std::vector<MsprobeDumpFile> msprobeDumpFiles(const DumpIndex& idx, std::string& error);

}  // namespace dl
