// torch.save files as written by a real PyTorch (tests/data/samples/torch, made by make_samples.py
// with Debian's python3-torch 1.13.1): the ZIP directory, the pickle, dtype, shape, storage offset
// and layout, the values read back through the same loader .npy files use, malformed archives and
// pickles, and a msprobe PyTorch dump whose .pt tensors are read and counted.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "core/index/dump_indexer.h"
#include "core/io/npy_file.h"
#include "core/io/pickle_reader.h"
#include "core/io/torch_file.h"
#include "core/io/zip_directory.h"
#include "tests/core/peak_memory.h"
#include "tests/core/temp_dir.h"

using namespace dl;
namespace fs = std::filesystem;

namespace {

const fs::path kDir = fs::path(DUMPLENS_SAMPLES_DIR) / "torch";

using dltest::maxRssKb;
using dltest::readBytes;

NpyHeader header(const std::string& name) {
    NpyHeader h;
    std::string error;
    EXPECT_TRUE(readTorchTensorHeader((kDir / (name + ".pt")).string(), h, error)) << name << ": " << error;
    return h;
}

std::vector<float> values(const std::string& name, const NpyHeader& h) {
    std::vector<float> v;
    std::string error;
    EXPECT_TRUE(loadTensorAsFloat((kDir / (name + ".pt")).string(), h.dataOffset, h.elementCount, h.dtype, h.bigEndian,
                                  v, error))
        << error;
    return v;
}

}  // namespace

TEST(TorchFile, HalfMatrix) {
    const NpyHeader h = header("fp16_2x3");
    EXPECT_EQ(h.dtype, DType::Float16);
    EXPECT_EQ(h.shape, (std::vector<std::int64_t>{2, 3}));
    EXPECT_EQ(h.dataBytes, 12u);
    EXPECT_FALSE(h.fortranOrder);
    EXPECT_EQ(values("fp16_2x3", h), (std::vector<float>{1541.0f, -293.5f, -2178.0f, 568.5f, -1085.0f, -1399.0f}));
}

TEST(TorchFile, BFloat16KeepsItsDtype) {
    const NpyHeader h = header("bf16_4x5");
    EXPECT_EQ(h.dtype, DType::BFloat16);
    EXPECT_EQ(h.shape, (std::vector<std::int64_t>{4, 5}));
    const std::vector<float> v = values("bf16_4x5", h);
    ASSERT_EQ(v.size(), 20u);
    EXPECT_EQ(v[0], -0.08837890625f);
    EXPECT_EQ(v[17], 2.296875f);
    EXPECT_EQ(v[19], -1.5859375f);
}

TEST(TorchFile, ScalarOffsetViewLayoutsAndIntegers) {
    const NpyHeader s = header("fp32_scalar");
    EXPECT_TRUE(s.shape.empty());
    EXPECT_EQ(values("fp32_scalar", s), std::vector<float>{3.5f});
    // A view saved with its whole storage: the tensor starts 4 elements in.
    const NpyHeader o = header("fp32_offset_view");
    EXPECT_EQ(o.shape, (std::vector<std::int64_t>{2, 4}));
    EXPECT_EQ(values("fp32_offset_view", o), (std::vector<float>{4, 5, 6, 7, 8, 9, 10, 11}));
    // A transpose is column-major: flagged, values in memory order.
    const NpyHeader t = header("fp32_transposed");
    EXPECT_EQ(t.shape, (std::vector<std::int64_t>{4, 3}));
    EXPECT_TRUE(t.fortranOrder);
    EXPECT_EQ(values("fp32_transposed", t).size(), 12u);
    const NpyHeader i = header("i64");
    EXPECT_EQ(i.dtype, DType::Int64);
    EXPECT_EQ(values("i64", i), (std::vector<float>{0, 1, 2, 3, 4, 5}));
    const NpyHeader p = header("param");  // nn.Parameter wraps the tensor
    EXPECT_EQ(p.shape, std::vector<std::int64_t>{3});
}

