#pragma once
// Non-tensor arguments of two msprobe runs that differ between matched ops: a softmax `dim`, a
// scale, an eps. msprobe's dump.json records them (ints, floats, bools, strings, slices); no
// tensor input differs when only they change, so a comparison of tensors alone names the op's
// output one step late.
#include <cstdint>
#include <string>
#include <vector>

#include "core/compare/msprobe_sidecar.h"
#include "core/compare/run_aligner.h"
#include "core/model/dump_index.h"

namespace dl {

struct ArgumentDifference {
    std::uint32_t op = 0;  // run A's op
    std::string label;     // msprobe's name after the entry: "input.dim", "input.1"
    std::string a, b;      // the values as msprobe prints them ("-2", "0.5", "True")
};

// Differences in run A's op order, from the arguments both runs' sidecars read (readMsprobeSidecar).
// Empty unless both runs are msprobe dumps.
std::vector<ArgumentDifference> compareArguments(const DumpIndex& a, const DumpIndex& b, const RunAlignment& al,
                                                 const MsprobeSidecar& sa, const MsprobeSidecar& sb);

}  // namespace dl
