// libFuzzer target: dl::deserializeIndex (the .dlx / cache reader, format 8's chunked container)
// on arbitrary bytes. Checksums would stop almost every mutation at the tables, so each input is
// also read "resealed": its version and size fields set to what this build expects and every
// checksum (the tables', each chunk's whose bytes lie inside the file) recomputed, so the fuzzer
// reaches the section table, the chunk bounds, the zstd frames and the records the reader must
// check. An input without the index magic is taken as edits (2-byte position, 1-byte value) of a
// small valid index, resealed the same way.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include <xxhash.h>

#include "core/index/index_serializer.h"

namespace {

using Bytes = std::vector<std::uint8_t>;
namespace ct = dl::container;

template <class T>
T get(const Bytes& b, std::size_t at) {
    T v;
    std::memcpy(&v, b.data() + at, sizeof v);
    return v;
}
template <class T>
void set(Bytes& b, std::size_t at, T v) {
    std::memcpy(b.data() + at, &v, sizeof v);
}

void reseal(Bytes& f) {
    if (f.size() < ct::kHeaderBytes) return;
    set<std::uint32_t>(f, 8, dl::kIndexFormatVersion);
    set<std::uint64_t>(f, 16, f.size());
    const std::uint64_t sections = get<std::uint32_t>(f, 12), chunks = get<std::uint32_t>(f, 24);
    const std::uint64_t tables = sections * ct::kSectionEntryBytes + chunks * ct::kChunkEntryBytes;
    if (tables > f.size() - ct::kHeaderBytes) return;
    for (std::uint64_t i = 0; i < chunks; ++i) {
        const std::size_t e =
            std::size_t(ct::kHeaderBytes + sections * ct::kSectionEntryBytes + i * ct::kChunkEntryBytes);
        const auto offset = get<std::uint64_t>(f, e), stored = get<std::uint64_t>(f, e + 8);
        if (offset <= f.size() && stored <= f.size() - offset)
            set<std::uint64_t>(f, e + 24, XXH3_64bits(f.data() + offset, std::size_t(stored)));
    }
    XXH3_state_t* st = XXH3_createState();
    XXH3_64bits_reset(st);
    XXH3_64bits_update(st, f.data(), 32);
    XXH3_64bits_update(st, f.data() + 40, ct::kHeaderBytes - 40);
    XXH3_64bits_update(st, f.data() + ct::kHeaderBytes, std::size_t(tables));
    set<std::uint64_t>(f, 32, XXH3_64bits_digest(st));
    XXH3_freeState(st);
}

const Bytes& seed() {
    static const Bytes s = [] {
        dl::DumpIndex idx;
        idx.root = "/dump";
        dl::OpRecord op;
        op.type = idx.strings.intern("Add");
        op.name = idx.strings.intern("Add-op1");
        op.tensorCount = 2;
        idx.ops.push_back(op);
        for (std::uint16_t slot = 0; slot < 2; ++slot) {
            dl::TensorRecord t;
            t.slot = slot;
            t.ndim = 1;
            idx.dims.push_back(4);
            idx.tensors.push_back(t);
        }
        idx.warnings.push_back({"a.npy", "truncated"});
        return dl::serializeIndex(idx, {}, 3);
    }();
    return s;
}

void read(const Bytes& file) {
    dl::DumpIndex idx;
    dl::FolderFingerprint fp;
    std::string error;
    if (dl::deserializeIndex(file.data(), file.size(), idx, fp, error)) {
        // An index that loads must have every reference inside its tables (validate()'s promise).
        for (const auto& t : idx.tensors)
            if (t.op >= idx.ops.size() || std::uint64_t(t.shapeOffset) + t.ndim > idx.dims.size()) __builtin_trap();
    } else if (error.empty()) {
        __builtin_trap();  // a refusal always says why
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size >= 8 && std::memcmp(data, "DLINDEX\x1a", 8) == 0) {
        Bytes file(data, data + size);
        read(file);
        reseal(file);
        read(file);
        return 0;
    }
    Bytes file = seed();
    for (std::size_t i = 0; i + 3 <= size; i += 3) {
        const std::size_t at = (std::size_t(data[i]) | std::size_t(data[i + 1]) << 8) % file.size();
        file[at] = data[i + 2];
    }
    reseal(file);
    read(file);
    return 0;
}