TEST(TorchFile, SpecialValues) {
    const NpyHeader h = header("fp16_special");
    const std::vector<float> v = values("fp16_special", h);
    ASSERT_EQ(v.size(), 4u);
    EXPECT_TRUE(std::isinf(v[1]));
    EXPECT_TRUE(std::isnan(v[2]));
    EXPECT_EQ(v[3], -65504.0f);
}

TEST(TorchFile, RefusesWhatItCannotReadWithAReason) {
    NpyHeader h;
    std::string error;
    EXPECT_FALSE(readTorchTensorHeader((kDir / "fp32_strided.pt").string(), h, error));
    EXPECT_NE(error.find("non-contiguous"), std::string::npos) << error;
    EXPECT_FALSE(readTorchTensorHeader((kDir / "dict.pt").string(), h, error));
    EXPECT_NE(error.find("a single tensor"), std::string::npos) << error;
    EXPECT_FALSE(readTorchTensorHeader((kDir / "missing.pt").string(), h, error));
    EXPECT_NE(error.find("cannot open"), std::string::npos);
    const std::string junk = "PK\x03\x04 not a zip";
    EXPECT_FALSE(parseTorchTensorHeader(reinterpret_cast<const std::uint8_t*>(junk.data()), junk.size(), h, error));
    EXPECT_NE(error.find("ZIP"), std::string::npos) << error;
    // Every truncation of a real file fails cleanly (or, cut only in the trailing bytes, still parses).
    const std::vector<std::uint8_t> full = readBytes(kDir / "fp16_2x3.pt");
    for (std::size_t n = 0; n < full.size(); ++n) {
        NpyHeader t;
        if (parseTorchTensorHeader(full.data(), n, t, error)) {
            EXPECT_LE(t.dataOffset + t.dataBytes, n);
        }
    }
    // Every single corrupted byte: no crash, and a success still points inside the file.
    for (std::size_t k = 0; k < full.size(); ++k) {
        std::vector<std::uint8_t> bad = full;
        bad[k] ^= 0x5a;
        NpyHeader t;
        if (parseTorchTensorHeader(bad.data(), bad.size(), t, error)) {
            EXPECT_LE(t.dataOffset + t.dataBytes, bad.size());
        }
    }
}

TEST(PickleReader, TreeAndErrors) {
    // pickle.dumps((1, 'a', [2.5], {'k': None}), protocol=2), as Python 3.11 writes it.
    const std::vector<std::uint8_t> q = {0x80, 0x02, 0x28, 0x4b, 0x01, 0x58, 0x01, 0x00, 0x00, 0x00, 0x61,
                                         0x71, 0x00, 0x5d, 0x71, 0x01, 0x47, 0x40, 0x04, 0x00, 0x00, 0x00,
                                         0x00, 0x00, 0x00, 0x61, 0x7d, 0x71, 0x02, 0x58, 0x01, 0x00, 0x00,
                                         0x00, 0x6b, 0x71, 0x03, 0x4e, 0x73, 0x74, 0x71, 0x04, 0x2e};
    PickleTree tree;
    std::string error;
    ASSERT_TRUE(unpickle(q.data(), q.size(), tree, error)) << error;
    // Cut anywhere before STOP: an error, never a crash.
    for (std::size_t n = 0; n + 1 < q.size(); ++n) EXPECT_FALSE(unpickle(q.data(), n, tree, error));
    ASSERT_TRUE(unpickle(q.data(), q.size(), tree, error)) << error;
    ASSERT_EQ(tree.root->kind, PickleValue::Kind::Tuple);
    ASSERT_EQ(tree.root->items.size(), 4u);
    EXPECT_EQ(tree.root->items[0]->i, 1);
    EXPECT_EQ(tree.root->items[1]->s, "a");
    EXPECT_EQ(tree.root->items[2]->items[0]->f, 2.5);
    EXPECT_EQ(tree.root->items[3]->items.size(), 2u);
    // A list appended to itself is a cycle, not a leak or a crash.
    const std::string cyc(
        "]q\x00h\x00"
        "a.",
        7);
    ASSERT_TRUE(unpickle(reinterpret_cast<const std::uint8_t*>(cyc.data()), cyc.size(), tree, error)) << error;
    EXPECT_EQ(tree.root->items[0], tree.root);
    for (const std::string& bad : {std::string("\x80\x02K"),
                                   std::string("\x80\x02h\x05"
                                               "."),
                                   std::string("\xff."), std::string("t.")})
        EXPECT_FALSE(unpickle(reinterpret_cast<const std::uint8_t*>(bad.data()), bad.size(), tree, error)) << bad;
}

