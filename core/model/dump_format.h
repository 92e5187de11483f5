#pragma once
// The two enums the format parsers share with the index, apart from dump_index.h so that a parser
// does not rebuild whenever the index's records change.
#include <cstdint>

namespace dl {

enum class Io : std::uint8_t { Input = 0, Output = 1 };

// Which writer produced the data a rank folder holds.
enum class DumpFormat : std::uint8_t {
    Unknown = 0,
    MindSporeNpy,        // rank_N/net/graph/iter/*.npy (+statistic.csv), 1.3+
    MindSporeStatsOnly,  // statistic.csv without tensor files
    MindSporeBin,        // <=1.2 sync .bin
    CannRaw,             // raw CANN dump files
    Msprobe,             // step/rank/dump.json
    PlainNpy,            // any folder of .npy files
};

}  // namespace dl
