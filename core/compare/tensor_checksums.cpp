#include "core/compare/tensor_checksums.h"

#include <cstring>
#include <filesystem>
#include <map>
#include <system_error>
#include <tuple>

#include "core/formats/msprobe/msprobe_dump.h"
#include "core/index/dump_layout.h"
#include "core/util/read_file.h"

namespace dl {

namespace fs = std::filesystem;

std::vector<std::string> loadTensorChecksums(const DumpIndex& idx, std::vector<std::string>& warnings) {
    bool msprobe = false;
    for (const RankInfo& r : idx.ranks) msprobe |= r.format == DumpFormat::Msprobe;
    if (!msprobe || idx.root.empty()) return {};
    std::error_code ec;
    fs::path root(idx.root);
    if (fs::is_regular_file(root, ec)) root = root.parent_path();
    // (rank, step, entry name) -> op, as MsprobeShard names them.
    std::map<std::tuple<std::uint32_t, std::uint32_t, StrId>, std::uint32_t> ops;
    for (std::uint32_t i = 0; i < idx.ops.size(); ++i)
        ops.emplace(std::make_tuple(idx.ops[i].rank, idx.ops[i].iteration, idx.ops[i].name), i);
    std::vector<std::string> out;
    fs::recursive_directory_iterator it(root, fs::directory_options::skip_permission_denied, ec), end;
    for (; !ec && it != end; it.increment(ec)) {
        if (it->is_directory(ec) && it->path().filename() == "dump_tensor_data") {
            it.disable_recursion_pending();
            continue;
        }
        if (it->path().filename() != "dump.json") continue;
        const std::string path = it->path().string();
        std::string text, error;
        if (!readFileText(path, text, error)) {
            warnings.push_back("checksums: " + error);
            continue;
        }
        if (!memmem(text.data(), text.size(), "\"md5\"", 5)) continue;
        MsprobeDump dump;
        if (!parseMsprobeDumpJson(text, dump, error)) {
            warnings.push_back("checksums: " + path + ": " + error);
            continue;
        }
        std::uint32_t rank = 0, step = 0;
        const std::string dir = it->path().parent_path().string();
        for (std::string_view part : splitPath(dir)) {
            if (auto r = rankFromFolderName(part)) rank = *r;
            if (auto s = stepFromFolderName(part)) step = *s;
        }
        for (const MsprobeEntry& e : dump.entries) {
            const StrId name = idx.strings.find(e.name);
            const auto op = ops.find({rank, step, name});
            if (op == ops.end()) continue;
            const OpRecord& o = idx.ops[op->second];
            for (const MsprobeTensor& mt : e.tensors) {
                if (mt.md5.empty()) continue;
                for (std::uint32_t t = o.firstTensor; t < o.firstTensor + o.tensorCount; ++t) {
                    if (idx.tensors[t].io != mt.io || idx.tensors[t].slot != mt.slot) continue;
                    if (out.empty()) out.resize(idx.tensors.size());
                    out[t] = mt.md5;
                    break;
                }
            }
        }
    }
    if (ec) warnings.push_back("checksums: cannot list " + root.string() + ": " + ec.message());
    return out;
}

}  // namespace dl
