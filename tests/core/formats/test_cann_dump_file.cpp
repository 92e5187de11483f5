// Raw CANN dump files (docs/formats.md 2): the protobuf wire reader, the DumpData header (field numbers
// of OpInput vs OpOutput), payload offsets, dtypes, device layouts without padding, and indexing
// of raw files in the CANN, <=1.2 async and aclnn (swapped name) trees.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>

#include "core/formats/cann/cann_dump_file.h"
#include "core/formats/cann/cann_dump_writer.h"
#include "core/formats/cann/device_layout.h"
#include "core/index/dump_indexer.h"
#include "core/io/npy_writer.h"
#include "core/io/protobuf_reader.h"
#include "core/io/protobuf_writer.h"
#include "tests/core/temp_dir.h"

namespace fs = std::filesystem;
using namespace dl;

namespace {

using TempDir = dltest::TempDir;

void writeBytes(const fs::path& p, const std::string& bytes) { dltest::writeFile(p, bytes); }

std::string encode(const std::vector<float>& v, DType t) {
    std::string bytes, error;
    EXPECT_TRUE(encodeFloats(v, t, bytes, error)) << error;
    return bytes;
}

bool parse(const std::string& file, CannDumpHeader& h, std::string& error) {
    return parseCannDumpHeader(reinterpret_cast<const std::uint8_t*>(file.data()), file.size(), file.size(), h, error);
}

IndexOptions noCache() {
    IndexOptions o;
    o.useCache = false;
    o.threads = 2;
    return o;
}

const TensorRecord* tensorOf(const DumpIndex& idx, const OpRecord& op, Io io, int slot) {
    for (std::uint32_t k = 0; k < op.tensorCount; ++k) {
        const auto& t = idx.tensors[op.firstTensor + k];
        if (t.io == io && t.slot == slot) return &t;
    }
    return nullptr;
}

}  // namespace

TEST(ProtobufReader, ReadsEveryWireTypeAndSkipsUnknownFields) {
    ProtoWriter w;
    w.varint(1, 300);
    w.fixed64(2, 0x1122334455667788ull);
    w.bytes(3, "abc");
    w.fixed32(4, 0xdeadbeef);
    w.varint(5, ~0ull);  // 10-byte varint
    ProtoReader r(reinterpret_cast<const std::uint8_t*>(w.str().data()), w.str().size());
    ProtoField f;
    ASSERT_TRUE(r.next(f));
    EXPECT_EQ(f.number, 1u);
    EXPECT_EQ(f.value, 300u);
    ASSERT_TRUE(r.next(f));
    EXPECT_EQ(f.wire, WireType::Fixed64);
    EXPECT_EQ(f.value, 0x1122334455667788ull);
    ASSERT_TRUE(r.next(f));
    EXPECT_EQ(f.text(), "abc");
    ASSERT_TRUE(r.next(f));
    EXPECT_EQ(f.value, 0xdeadbeefu);
    ASSERT_TRUE(r.next(f));
    EXPECT_EQ(f.value, ~0ull);
    EXPECT_FALSE(r.next(f));
    EXPECT_STREQ(r.error(), "");
}

TEST(ProtobufReader, RejectsTruncatedAndMalformedInput) {
    const std::uint8_t truncatedVarint[] = {0x08, 0x80};
    const std::uint8_t longBytes[] = {0x1a, 0x05, 'a'};
    const std::uint8_t group[] = {0x0b};
    const std::uint8_t field0[] = {0x00, 0x01};
    for (auto [data, size] : {std::pair{truncatedVarint, sizeof truncatedVarint},
                              {longBytes, sizeof longBytes},
                              {group, sizeof group},
                              {field0, sizeof field0}}) {
        ProtoReader r(data, size);
        ProtoField f;
        while (r.next(f)) {}
        EXPECT_STRNE(r.error(), "");
    }
}

