#include "core/compare/argument_diffs.h"

#include <cmath>
#include <map>
#include <tuple>

#include "core/compare/msprobe_dump_files.h"
#include "core/formats/msprobe/msprobe_dump.h"

namespace dl {

namespace {

// Scalars and slices: values a run sets in code. Process groups, devices and dtypes name the
// machine or the run's own choice of type, not the computation.
bool comparable(const MsprobeArg& x) {
    return x.tensor < 0 && (x.dtype.rfind("<class '", 0) == 0 || x.dtype == "slice") && x.dtype != "<class 'NoneType'>";
}

std::string valueText(const MsprobeArg& x) { return x.stats[0].text; }

using Key = std::tuple<std::uint32_t, std::uint32_t, std::string>;  // rank, step, entry name

// Every entry's comparable arguments, by (rank, step, entry).
bool readArguments(const DumpIndex& idx, std::map<Key, std::vector<MsprobeArg>>& out,
                   std::vector<std::string>& warnings) {
    std::string error;
    const std::vector<MsprobeDumpFile> files = msprobeDumpFiles(idx, error);
    if (files.empty()) return false;
    for (const MsprobeDumpFile& f : files) {
        MsprobeDump d;
        const std::string path = (f.dir / "dump.json").string();
        if (!readMsprobeDumpJson(path, d, error, true)) {
            warnings.push_back(path + ": non-tensor arguments not compared: " + error);
            continue;
        }
        for (MsprobeEntry& e : d.entries) {
            std::vector<MsprobeArg> args;
            for (MsprobeArg& x : e.args)
                if (comparable(x)) args.push_back(std::move(x));
            if (!args.empty()) out.emplace(Key{f.rank, f.step, e.name}, std::move(args));
        }
    }
    return true;
}

}  // namespace

std::vector<ArgumentDifference> compareArguments(const DumpIndex& a, const DumpIndex& b, const RunAlignment& al,
                                                 std::vector<std::string>& warnings) {
    std::vector<ArgumentDifference> out;
    std::map<Key, std::vector<MsprobeArg>> argsA, argsB;
    if (!readArguments(a, argsA, warnings) || argsA.empty() || !readArguments(b, argsB, warnings)) return out;
    for (const OpPair& p : al.ops) {
        const OpRecord &oa = a.ops[p.a], &ob = b.ops[p.b];
        const auto ia = argsA.find(Key{oa.rank, oa.iteration, a.strings.str(oa.name)});
        const auto ib = argsB.find(Key{ob.rank, ob.iteration, b.strings.str(ob.name)});
        if (ia == argsA.end() || ib == argsB.end()) continue;
        for (const MsprobeArg& x : ia->second)
            for (const MsprobeArg& y : ib->second) {
                if (x.label != y.label) continue;
                const double u = x.stats[0].number, v = y.stats[0].number;
                const bool equal = x.stats[0].numeric() && y.stats[0].numeric()
                    ? u == v || (std::isnan(u) && std::isnan(v))
                    : x.dtype == y.dtype && valueText(x) == valueText(y);
                if (!equal) out.push_back({p.a, x.label, valueText(x), valueText(y)});
                break;
            }
    }
    return out;
}

}  // namespace dl
