#pragma once
// A settled unit of a watch (incremental_index.h) written out of memory, so that a long watch holds
// only the units still changing: the unit's index in the cache's encoding and its file list, in one
// file of the watch's own folder in the cache (never in the dump), checked when read back.
// Private to the process that wrote it: written to a temporary and renamed, not fsynced (a crash
// loses nothing the dump does not hold; the folder is removed when its process is gone).
#include <string>
#include <vector>

#include "core/index/dump_scanner.h"
#include "core/model/dump_index.h"

namespace dl {

bool writeUnitSpill(const std::string& path, const DumpIndex& index, const std::vector<ScannedFile>& files,
                    std::string& error);
// False with a reason (missing, truncated, not a spill, checksum mismatch, index unreadable).
bool readUnitSpill(const std::string& path, DumpIndex& index, std::vector<ScannedFile>& files, std::string& error);

// The folder a watch of `rootAbs` spills into under `cacheDir`, one per process; the folders of
// watches whose process is gone are removed first.
std::string unitSpillFolder(const std::string& cacheDir, const std::string& rootAbs);

}  // namespace dl