TEST(TorchFile, MsprobePyTorchDumpReadsItsPtTensors) {
    dltest::TempDir dir;
    const fs::path rank = dir.path / "step0/rank0";
    fs::create_directories(rank / "dump_tensor_data");
    dltest::writeFile(rank / "dump.json", R"({"task": "tensor", "level": "L1", "framework": "pytorch",
 "dump_data_dir": "./step0/rank0/dump_tensor_data",
 "data": {"Functional.linear.0.forward": {
   "input_args": [{"type": "torch.Tensor", "dtype": "torch.float16", "shape": [2, 3], "Max": 1541.0, "Min": -2178.0,
                   "Mean": -474.3, "Norm": 3440.0, "requires_grad": false, "data_name": "Functional.linear.0.forward.input.0.pt"}],
   "input_kwargs": {},
   "output": [{"type": "torch.Tensor", "dtype": "torch.float32", "shape": [6], "Max": 10.0, "Min": 0.0, "Mean": 5.0,
               "Norm": 14.8, "requires_grad": false, "data_name": "Functional.linear.0.forward.output.0.pt"}]}}})");
    fs::copy_file(kDir / "fp16_2x3.pt", rank / "dump_tensor_data/Functional.linear.0.forward.input.0.pt");
    fs::copy_file(kDir / "fp32_strided.pt", rank / "dump_tensor_data/Functional.linear.0.forward.output.0.pt");
    DumpIndex idx;
    IndexReport report;
    IndexOptions o;
    o.useCache = false;
    std::string error;
    ASSERT_TRUE(indexDump(dir.path.string(), o, idx, report, error)) << error;
    ASSERT_EQ(idx.ops.size(), 1u);
    const TensorRecord& in = idx.tensors[idx.ops[0].firstTensor];
    EXPECT_TRUE(in.flags & HasData);
    EXPECT_EQ(in.dtype, DType::Float16);
    EXPECT_EQ(idx.stats(in).count, 6u);
    EXPECT_EQ(idx.stats(in).max, 1541.0);  // computed from the file
    EXPECT_EQ(idx.stats(in).min, -2178.0);
    // The strided view cannot be read: reported with the file's name, dump.json's figures kept.
    const TensorRecord& out = idx.tensors[idx.ops[0].firstTensor + 1];
    EXPECT_TRUE(out.flags & ReadError);
    EXPECT_FALSE(out.flags & HasData);
    EXPECT_EQ(idx.stats(out).max, 10.0);
    bool warned = false;
    for (const IndexWarning& w : idx.warnings)
        warned |= w.path.ends_with("output.0.pt") && w.reason.find("non-contiguous") != std::string::npos;
    EXPECT_TRUE(warned);
}

