#include "core/index/output_guard.h"

#include <algorithm>
#include <filesystem>

#include "core/index/dump_layout.h"
#include "core/model/dump_index.h"

namespace dl {
namespace fs = std::filesystem;

namespace {

// Absolute, symlinks of the existing part resolved, `..` folded, no trailing separator.
fs::path resolved(const std::string& p) {
    std::error_code ec;
    fs::path abs = fs::absolute(p, ec);
    if (ec) abs = fs::path(p);
    fs::path r = fs::weakly_canonical(abs, ec);
    if (ec) r = abs;
    r = r.lexically_normal();
    if (!r.has_filename() && r.has_parent_path() && r != r.root_path()) r = r.parent_path();
    return r;
}

bool isRankOrStepFolder(const fs::path& name) {
    const std::string n = name.string();
    return rankFromFolderName(n) || stepFromFolderName(n);
}

}  // namespace

std::string dumpExtent(const std::string& dir) {
    const fs::path d = resolved(dir);
    std::error_code ec;
    if (!fs::is_directory(d, ec)) return d.string();  // a .dlx file: only the file itself
    fs::path extent = d, p = d;
    // The topmost rank/step folder within four levels: its parent is the dump path.
    for (int level = 0; level < 5 && p.has_filename() && p != p.root_path(); ++level, p = p.parent_path())
        if (isRankOrStepFolder(p.filename())) extent = p.parent_path();
    return extent.string();
}

std::string outputInsideDump(const std::string& output, const std::vector<std::string>& dumps) {
    const fs::path out = resolved(output);
    for (const std::string& dump : dumps) {
        if (dump.empty()) continue;
        const fs::path extent = dumpExtent(dump);
        if (isInsideOrEqual(out, extent))
            return "refusing to write '" + out.string() + "': it lies inside the dump '" + extent.string() +
                "' (read from '" + dump + "'); DumpLens never writes into a dump, choose a path outside it";
    }
    return {};
}

bool isInsideOrEqual(const fs::path& inner, const fs::path& outer) {
    auto i = inner.begin();
    for (auto o = outer.begin(); o != outer.end(); ++o, ++i)
        if (i == inner.end() || *i != *o) return false;
    return true;
}

std::vector<std::string> dumpRootsOf(const DumpIndex& index) {
    std::vector<std::string> roots;
    auto add = [&](const std::string& r) {
        if (!r.empty() && std::find(roots.begin(), roots.end(), r) == roots.end()) roots.push_back(r);
    };
    add(index.root);
    for (const RankInfo& r : index.ranks) add(r.dataRoot);
    return roots;
}

}  // namespace dl
