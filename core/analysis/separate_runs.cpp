#include "core/analysis/separate_runs.h"

#include <map>
#include <set>

#include "core/index/dump_layout.h"

namespace dl {

std::string runRootOf(const std::string& rankFolder) {
    std::string root;
    for (std::string_view part : splitPath(rankFolder)) {
        if (rankFromFolderName(part) || stepFromFolderName(part)) break;
        if (!root.empty()) root += '/';
        root += part;
    }
    return root;
}

std::vector<std::string> separateRuns(const DumpIndex& index) {
    std::map<std::uint32_t, std::set<std::string>> rootsOf;  // rank -> run roots holding it
    for (const RankInfo& r : index.ranks) rootsOf[r.rank].insert(runRootOf(r.folder));
    bool clash = false;
    for (const auto& [rank, roots] : rootsOf) clash |= roots.size() > 1;
    if (!clash) return {};
    std::set<std::string> all;
    for (const auto& [rank, roots] : rootsOf) all.insert(roots.begin(), roots.end());
    std::vector<std::string> out;
    for (const std::string& r : all) out.push_back(r.empty() ? "." : r);
    return out;
}

std::string separateRunsWarning(const std::vector<std::string>& runs) {
    if (runs.size() < 2) return {};
    std::string names;
    for (std::size_t i = 0; i < runs.size(); ++i) names += (i ? ", " : "") + runs[i];
    return "this folder holds " + std::to_string(runs.size()) + " separate runs (" + names +
        "), each with its own ranks: their ops share one lane per rank number and one verdict; open each run's "
        "folder on its own";
}

}  // namespace dl