TEST(CannDumpFile, ParsesHeaderWithInputOutputNumberingAndOffsets) {
    CannTensorSpec in0{Io::Input, 2, 2, {4}, {4}, encode({1, 2, 3, -4}, DType::Float16)};
    CannTensorSpec in1{Io::Input, 27, 2, {2}, {2}, encode({0.5f, 8}, DType::BFloat16), false};  // unpacked dims
    CannTensorSpec out0{Io::Output, 1, 29, {1, 1, 16, 16}, {3, 5}, std::string(256 * 4, '\0')};
    out0.originalOpName = "fused_from";
    const std::string file = buildCannDumpFile({in0, in1, out0}, "Default/Add-op1", 1234, {"LOG!"});
    CannDumpHeader h;
    std::string error;
    ASSERT_TRUE(parse(file, h, error)) << error;
    EXPECT_EQ(h.version, "2.0");
    EXPECT_EQ(h.dumpTime, 1234u);
    EXPECT_EQ(h.opName, "Default/Add-op1");
    ASSERT_EQ(h.inputs.size(), 2u);
    ASSERT_EQ(h.outputs.size(), 1u);
    ASSERT_EQ(h.buffers.size(), 1u);
    EXPECT_EQ(h.inputs[0].dtype, DType::Float16);
    EXPECT_EQ(h.inputs[0].size, 8u);
    EXPECT_EQ(h.inputs[0].originalShape, (std::vector<std::int64_t>{4}));
    EXPECT_EQ(h.inputs[1].dtype, DType::BFloat16);
    EXPECT_EQ(h.inputs[1].shape, (std::vector<std::int64_t>{2}));
    EXPECT_EQ(h.inputs[1].slot, 1);
    EXPECT_EQ(h.outputs[0].format, "FRACTAL_NZ");
    EXPECT_EQ(h.outputs[0].size, 1024u);                                       // OpOutput.size is field 6, not 5
    EXPECT_EQ(h.outputs[0].originalShape, (std::vector<std::int64_t>{3, 5}));  // field 7
    EXPECT_EQ(h.outputs[0].originalOpName, "fused_from");
    const std::uint64_t base = 8 + h.headerLen;
    EXPECT_EQ(h.inputs[0].offset, base);
    EXPECT_EQ(h.inputs[1].offset, base + 8);
    EXPECT_EQ(h.outputs[0].offset, base + 12);
    EXPECT_EQ(h.buffers[0].offset, base + 12 + 1024);
    EXPECT_EQ(h.payloadEnd, file.size());
}

TEST(CannDumpFile, EnumNamesFollowFormatsMd) {
    bool packed = false;
    EXPECT_EQ(cannDataType(27, packed), DType::BFloat16);
    EXPECT_EQ(cannDataType(2, packed), DType::Float16);
    EXPECT_EQ(cannDataType(28, packed), DType::Int4);
    EXPECT_TRUE(packed);
    EXPECT_EQ(cannDataType(13, packed), DType::Unknown);
    EXPECT_EQ(cannDataTypeName(27), "DT_BF16");
    EXPECT_EQ(cannFormatName(3), "NC1HWC0");
    EXPECT_EQ(cannFormatName(4), "FRACTAL_Z");
    EXPECT_EQ(cannFormatName(29), "FRACTAL_NZ");
    EXPECT_EQ(cannFormatName(30), "NCDHW");
    EXPECT_EQ(cannFormatName(255), "MAX");
    EXPECT_EQ(cannFormatName(77), "FORMAT_77");
}

TEST(CannDumpFile, RejectsBadFilesWithReasons) {
    std::string file = buildCannDumpFile({{Io::Output, 1, 2, {2}, {2}, std::string(8, '\0')}}, "x");
    CannDumpHeader h;
    std::string error;
    EXPECT_FALSE(parse(file.substr(0, 5), h, error));
    EXPECT_NE(error.find("8-byte"), std::string::npos);
    EXPECT_FALSE(parse(file.substr(0, file.size() - 1), h, error));  // payload runs past the end
    EXPECT_NE(error.find("runs past"), std::string::npos);
    std::string huge = file;
    const std::uint64_t len = 1ull << 40;
    std::memcpy(huge.data(), &len, 8);
    EXPECT_FALSE(parse(huge, h, error));
    std::string garbage = file;
    garbage[8] = char(0x0f);  // wire type 7
    EXPECT_FALSE(parse(garbage, h, error));
    EXPECT_NE(error.find("wire type"), std::string::npos);
}