namespace {

// fp16_2x3.pt with one ZIP size field or one pickle byte string replaced (sizes stay the same, so
// only the declared lengths lie).
std::uint32_t le32(const std::vector<std::uint8_t>& b, std::size_t at) {
    return std::uint32_t(b[at]) | std::uint32_t(b[at + 1]) << 8 | std::uint32_t(b[at + 2]) << 16 |
        std::uint32_t(b[at + 3]) << 24;
}
void put32(std::vector<std::uint8_t>& b, std::size_t at, std::uint32_t v) {
    for (int i = 0; i < 4; ++i) b[at + std::size_t(i)] = std::uint8_t(v >> (8 * i));
}

// Sets the declared sizes of the record `name` in the central directory and its local header.
std::vector<std::uint8_t> withRecordSizes(const std::string& name, std::uint32_t compressed, std::uint32_t size) {
    std::vector<std::uint8_t> b = readBytes(kDir / "fp16_2x3.pt");
    bool patched = false;
    for (std::size_t p = 0; p + 46 <= b.size(); ++p) {
        if (le32(b, p) != 0x02014b50) continue;
        const std::size_t nameLen = b[p + 28] | b[p + 29] << 8;
        if (std::string(b.begin() + std::ptrdiff_t(p + 46), b.begin() + std::ptrdiff_t(p + 46 + nameLen)) != name)
            continue;
        put32(b, p + 20, compressed);
        put32(b, p + 24, size);
        const std::size_t local = le32(b, p + 42);
        put32(b, local + 18, compressed);
        put32(b, local + 22, size);
        patched = true;
    }
    EXPECT_TRUE(patched) << name;
    return b;
}

std::vector<std::uint8_t> withPickleBytes(const std::string& from, const std::string& to) {
    std::vector<std::uint8_t> b = readBytes(kDir / "fp16_2x3.pt");
    EXPECT_EQ(from.size(), to.size());
    const auto it = std::search(b.begin(), b.end(), from.begin(), from.end());
    EXPECT_NE(it, b.end()) << from;
    if (it != b.end()) std::copy(to.begin(), to.end(), it);
    return b;
}

struct LyingPt {
    const char* name;
    std::vector<std::uint8_t> bytes;
    const char* reason;  // fragment of the expected error
};

std::vector<LyingPt> lyingPts() {
    return {
        {"storage_4k_for_12", withRecordSizes("fp16_2x3/data/0", 12, 4096), "declares 4096 bytes but stores 12"},
        {"storage_4g", withRecordSizes("fp16_2x3/data/0", 12, 0xfffffff0u), "declares 4294967280 bytes but stores 12"},
        {"storage_both_4k", withRecordSizes("fp16_2x3/data/0", 4096, 4096), "past the end"},
        {"pickle_4g", withRecordSizes("fp16_2x3/data.pkl", 0xfffffff0u, 0xfffffff0u), "past the end"},
        {"numel_255", withPickleBytes(std::string("cpuq\x04K\x06", 7), std::string("cpuq\x04K\xff", 7)),
         "claims 255 elements"},
        {"offset_5", withPickleBytes(std::string("QK\x00K\x02", 5), std::string("QK\x05K\x02", 5)), "runs past"},
    };
}

}  // namespace

TEST(HostileTorch, DeclaredLengthsBeyondTheStoredBytesAreRefused) {
    for (const LyingPt& pt : lyingPts()) {
        for (int run = 0; run < 3; ++run) {
            NpyHeader h;
            std::string error;
            EXPECT_FALSE(parseTorchTensorHeader(pt.bytes.data(), pt.bytes.size(), h, error)) << pt.name;
            EXPECT_NE(error.find(pt.reason), std::string::npos) << pt.name << ": " << error;
        }
        // The same from the file (the pread path large tensors take).
        dltest::TempDir dir;
        const fs::path p = dir.path / (std::string(pt.name) + ".pt");
        dltest::writeFile(p, pt.bytes);
        NpyHeader h;
        std::string error;
        EXPECT_FALSE(readTorchTensorHeader(p.string(), h, error)) << pt.name;
        EXPECT_NE(error.find(pt.reason), std::string::npos) << pt.name << ": " << error;
    }
}

