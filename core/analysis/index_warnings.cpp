#include "core/analysis/index_warnings.h"

namespace dl {

bool warningMeansUnreadable(std::string_view reason) {
    // Notes the indexer writes about content it did read (core/index/shard_sources.cpp op order
    // and Opdebug records, shard_builder.cpp duplicates, statistic_csv.cpp columns,
    // msprobe_shard.cpp shapes, dump_scanner.cpp link loops and links to the dump's parents).
    static constexpr std::string_view kNotes[] = {
        "no timestamps in the file names and no execution_order",
        "op(s) without timestamps are not in",
        "duplicate row for the same tensor, kept the first",
        "(identical name fields); kept the first",
        "ignored unknown column",
        "overflow record with every status 0",
        "the file's shape differs from dump.json; using the file's",
        "graph IR names no kernel",
        "folder already visited",
        "symbolic link to a folder that contains the dump",
    };
    for (std::string_view n : kNotes)
        if (reason.find(n) != std::string_view::npos) return false;
    return true;
}

}  // namespace dl