// Stored runs (offset, count), merged where they touch; the layouts' NumPy cases are in
// test_device_layout.cpp.
static std::vector<std::pair<std::uint64_t, std::uint64_t>> mergedRuns(const DeviceLayout& l) {
    std::vector<std::pair<std::uint64_t, std::uint64_t>> runs;
    l.forEachRun([&](std::uint64_t s, std::uint64_t n, std::uint64_t, std::uint64_t) {
        if (!runs.empty() && runs.back().first + runs.back().second == s)
            runs.back().second += n;
        else
            runs.emplace_back(s, n);
    });
    return runs;
}

TEST(DeviceLayout, FractalNzRunsCoverOnlyValues) {
    DeviceLayout l;
    std::string why;
    ASSERT_TRUE(DeviceLayout::build("FRACTAL_NZ", {2, 1, 16, 16}, {3, 20}, l, why)) << why;
    EXPECT_EQ(l.validElements(), 60u);
    const auto runs = mergedRuns(l);
    // Columns 0..15 of rows 0..2 (full rows merge into one run), then columns 16..19 of the
    // second 16x16 block.
    ASSERT_EQ(runs.size(), 4u);
    EXPECT_EQ(runs[0], (std::pair<std::uint64_t, std::uint64_t>{0, 48}));
    EXPECT_EQ(runs[3], (std::pair<std::uint64_t, std::uint64_t>{256 + 32, 4}));
    EXPECT_FALSE(DeviceLayout::build("FRACTAL_NZ", {2, 2, 16, 16}, {3, 20}, l, why));  // M1 wrong
    EXPECT_FALSE(DeviceLayout::build("FRACTAL_NZ", {1, 1, 16, 16}, {}, l, why));
}

TEST(DeviceLayout, Nc1hwc0AndFractalZ) {
    DeviceLayout l;
    std::string why;
    ASSERT_TRUE(DeviceLayout::build("NC1HWC0", {1, 2, 2, 2, 16}, {1, 20, 2, 2}, l, why)) << why;
    EXPECT_EQ(l.validElements(), 80u);
    auto runs = mergedRuns(l);
    // The first C1 block is full (64 values), then 4 channels in each of the 4 pixels of the
    // second; its first pixel touches the first block, so the two merge.
    ASSERT_EQ(runs.size(), 4u);
    EXPECT_EQ(runs[0], (std::pair<std::uint64_t, std::uint64_t>{0, 68}));
    EXPECT_EQ(runs[3], (std::pair<std::uint64_t, std::uint64_t>{64 + 48, 4}));
    ASSERT_TRUE(DeviceLayout::build("FRACTAL_Z", {1, 1, 16, 16}, {2, 3, 1, 1}, l, why)) << why;
    EXPECT_EQ(l.validElements(), 6u);
    runs = mergedRuns(l);
    ASSERT_EQ(runs.size(), 2u);
    EXPECT_EQ(runs[1], (std::pair<std::uint64_t, std::uint64_t>{16, 3}));
}