// Lying .pt files inside a msprobe dump: each is a read error naming the file and the reason, the
// same on every run, and the dump.json figures are kept.
TEST(HostileTorch, LyingPtFilesInADumpAreReadErrorsEveryRun) {
    dltest::TempDir dir;
    const fs::path rank = dir.path / "step0/rank0";
    fs::create_directories(rank / "dump_tensor_data");
    const auto pts = lyingPts();
    std::string entries;
    for (std::size_t i = 0; i < pts.size(); ++i) {
        const std::string op = "Functional.op" + std::to_string(i) + ".0.forward";
        entries += std::string(i ? "," : "") + "\"" + op +
            R"(": {"input_args": [], "input_kwargs": {}, "output": [{"type": "torch.Tensor", "dtype": "torch.float16", "shape": [2, 3], "Max": 1.0, "Min": 0.0, "Mean": 0.5, "Norm": 1.0, "requires_grad": false, "data_name": ")" +
            op + ".output.0.pt\"}]}";
        dltest::writeFile(rank / "dump_tensor_data" / (op + ".output.0.pt"), pts[i].bytes);
    }
    dltest::writeFile(
        rank / "dump.json",
        R"({"task": "tensor", "level": "L1", "framework": "pytorch", "dump_data_dir": "./step0/rank0/dump_tensor_data", "data": {)" +
            entries + "}}");
    std::vector<IndexWarning> first;
    for (int run = 0; run < 5; ++run) {
        DumpIndex idx;
        IndexReport report;
        IndexOptions o;
        o.useCache = false;
        std::string error;
        ASSERT_TRUE(indexDump(dir.path.string(), o, idx, report, error)) << error;
        ASSERT_EQ(idx.ops.size(), pts.size());
        for (std::size_t i = 0; i < pts.size(); ++i) {
            const TensorRecord& t = idx.tensors[idx.ops[i].firstTensor];
            EXPECT_TRUE(t.flags & ReadError) << pts[i].name;
            EXPECT_EQ(idx.stats(t).max, 1.0) << pts[i].name;  // from dump.json
            const std::string file = "Functional.op" + std::to_string(i) + ".0.forward.output.0.pt";
            bool named = false;
            for (const IndexWarning& w : idx.warnings)
                named |= w.path.ends_with(file) && w.reason.find(pts[i].reason) != std::string::npos;
            EXPECT_TRUE(named) << pts[i].name;
        }
        if (run == 0) first = idx.warnings;
        ASSERT_EQ(idx.warnings.size(), first.size());
        for (std::size_t k = 0; k < first.size(); ++k) {
            EXPECT_EQ(idx.warnings[k].path, first[k].path);
            EXPECT_EQ(idx.warnings[k].reason, first[k].reason);
        }
    }
}

namespace {

// Writes a one-record stored ZIP ("t/data.pkl": PROTO 2, EMPTY_LIST, `unit` repeated to `size`
// bytes, STOP) as torch.save lays it out (the reader checks no CRC), streamed: the test itself
// holds no copy of the pickle, so peak memory measures the reader.
void writeStoredZipPickle(const fs::path& path, const std::string& unit, std::size_t size) {
    std::ofstream z(path, std::ios::binary);
    auto u16 = [&](std::uint32_t v) {
        z.put(char(v));
        z.put(char(v >> 8));
    };
    auto u32 = [&](std::uint32_t v) {
        u16(v & 0xffff);
        u16(v >> 16);
    };
    const std::string name = "t/data.pkl";
    const std::size_t repeats = (size - 4) / unit.size();
    const auto pickleSize = std::uint32_t(3 + repeats * unit.size() + 1);
    // What a local header and its central directory entry share: no flags, stored, no time or
    // date, no CRC, both sizes, the name's length, no extra field.
    auto entryFields = [&] {
        u16(0);
        u16(0);
        u16(0);
        u16(0);
        u32(0);
        u32(pickleSize);
        u32(pickleSize);
        u16(std::uint16_t(name.size()));
        u16(0);
    };
    u32(0x04034b50);
    u16(20);
    entryFields();
    z << name << std::string("\x80\x02]", 3);
    std::string chunk;
    for (std::size_t k = 0; k < 65536 && k < repeats; ++k) chunk += unit;
    for (std::size_t done = 0; done < repeats;) {
        const std::size_t n = std::min<std::size_t>(65536, repeats - done);
        z.write(chunk.data(), std::streamsize(n * unit.size()));
        done += n;
    }
    z << '.';
    const std::uint32_t cd = std::uint32_t(30 + name.size() + pickleSize);
    u32(0x02014b50);
    u16(20);
    u16(20);
    entryFields();
    u16(0);
    u16(0);
    u16(0);
    u32(0);
    u32(0);
    z << name;
    u32(0x06054b50);
    u16(0);
    u16(0);
    u16(1);
    u16(1);
    u32(std::uint32_t(46 + name.size()));
    u32(cd);
    u16(0);
}
}  // namespace

// 64 MiB pickles (the largest read) made of 1-byte opcodes: refused with a reason, and the reader's
// memory stays a small multiple of the input instead of ~40x.
TEST(HostileTorch, LargePicklesUseBoundedMemory) {
    const std::size_t kSize = std::size_t(64) << 20;
    const std::vector<std::pair<const char*, std::string>> patterns = {
        {"None then POP", "N0"},  // a node per 2 bytes
        {"DUP APPEND", "2a"},     // a list appended to itself: a pointer per 2 bytes
        {"MEMOIZE", "N\x94"},     // a node and a memo entry per 2 bytes
    };
    dltest::TempDir dir;
    const long before = maxRssKb();
    for (const auto& [what, unit] : patterns) {
        const fs::path p = dir.path / "big.pt";
        writeStoredZipPickle(p, unit, kSize);
        NpyHeader h;
        std::string error;
        EXPECT_FALSE(readTorchTensorHeader(p.string(), h, error)) << what;
        EXPECT_NE(error.find("not a tensor's pickle"), std::string::npos) << what << ": " << error;
    }
    const long grownMb = (maxRssKb() - before) / 1024;
    std::printf("peak RSS grew by %ld MiB over three 64 MiB pickles\n", grownMb);
    // The reader holds the 64 MiB input plus its capped tree (before: ~40 times the input).
    EXPECT_LT(grownMb, 64 + 64 + kSanitizerSlackMb) << "peak memory grew by " << grownMb << " MiB";

    // Four 32 MiB ones in a msprobe dump indexed on four threads: parsed one at a time, so the peak
    // stays that of one file (it used to grow with the thread count).
    const fs::path rank = dir.path / "dump/step0/rank0";
    std::string entries;
    for (int i = 0; i < 4; ++i) {
        const std::string op = "Functional.big" + std::to_string(i) + ".0.forward";
        entries += std::string(i ? "," : "") + "\"" + op +
            R"(": {"input_args": [], "input_kwargs": {}, "output": [{"type": "torch.Tensor", "dtype": "torch.float16", "shape": [2], "Max": 1.0, "Min": 0.0, "Mean": 0.5, "Norm": 1.0, "requires_grad": false, "data_name": ")" +
            op + ".output.0.pt\"}]}";
        fs::create_directories(rank / "dump_tensor_data");
        writeStoredZipPickle(rank / "dump_tensor_data" / (op + ".output.0.pt"), "N0", kSize / 2);
    }
    dltest::writeFile(rank / "dump.json",
                      R"({"task": "tensor", "level": "L1", "framework": "pytorch", "data": {)" + entries + "}}");
    DumpIndex idx;
    IndexReport report;
    IndexOptions o;
    o.useCache = false;
    o.threads = 4;
    std::string error;
    ASSERT_TRUE(indexDump((dir.path / "dump").string(), o, idx, report, error)) << error;
    std::size_t refused = 0;
    for (const IndexWarning& w : idx.warnings) refused += w.reason.find("not a tensor's pickle") != std::string::npos;
    EXPECT_EQ(refused, 4u);
    const long indexMb = (maxRssKb() - before) / 1024;
    std::printf("peak RSS grew by %ld MiB after indexing four on four threads\n", indexMb);
    EXPECT_LT(indexMb, 64 + 64 + kSanitizerSlackMb);
}
