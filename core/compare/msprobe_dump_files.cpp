#include "core/compare/msprobe_dump_files.h"

#include <algorithm>
#include <system_error>
#include <tuple>

#include "core/index/dump_layout.h"

namespace dl {

namespace fs = std::filesystem;

std::vector<MsprobeDumpFile> msprobeDumpFiles(const DumpIndex& idx, std::string& error) {
    std::vector<MsprobeDumpFile> out;
    std::error_code ec;
    fs::path root(idx.root);
    if (fs::is_regular_file(root, ec)) root = root.parent_path();
    auto add = [&](const fs::path& dir) {
        MsprobeDumpFile f;
        f.dir = dir;
        const std::string dirText = dir.string();  // the parts are views into it
        for (std::string_view part : splitPath(dirText)) {
            if (auto r = rankFromFolderName(part)) f.rank = *r;
            if (auto s = stepFromFolderName(part)) f.step = *s;
        }
        out.push_back(std::move(f));
    };
    if (fs::is_regular_file(root / "dump.json", ec)) add(root);
    fs::recursive_directory_iterator it(root, fs::directory_options::skip_permission_denied, ec), end;
    for (; !ec && it != end; it.increment(ec)) {
        if (it->is_directory(ec) && it->path().filename() == "dump_tensor_data") {
            it.disable_recursion_pending();
            continue;
        }
        if (it->path().filename() == "dump.json" && it->path().parent_path() != root) add(it->path().parent_path());
    }
    if (ec) error = "cannot list " + root.string() + ": " + ec.message();
    std::sort(out.begin(), out.end(), [](const MsprobeDumpFile& x, const MsprobeDumpFile& y) {
        return std::tie(x.rank, x.step) < std::tie(y.rank, y.step);
    });
    return out;
}

}  // namespace dl
