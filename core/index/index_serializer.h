#pragma once
// Binary form of a DumpIndex (a shard or a merged index): versioned, zstd-compressed,
// checksummed with XXH64. Used for the cache and for portable index files.
#include <cstdint>
#include <string>
#include <vector>

#include "core/model/dump_index.h"

namespace dl {

// Extra data stored next to an index: the file fingerprint of the folder it came from, so a reader
// can tell whether the dump changed since.
struct FolderFingerprint {
    std::uint64_t files = 0;
    std::uint64_t bytes = 0;
    std::uint64_t hash = 0;   // XXH64 over sorted (relative path, size, mtime)
    bool operator==(const FolderFingerprint&) const = default;
};

// 5: TensorRecord with PackedStats (144 bytes) and DumpIndex::wideStats.
// 6: OpRecord::tensorNames (msprobe's own tensor names; same 80-byte record) and msprobe ranks
//    named once per rank; RankInfo::orderSource (what ordered the rank's ops).
// 7: TensorRecord 88 bytes: file fields, histogram offset, original-shape length and the kernel-only
//    counts in DumpIndex::sides (statistics-only tensors have none); PackedStats 56 bytes; shared shapes.
// 8: IndexWarning::severity (one byte after each warning's reason): unreadable or a note.
inline constexpr std::uint32_t kIndexFormatVersion = 8;

std::vector<std::uint8_t> serializeIndex(const DumpIndex& index, const FolderFingerprint& fp, int zstdLevel = 3);
// Returns false with a reason (bad magic, other version, checksum mismatch, truncated, corrupt).
bool deserializeIndex(const std::uint8_t* data, std::size_t size, DumpIndex& out, FolderFingerprint& fp,
                      std::string& error);

// Atomic write: temp file in the same folder, fsync, rename. Creates parent folders.
bool writeFileAtomically(const std::string& path, const std::vector<std::uint8_t>& bytes, std::string& error);
bool readWholeFile(const std::string& path, std::vector<std::uint8_t>& out, std::string& error);

}  // namespace dl
