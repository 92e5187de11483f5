#include "core/index/tensor_location.h"

#include <filesystem>

#include "core/index/index_file.h"

namespace dl {
namespace {

const RankInfo* rankOf(const DumpIndex& index, const TensorRecord& t) {
    if (t.op >= index.ops.size()) return nullptr;
    const std::string_view file = index.strings.view(index.side(t).file);
    const RankInfo* best = nullptr;
    for (const auto& r : index.ranks)
        if (r.rank == index.ops[t.op].rank && (r.folder.empty() || file.starts_with(r.folder + "/")))
            if (!best || r.folder.size() > best->folder.size()) best = &r;
    return best;
}

}  // namespace

std::string tensorDataPath(const DumpIndex& index, const TensorRecord& t) {
    if (index.side(t).file == 0) return {};
    const RankInfo* r = rankOf(index, t);
    const std::string& root = r && !r->dataRoot.empty() ? r->dataRoot : index.root;
    return root + "/" + index.strings.str(index.side(t).file);
}

bool tensorDataReachable(const DumpIndex& index, const TensorRecord& t, std::string& why) {
    const std::string path = tensorDataPath(index, t);
    if (path.empty()) {
        why = "the tensor was not dumped (statistics only)";
        return false;
    }
    std::error_code ec;
    if (std::filesystem::exists(path, ec)) return true;
    const RankInfo* r = rankOf(index, t);
    const std::string host = r && !r->indexedOn.empty() ? r->indexedOn : "the machine that wrote the dump";
    why = "tensor data is not on this machine (" + hostName() + "): fetch " + path + " from " + host;
    return false;
}

}  // namespace dl