// rank_0/{net}/{graph}/{iter}/ with a raw file holding fp16 + bf16 inputs and an NZ output whose
// padding is filled with 1000 (so including it would be visible).
TEST(CannDumpIndex, IndexesRawFilesWithPaddingExcluded) {
    TempDir dir;
    std::vector<float> nz(256, 1000.0f);
    for (int m = 0; m < 3; ++m)
        for (int n = 0; n < 5; ++n) nz[m * 16 + n] = float(m * 5 + n) - 7;  // -7 .. 7
    CannTensorSpec in0{Io::Input, 2, 2, {4}, {4}, encode({1, 2, 3, 70000}, DType::Float16)};
    CannTensorSpec in1{Io::Input, 27, 2, {2}, {2}, encode({0.5f, -8}, DType::BFloat16)};
    CannTensorSpec out0{Io::Output, 1, 29, {1, 1, 16, 16}, {3, 5}, encode(nz, DType::Float32)};
    CannTensorSpec out1{Io::Output, 1, 29, {1, 1, 16, 16}, {}, encode(nz, DType::Float32)};  // no original shape
    writeBytes(dir.path / "rank_0/Net/0/3/MatMul.Default_MatMul-op5.11.2.1700000000000000",
               buildCannDumpFile({in0, in1, out0, out1}, "Default/MatMul-op5"));
    DumpIndex idx;
    IndexReport report;
    std::string error;
    ASSERT_TRUE(indexDump(dir.path.string(), noCache(), idx, report, error)) << error;
    ASSERT_EQ(idx.ops.size(), 1u);
    const OpRecord& op = idx.ops[0];
    EXPECT_EQ(idx.strings.view(op.type), "MatMul");
    EXPECT_EQ(idx.strings.view(op.name), "Default_MatMul-op5");
    EXPECT_EQ(op.taskId, 11u);
    EXPECT_EQ(op.streamId, 2u);
    EXPECT_EQ(op.iteration, 3u);
    ASSERT_EQ(op.tensorCount, 4u);
    const TensorRecord* a = tensorOf(idx, op, Io::Input, 0);
    ASSERT_TRUE(a);
    EXPECT_EQ(a->dtype, DType::Float16);
    EXPECT_EQ(idx.stats(*a).posInfCount, 1u);  // 70000 is inf in fp16
    EXPECT_EQ(idx.stats(*a).max, 3);
    const TensorRecord* b = tensorOf(idx, op, Io::Input, 1);
    ASSERT_TRUE(b);
    EXPECT_EQ(b->dtype, DType::BFloat16);
    EXPECT_EQ(idx.stats(*b).min, -8);
    const TensorRecord* c = tensorOf(idx, op, Io::Output, 0);
    ASSERT_TRUE(c);
    EXPECT_TRUE(c->flags & DeviceFormat);
    EXPECT_TRUE(c->flags & PaddingExcluded);
    EXPECT_EQ(idx.strings.view(c->format), "FRACTAL_NZ");
    EXPECT_EQ(idx.shape(*c), (std::vector<std::int64_t>{1, 1, 16, 16}));
    EXPECT_EQ(idx.originalShape(*c), (std::vector<std::int64_t>{3, 5}));
    EXPECT_EQ(idx.stats(*c).count, 15u);
    EXPECT_EQ(idx.stats(*c).max, 7);
    EXPECT_EQ(idx.stats(*c).min, -7);
    EXPECT_EQ(idx.stats(*c).zeroCount, 1u);
    EXPECT_EQ(idx.side(*c).dataBytes, 1024u);
    const TensorRecord* d = tensorOf(idx, op, Io::Output, 1);
    ASSERT_TRUE(d);
    EXPECT_TRUE(d->flags & PaddingIncluded);
    EXPECT_EQ(idx.stats(*d).count, 256u);
    EXPECT_EQ(idx.stats(*d).max, 1000);
    ASSERT_EQ(report.formats.size(), 1u);
    EXPECT_EQ(report.formats[0], "CANN raw");
}

TEST(CannDumpIndex, Nc1hwc0StatisticsSkipPadding) {
    TempDir dir;
    std::vector<float> v(1 * 1 * 2 * 1 * 16, -500.0f);  // N=1, C=3, H=2, W=1 -> C1=1, C0=16
    for (int hw = 0; hw < 2; ++hw)
        for (int c = 0; c < 3; ++c) v[hw * 16 + c] = float(c + 1);
    writeBytes(dir.path / "rank_1/Net/0/0/Conv2D.Conv2D-op1.1.1.100",
               buildCannDumpFile({{Io::Output, 1, 3, {1, 1, 2, 1, 16}, {1, 3, 2, 1}, encode(v, DType::Float32)}}, "c"));
    DumpIndex idx;
    IndexReport report;
    std::string error;
    ASSERT_TRUE(indexDump(dir.path.string(), noCache(), idx, report, error)) << error;
    ASSERT_EQ(idx.tensors.size(), 1u);
    EXPECT_EQ(idx.stats(idx.tensors[0]).count, 6u);
    EXPECT_EQ(idx.stats(idx.tensors[0]).min, 1);
    EXPECT_EQ(idx.ops[0].rank, 1u);
}

