#include "core/compare/msprobe_sidecar.h"

#include "core/compare/msprobe_dump_files.h"

namespace dl {

namespace {

// Scalars and slices: values a run sets in code. Process groups, devices and dtypes name the
// machine or the run's own choice of type, not the computation.
bool comparable(const MsprobeArg& x) {
    return x.tensor < 0 && (x.dtype.rfind("<class '", 0) == 0 || x.dtype == "slice") && x.dtype != "<class 'NoneType'>";
}

}  // namespace

MsprobeSidecar readMsprobeSidecar(const DumpIndex& idx, std::vector<std::string>& warnings) {
    MsprobeSidecar out;
    bool msprobe = false;
    for (const RankInfo& r : idx.ranks) msprobe |= r.format == DumpFormat::Msprobe;
    if (!msprobe || idx.root.empty()) return out;
    std::string error;
    const std::vector<MsprobeDumpFile> files = msprobeDumpFiles(idx, error);
    if (!error.empty()) warnings.push_back("checksums and non-tensor arguments: " + error);
    out.msprobe = !files.empty();
    // (rank, step, entry name) -> op, as MsprobeShard names them.
    std::map<std::tuple<std::uint32_t, std::uint32_t, StrId>, std::uint32_t> ops;
    for (std::uint32_t i = 0; i < idx.ops.size(); ++i)
        ops.emplace(std::make_tuple(idx.ops[i].rank, idx.ops[i].iteration, idx.ops[i].name), i);
    for (const MsprobeDumpFile& f : files) {
        MsprobeDump dump;
        const std::string path = (f.dir / "dump.json").string();
        if (!readMsprobeDumpJson(path, dump, error, true)) {
            warnings.push_back(path + ": checksums and non-tensor arguments not compared: " + error);
            continue;
        }
        for (MsprobeEntry& e : dump.entries) {
            std::vector<MsprobeArg> args;
            for (MsprobeArg& x : e.args)
                if (comparable(x)) args.push_back(std::move(x));
            const auto op = ops.find({f.rank, f.step, idx.strings.find(e.name)});
            if (op != ops.end()) {
                const OpRecord& o = idx.ops[op->second];
                for (const MsprobeTensor& mt : e.tensors) {
                    if (mt.md5.empty()) continue;
                    for (std::uint32_t t = o.firstTensor; t < o.firstTensor + o.tensorCount; ++t) {
                        if (idx.tensors[t].io != mt.io || idx.tensors[t].slot != mt.slot) continue;
                        if (out.md5.empty()) out.md5.resize(idx.tensors.size());
                        out.md5[t] = mt.md5;
                        break;
                    }
                }
            }
            if (!args.empty()) out.arguments.emplace(MsprobeSidecar::EntryKey{f.rank, f.step, e.name}, std::move(args));
        }
    }
    return out;
}

}  // namespace dl
