// libFuzzer target: dl::deserializeIndex (the .dlx / cache shard reader) on arbitrary bytes. The
// checksum and the zstd frame would stop almost every mutation at the header, so the input is
// taken as a raw index body and wrapped here in a valid header, a zstd frame of raw blocks and its
// XXH64: the fuzzer then mutates the section lengths and records the reader must check. Inputs that
// already start with the index magic are also read as they are (the header checks themselves).
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include <xxhash.h>

#include "core/index/index_serializer.h"

namespace {

using Bytes = std::vector<std::uint8_t>;

template <class T> void put(Bytes& b, T v) {
    const auto* p = reinterpret_cast<const std::uint8_t*>(&v);
    b.insert(b.end(), p, p + sizeof v);
}

// DLINDEX header + zstd frame (raw blocks, no compression) holding `body`, which declares
// `contentSize` bytes of content (honest unless the fuzzer chose otherwise).
Bytes wrap(const std::uint8_t* body, std::size_t n, std::uint64_t contentSize) {
    Bytes frame;
    put<std::uint32_t>(frame, 0xFD2FB528u);
    frame.push_back(0xE0);   // 8-byte content size, single segment
    put<std::uint64_t>(frame, contentSize);
    std::size_t at = 0;
    do {
        const std::size_t k = std::min<std::size_t>(n - at, 1u << 17);
        const std::uint32_t header = (at + k == n ? 1u : 0u) | std::uint32_t(k) << 3;
        frame.push_back(std::uint8_t(header));
        frame.push_back(std::uint8_t(header >> 8));
        frame.push_back(std::uint8_t(header >> 16));
        frame.insert(frame.end(), body + at, body + at + k);
        at += k;
    } while (at < n);
    Bytes out = {'D', 'L', 'I', 'N', 'D', 'E', 'X', '\x1a'};
    put<std::uint32_t>(out, dl::kIndexFormatVersion);
    put<std::uint32_t>(out, 0);
    put<std::uint64_t>(out, contentSize);
    put<std::uint64_t>(out, frame.size());
    put<std::uint64_t>(out, XXH64(frame.data(), frame.size(), 0));
    out.insert(out.end(), frame.begin(), frame.end());
    return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    dl::DumpIndex idx;
    dl::FolderFingerprint fp;
    std::string error;
    if (size >= 8 && std::memcmp(data, "DLINDEX\x1a", 8) == 0) {
        dl::deserializeIndex(data, size, idx, fp, error);
        return 0;
    }
    // First byte: whether the frame lies about its content size (a large claim), else honest.
    if (size == 0) return 0;
    const bool lie = data[0] & 1;
    const Bytes file = wrap(data + 1, size - 1, lie ? std::uint64_t(64) << 30 : size - 1);
    if (dl::deserializeIndex(file.data(), file.size(), idx, fp, error)) {
        // An index that loads must have every reference inside its tables (validate()'s promise).
        for (const auto& t : idx.tensors)
            if (t.op >= idx.ops.size() || std::uint64_t(t.shapeOffset) + t.ndim > idx.dims.size()) __builtin_trap();
    } else if (error.empty()) {
        __builtin_trap();   // a refusal always says why
    }
    return 0;
}