// <=1.2 async: {device_id}/{net}_graph_{g}/{g}/{iteration}/{type}.{name}.{task}.{ts} (no stream);
// 2.3 aclnn: {op_name}.{op_type}.{task}.{stream}.{ts} directly in {device_id}/.
TEST(CannDumpIndex, OldAsyncTreeAndAclnnSwappedNames) {
    TempDir dir;
    const std::string f = buildCannDumpFile({{Io::Output, 1, 2, {2}, {2}, encode({1, 2}, DType::Float32)}}, "x");
    writeBytes(dir.path / "0/lenet_graph_1/1/4/Add.Add-op3.5.1600000000000000", f);
    DumpIndex idx;
    IndexReport report;
    std::string error;
    ASSERT_TRUE(indexDump(dir.path.string(), noCache(), idx, report, error)) << error;
    ASSERT_EQ(idx.ops.size(), 1u);
    EXPECT_EQ(idx.strings.view(idx.ops[0].type), "Add");
    EXPECT_EQ(idx.strings.view(idx.ops[0].name), "Add-op3");
    EXPECT_EQ(idx.ops[0].iteration, 4u);
    EXPECT_EQ(idx.ops[0].graph, 1u);
    EXPECT_EQ(idx.ops[0].taskId, 5u);
    EXPECT_EQ(idx.stats(idx.tensors[0]).max, 2);

    TempDir dir2;
    writeBytes(dir2.path / "20240101/20240101120000/0/aclnnAdd_Default_Add-op0.aclnnAdd.65535.65535.1700000000000001",
               f);
    DumpIndex idx2;
    ASSERT_TRUE(indexDump(dir2.path.string(), noCache(), idx2, report, error)) << error;
    ASSERT_EQ(idx2.ops.size(), 1u);
    EXPECT_EQ(idx2.strings.view(idx2.ops[0].type), "aclnnAdd");  // swap undone
    EXPECT_EQ(idx2.strings.view(idx2.ops[0].name), "aclnnAdd_Default_Add-op0");
    EXPECT_EQ(idx2.tensors.size(), 1u);
}

TEST(CannDumpIndex, BrokenRawFileBecomesAWarning) {
    TempDir dir;
    std::string f = buildCannDumpFile({{Io::Output, 1, 2, {2}, {2}, encode({1, 2}, DType::Float32)}}, "x");
    writeBytes(dir.path / "rank_0/Net/0/0/Add.Add-op1.1.1.100", f.substr(0, f.size() - 3));
    DumpIndex idx;
    IndexReport report;
    std::string error;
    ASSERT_TRUE(indexDump(dir.path.string(), noCache(), idx, report, error)) << error;
    EXPECT_TRUE(idx.tensors.empty());
    bool warned = false;
    for (const auto& w : idx.warnings) warned |= w.reason.find("runs past the end") != std::string::npos;
    EXPECT_TRUE(warned);
}

TEST(CannDumpIndex, CachedRawFilesComeBackWithShapes) {
    TempDir dir, cache;
    std::vector<float> nz(256, 0);
    writeBytes(dir.path / "rank_0/Net/0/0/MatMul.MatMul-op1.1.1.100",
               buildCannDumpFile({{Io::Output, 1, 29, {1, 1, 16, 16}, {3, 5}, encode(nz, DType::Float32)},
                                  {Io::Input, 2, 2, {3}, {3}, encode({1, 2, 3}, DType::Float16)}},
                                 "x"));
    writeBytes(dir.path / "rank_0/Net/0/0/Add.Add-op2.2.1.200",
               buildCannDumpFile({{Io::Output, 1, 2, {1}, {1}, encode({5}, DType::Float32)}}, "y"));
    IndexOptions o = noCache();
    o.useCache = true;
    o.cacheDir = cache.path.string();
    DumpIndex first, second;
    IndexReport r1, r2;
    std::string error;
    ASSERT_TRUE(indexDump(dir.path.string(), o, first, r1, error)) << error;
    // Touch one file so the shard is rebuilt and the other raw file is reused from the cache.
    writeBytes(dir.path / "rank_0/Net/0/0/Add.Add-op2.2.1.200",
               buildCannDumpFile({{Io::Output, 1, 2, {1}, {1}, encode({6}, DType::Float32)}}, "y"));
    ASSERT_TRUE(indexDump(dir.path.string(), o, second, r2, error)) << error;
    EXPECT_EQ(r2.filesReused, 1u);
    ASSERT_EQ(second.tensors.size(), first.tensors.size());
    for (std::size_t i = 0; i < first.tensors.size(); ++i) {
        EXPECT_EQ(second.shape(second.tensors[i]), first.shape(first.tensors[i]));
        EXPECT_EQ(second.originalShape(second.tensors[i]), first.originalShape(first.tensors[i]));
        EXPECT_EQ(second.tensors[i].flags, first.tensors[i].flags);
    }
    EXPECT_EQ(second.stats(second.tensors.back()).max, 6);
}
