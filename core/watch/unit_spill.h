#pragma once
// A settled unit of a watch (incremental_index.h) written out of memory, so that a long watch holds
// only the units still changing: the unit's index in the cache's encoding and its file list, in one
// file of the watch's own folder in the cache (never in the dump), checked when read back.
// Private to the process that wrote it: written to a temporary and renamed, not fsynced (a crash
// loses nothing the dump does not hold; the folder is removed when its process is gone).
#include <cstdint>
#include <string>
#include <vector>

#include "core/index/dump_scanner.h"
#include "core/model/dump_index.h"

namespace dl {

bool writeUnitSpill(const std::string& path, const DumpIndex& index, const std::vector<ScannedFile>& files,
                    std::string& error);
// False with a reason (missing, truncated, not a spill, checksum mismatch, index unreadable).
bool readUnitSpill(const std::string& path, DumpIndex& index, std::vector<ScannedFile>& files, std::string& error);

// Small indexes of one watch appended to one file (what the watch keeps of a written-out unit's
// clean iterations: first_overflow_inputs.h), each in the spill's encoding, read back by place:
// one open file instead of one per unit, so that reading many back costs no opens. Private to
// the process, like the spills; pread/pwrite, so reads may run on many threads at once.
class UnitSideFile {
public:
    explicit UnitSideFile(std::string path);  // created (emptied) at the first append
    ~UnitSideFile();
    UnitSideFile(const UnitSideFile&) = delete;
    UnitSideFile& operator=(const UnitSideFile&) = delete;
    // Where the entry went and its length; false with a reason (nothing appended).
    bool append(const DumpIndex& index, std::uint64_t& at, std::uint32_t& bytes, std::string& error);
    // False with a reason (short, checksum mismatch, index unreadable).
    bool read(std::uint64_t at, std::uint32_t bytes, DumpIndex& index, std::string& error) const;

private:
    std::string m_path;
    int m_fd = -1;
    std::uint64_t m_end = 0;
};

// The folder a watch of `rootAbs` spills into under `cacheDir`, one per process; the folders of
// watches whose process is gone are removed first.
std::string unitSpillFolder(const std::string& cacheDir, const std::string& rootAbs);

}  // namespace dl
