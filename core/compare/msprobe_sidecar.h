#pragma once
// What the comparison reads from an msprobe run's dump.json files beside the index, in one parse
// of each file: the per-tensor checksums (msprobe's "md5", a CRC-32 written by summary_mode "md5",
// formats.md 3.2) and the non-tensor arguments (a softmax `dim`, a scale, an eps), neither of which
// the index keeps.
#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "core/formats/msprobe/msprobe_dump.h"
#include "core/model/dump_index.h"

namespace dl {

struct MsprobeSidecar {
    // One entry per tensor of the index ("" where none is known); empty when the run has none.
    std::vector<std::string> md5;
    // Every entry's comparable arguments (scalars and slices) by (rank, step, entry name).
    using EntryKey = std::tuple<std::uint32_t, std::uint32_t, std::string>;
    std::map<EntryKey, std::vector<MsprobeArg>> arguments;
    bool msprobe = false;  // the run is an msprobe dump whose dump.json files were listed
};

// Empty (msprobe false) for runs that are not msprobe dumps. A dump.json that cannot be read or
// parsed adds a warning naming it and what is missing because of it.
MsprobeSidecar readMsprobeSidecar(const DumpIndex& idx, std::vector<std::string>& warnings);

}  // namespace dl
