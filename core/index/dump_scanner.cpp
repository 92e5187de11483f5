#include "core/index/dump_scanner.h"
#include "core/io/regular_file.h"

#include <dirent.h>
#include <sys/stat.h>
#include <xxhash.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <set>
#include <utility>

namespace dl {
namespace {

struct Walker {
    std::string root;
    std::stop_token stop;
    int maxDepth;
    ScanResult out;
    std::set<std::pair<dev_t, ino_t>> visited;
    // The root's parent folders up to '/': a symbolic link to one of them holds the whole dump
    // and everything beside it (a link to '/' would walk the machine, /proc included).
    std::set<std::pair<dev_t, ino_t>> ancestors;

    void warn(const std::string& rel, const std::string& reason, WarningSeverity severity) {
        out.warnings.push_back({rel.empty() ? root : rel, reason, severity});
    }

    void walk(const std::string& rel, int depth) {
        if (stop.stop_requested()) return;
        const std::string abs = rel.empty() ? root : root + "/" + rel;
        DIR* dir = ::opendir(abs.c_str());
        if (!dir) {
            warn(rel, std::string("cannot open folder: ") + std::strerror(errno), WarningSeverity::Unreadable);
            return;
        }
        std::vector<std::string> subdirs;
        while (dirent* e = ::readdir(dir)) {
            const std::string name = e->d_name;
            if (name == "." || name == "..") continue;
            const std::string childRel = rel.empty() ? name : rel + "/" + name;
            const std::string childAbs = abs + "/" + name;
            struct stat st {};
            if (::stat(childAbs.c_str(), &st) != 0) {
                struct stat lst {};
                const bool dangling = ::lstat(childAbs.c_str(), &lst) == 0 && S_ISLNK(lst.st_mode);
                warn(childRel, dangling ? "broken symbolic link" : std::string("cannot stat: ") + std::strerror(errno),
                     WarningSeverity::Unreadable);
                continue;
            }
            if (S_ISDIR(st.st_mode)) {
                if (ancestors.count({st.st_dev, st.st_ino})) {
                    warn(childRel, "symbolic link to a folder that contains the dump, skipped", WarningSeverity::Note);
                    continue;
                }
                if (!visited.insert({st.st_dev, st.st_ino}).second) {
                    warn(childRel, "folder already visited (symbolic link loop or duplicate link), skipped",
                         WarningSeverity::Note);
                    continue;
                }
                subdirs.push_back(childRel);
            } else if (S_ISREG(st.st_mode)) {
                const std::int64_t mtime = std::int64_t(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
                out.files.push_back({childRel, std::uint64_t(st.st_size), mtime,
                                     fileStamp(mtime, std::int64_t(st.st_ctim.tv_sec) * 1000000000 + st.st_ctim.tv_nsec,
                                               std::uint64_t(st.st_ino))});
            } else {  // never opened: a FIFO would block the reader, a device never end
                warn(childRel, std::string("not a regular file (a ") + fileTypeName(st.st_mode) + "), skipped",
                     WarningSeverity::Unreadable);
            }
        }
        ::closedir(dir);
        for (const auto& sub : subdirs) {
            if (depth + 1 > maxDepth)
                warn(sub, "folder nesting deeper than " + std::to_string(maxDepth) + " levels, not scanned",
                     WarningSeverity::Unreadable);
            else
                walk(sub, depth + 1);
        }
    }
};

}  // namespace

ScanResult scanFolder(const std::string& root, std::stop_token stop, int maxDepth) {
    Walker w{root, stop, maxDepth, {}, {}};
    struct stat st {};
    if (::stat(root.c_str(), &st) == 0) w.visited.insert({st.st_dev, st.st_ino});
    if (char* real = ::realpath(root.c_str(), nullptr)) {
        std::string up = real;
        std::free(real);
        while (up.size() > 1) {
            up.resize(std::max<std::size_t>(up.rfind('/'), 1));
            if (::stat(up.c_str(), &st) == 0) w.ancestors.insert({st.st_dev, st.st_ino});
        }
    }
    w.walk("", 0);
    std::sort(w.out.files.begin(), w.out.files.end(), [](const auto& a, const auto& b) { return a.rel < b.rel; });
    return std::move(w.out);
}

std::int64_t fileStamp(std::int64_t mtimeNs, std::int64_t ctimeNs, std::uint64_t inode) {
    const std::int64_t parts[3] = {mtimeNs, ctimeNs, std::int64_t(inode)};
    return std::int64_t(XXH64(parts, sizeof parts, 0));
}

bool fileSizeAndStamp(const std::string& path, std::uint64_t& size, std::int64_t& stamp) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return false;
    size = std::uint64_t(st.st_size);
    stamp = fileStamp(std::int64_t(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec,
                      std::int64_t(st.st_ctim.tv_sec) * 1000000000 + st.st_ctim.tv_nsec, std::uint64_t(st.st_ino));
    return true;
}

}  // namespace dl
