#pragma once
// Which framework wrote a dump, as the index knows it: MindSpore's .dump_metadata version, or
// msprobe's dump.json "framework", "task" and "level" (kept in RunMetadata::dumpMode as
// "msprobe <task>, level <level>", so the index format carries them without a new field).
#include <string>

#include "core/model/dump_index.h"

namespace dl {

struct RunFramework {
    std::string name;          // "MindSpore", "PyTorch", "MindTorch"; "" unknown
    std::string version;       // MindSpore's ms_version; "" unknown
    std::string msprobeTask;   // "statistics", "tensor", "overflow_check", ...; "" not msprobe
    std::string msprobeLevel;  // "L0", "L1", "mix", "debug"; "" not msprobe or not said
};

// RunMetadata::dumpMode of an msprobe dump.
std::string msprobeDumpMode(const std::string& task, const std::string& level);

RunFramework runFramework(const DumpIndex& index);
// "PyTorch (msprobe, level L1)", "MindSpore 2.2.0", "MindSpore (version unknown)", "unknown".
std::string runFrameworkText(const RunFramework& f);

}  // namespace dl
