#pragma once
// Lists every regular file under a folder: relative path, size and mtime. Follows symlinked
// folders once (loop-safe by device/inode), never into a folder that contains the root (a link
// to '/' or '..'), never aborts on an unreadable entry: each becomes a
// warning and the walk goes on.
#include <cstdint>
#include <stop_token>
#include <string>
#include <vector>

#include "core/model/index_warning.h"

namespace dl {

struct ScannedFile {
    std::string rel;  // path relative to the scan root, '/'-separated
    std::uint64_t size = 0;
    std::int64_t mtimeNs = 0;
    // mtime, ctime and inode mixed: a rewrite that restores size and mtime (touch -r) still changes
    // the ctime, a replacement the inode. What the cache compares to tell a file unchanged.
    std::int64_t stamp = 0;
};

struct ScanResult {
    std::vector<ScannedFile> files;  // sorted by rel
    std::vector<IndexWarning> warnings;
};

ScanResult scanFolder(const std::string& root, std::stop_token stop = {}, int maxDepth = 32);

// ScannedFile::stamp of a file with these times (ns) and inode: what the scan and the watcher give.
std::int64_t fileStamp(std::int64_t mtimeNs, std::int64_t ctimeNs, std::uint64_t inode);
// The size and stamp `path` has now; false when it cannot be stat'ed or is not a regular file.
bool fileSizeAndStamp(const std::string& path, std::uint64_t& size, std::int64_t& stamp);

}  // namespace dl
