#pragma once
// Where a tensor's bytes are: the dump root of the machine that indexed its rank (a .dlx index
// may come from a cluster), and what to tell the user when that path is not reachable here.
#include <string>

#include "core/model/dump_index.h"

namespace dl {

// Absolute path of the tensor file; empty when the tensor has no file (statistics only).
std::string tensorDataPath(const DumpIndex& index, const TensorRecord& t);
// True when the file exists here. Otherwise `why` names the file and the host to fetch it from.
bool tensorDataReachable(const DumpIndex& index, const TensorRecord& t, std::string& why);

}  // namespace dl
