#pragma once
// Binary form of a DumpIndex (a shard or a merged index): versioned sections in the chunked
// container of index_container.h (zstd or raw chunks, each checksummed). Used for the cache and for
// portable index files.
#include <cstdint>
#include <string>
#include <vector>

#include "core/index/index_container.h"
#include "core/model/dump_index.h"

namespace dl {

// Extra data stored next to an index: the file fingerprint of the folder it came from, so a reader
// can tell whether the dump changed since.
struct FolderFingerprint {
    std::uint64_t files = 0;
    std::uint64_t bytes = 0;
    std::uint64_t hash = 0;  // XXH64 over sorted (relative path, size, mtime)
    bool operator==(const FolderFingerprint&) const = default;
};

// 5: TensorRecord with PackedStats (144 bytes) and DumpIndex::wideStats.
// 6: OpRecord::tensorNames (msprobe's own tensor names; same 80-byte record) and msprobe ranks
//    named once per rank; RankInfo::orderSource (what ordered the rank's ops).
// 7: TensorRecord 88 bytes: file fields, histogram offset, original-shape length and the kernel-only
//    counts in DumpIndex::sides (statistics-only tensors have none); PackedStats 56 bytes; shared shapes.
// 8: the same records in a chunked container: one section per array at a 4 KiB boundary, in
//    independent zstd or raw chunks with an XXH3 each (decoded in parallel, mappable when raw);
//    IndexWarning::severity (one byte after each warning's reason): unreadable or a note.
// 9: the layout of 8; what the readers put in it changed, so an index of 8 would answer differently
//    from the files: the lower-bound bit of non-finite counts, msprobe's task and level, P2POp peers,
//    each rank's format as its reader knew it, shard ops in execution order.
// 10: the layout of 8; raw CANN tensors in NDC1HWC0, FRACTAL_Z_3D, C1HWNCoC0, NC1HWC0_C04 (and NZ
//    with flattened batch, NHWC/HWCN readings) now have statistics without their padding, which a
//    cached 9 holds with it.
inline constexpr std::uint32_t kIndexFormatVersion = 10;

using IndexEncoding = container::Encoding;
// The cache (merged and shards): zstd level 1. The first index of a dump writes 2 x 1.14 GB of
// arrays at 10M tensors: 8 MiB chunks of it compress at ~340-390 MB/s per core at level 1 against
// ~280 at level 3 (~1.8 CPU s less), for 17% more disk (133 MB against 114) and ~4% slower
// decompression (~905 against ~940 MB/s per core: ~0.05 s of a reopen). zstd's negative levels
// gain little more here (420-440 MB/s) at 1.6-2.4x the size. Raw arrays read back faster only while
// the file is in the page cache and cost 10x the disk (docs/PERFORMANCE.md "Index format 8").
// A .dlx travels: zstd at a denser level.
inline constexpr IndexEncoding kCacheEncoding{false, 1};
inline constexpr IndexEncoding kPortableEncoding{false, 6};

std::vector<std::uint8_t> serializeIndex(const DumpIndex& index, const FolderFingerprint& fp, int zstdLevel = 3);
std::vector<std::uint8_t> serializeIndex(const DumpIndex& index, const FolderFingerprint& fp, IndexEncoding enc);
// Returns false with a reason (bad magic, other version, checksum mismatch, truncated, corrupt).
bool deserializeIndex(const std::uint8_t* data, std::size_t size, DumpIndex& out, FolderFingerprint& fp,
                      std::string& error);

// The same, straight between the index and a file: written atomically, section by section (no
// image of the file in memory); read with pread into the final arrays. Errors do not name the
// file (the callers do).
bool writeIndexFile(const std::string& path, const DumpIndex& index, const FolderFingerprint& fp, IndexEncoding enc,
                    std::string& error);
bool readIndexFile(const std::string& path, DumpIndex& out, FolderFingerprint& fp, std::string& error);

// Atomic write: temp file in the same folder, fsync, rename. Creates parent folders.
bool writeFileAtomically(const std::string& path, const std::vector<std::uint8_t>& bytes, std::string& error);
bool readWholeFile(const std::string& path, std::vector<std::uint8_t>& out, std::string& error);

}  // namespace dl
