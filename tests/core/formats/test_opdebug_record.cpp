#include "core/formats/cann/opdebug_record.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>

using namespace dl;

namespace {
// docs/formats.md section 6: MindSpore A+M JSON for an AI Core fp overflow.
constexpr const char* kMindSporeJson =
    R"({"AI Core":{"block_idx":1,"kernel_code":"0x1008005ae000","model_id":514,"para_base":"0x100800297000","pc_start":"0x1008005b0000","status":32,"stream_id":563,"task_id":57,"task_type":0},"DHA Atomic Add":{"model_id":0,"para_base":"0x0","pc_start":"0x0","status":0,"stream_id":0,"task_id":0,"task_type":0},"L2 Atomic Add":{"model_id":0,"para_base":"0x0","pc_start":"0x0","status":0,"stream_id":0,"task_id":0,"task_type":0}})";

void put64(std::vector<std::uint8_t>& b, std::size_t off, std::uint64_t v) {
    for (int i = 0; i < 8; ++i) b[off + i] = std::uint8_t(v >> (8 * i));
}

std::vector<std::uint8_t> samplePayload() {
    std::vector<std::uint8_t> p(opdebug::kPayloadSize, 0);
    put64(p, 256 + 0, 514);              // AI Core model_id
    put64(p, 256 + 8, 563);              // stream_id
    put64(p, 256 + 16, 57);              // task_id
    put64(p, 256 + 32, 0x1008005b0000);  // pc_start
    put64(p, 256 + 40, 0x100800297000);  // para_base
    put64(p, 1024, 0x1008005ae000);      // kernel_code
    put64(p, 1032, 1);                   // block_idx
    put64(p, 1040, 0x20);                // status
    return p;
}

void expectDocSample(const OpdebugRecord& r) {
    EXPECT_TRUE(r.aiCore.present);
    EXPECT_EQ(r.aiCore.modelId, 514u);
    EXPECT_EQ(r.aiCore.streamId, 563u);
    EXPECT_EQ(r.aiCore.taskId, 57u);
    EXPECT_EQ(r.aiCore.taskType, 0u);
    EXPECT_EQ(r.aiCore.pcStart, 0x1008005b0000u);
    EXPECT_EQ(r.aiCore.paraBase, 0x100800297000u);
    EXPECT_EQ(r.aiCore.status, 32u);
    EXPECT_EQ(r.kernelCode, 0x1008005ae000u);
    EXPECT_EQ(r.blockIdx, 1u);
    EXPECT_EQ(r.dhaAtomic.status, 0u);
    EXPECT_EQ(r.l2Atomic.status, 0u);
}
}  // namespace

TEST(Opdebug, MindSporeCompactJson) {
    OpdebugRecord r;
    std::string err;
    ASSERT_TRUE(parseOpdebugJson(kMindSporeJson, r, err)) << err;
    expectDocSample(r);
    EXPECT_TRUE(r.dhaAtomic.present);
    EXPECT_TRUE(r.l2Atomic.present);
    auto c = overflowCulprit(r);
    EXPECT_EQ(c.block, OverflowBlock::AiCore);
    EXPECT_EQ(c.taskId, 57u);
    EXPECT_EQ(c.streamId, 563u);
    EXPECT_EQ(c.modelId, 514u);
    EXPECT_EQ(c.status, 0x20u);
    EXPECT_EQ(describeOverflow(r), "AI Core task 57 stream 563 model 514: floating-point overflow (0x20)");
}

TEST(Opdebug, MsprobeUpperCaseHex) {
    std::string s = kMindSporeJson;
    for (auto [from, to] : {std::pair<std::string, std::string>{"0x1008005ae000", "0x1008005AE000"},
                            {"0x1008005b0000", "0x1008005B0000"}}) {
        s.replace(s.find(from), from.size(), to);
    }
    OpdebugRecord r;
    std::string err;
    ASSERT_TRUE(parseOpdebugJson(s, r, err)) << err;
    expectDocSample(r);
}

TEST(Opdebug, MsaccucmpIndentedWithBlockIdAndExtraKeys) {
    const char* text = R"({
    "DHA Atomic Add": {"model_id": 0, "stream_id": 0, "task_id": 0, "task_type": 0, "pc_start": "0x0", "para_base": "0x0", "status": 0},
    "L2 Atomic Add": {"model_id": 0, "stream_id": 0, "task_id": 0, "task_type": 0, "pc_start": "0x0", "para_base": "0x0", "status": 0},
    "AI Core": {"model_id": 514, "stream_id": 563, "task_id": 57, "task_type": 0, "context_id": 3, "thread_id": 1,
                "pc_start": "0x1008005b0000", "para_base": "0x100800297000", "kernel_code": "0x1008005ae000",
                "block_id": 1, "status": 32, "core_id": 7}
})";
    OpdebugRecord r;
    std::string err;
    ASSERT_TRUE(parseOpdebugJson(text, r, err)) << err;
    expectDocSample(r);
}

TEST(Opdebug, AtomicOverflowIsTheCulpritWhenAiCoreIsClean) {
    const char* text =
        R"({"AI Core":{"status":0,"task_id":1,"stream_id":1},"DHA Atomic Add":{"model_id":3,"status":0,"stream_id":9,"task_id":8},"L2 Atomic Add":{"model_id":3,"status":"5","stream_id":"11","task_id":"12"}})";
    OpdebugRecord r;
    std::string err;
    ASSERT_TRUE(parseOpdebugJson(text, r, err)) << err;
    auto c = overflowCulprit(r);
    EXPECT_EQ(c.block, OverflowBlock::L2Atomic);
    EXPECT_EQ(c.taskId, 12u);
    EXPECT_EQ(c.streamId, 11u);
    EXPECT_EQ(c.modelId, 3u);
    EXPECT_NE(describeOverflow(r).find("L2 Atomic Add task 12 stream 11"), std::string::npos);
    EXPECT_EQ(describeAtomicStatus(5), std::vector<std::string>{"atomic add overflow (status 0x5)"});
    EXPECT_TRUE(describeAtomicStatus(0).empty());
    r.l2Atomic.status = 0;
    EXPECT_EQ(overflowCulprit(r).block, OverflowBlock::None);
    EXPECT_NE(describeOverflow(r).find("no overflow"), std::string::npos);
}

TEST(Opdebug, StatusWords) {
    auto w = describeAiCoreStatus(0x8 | 0x10 | 0x20 | 0x80 | 0x100 | 0x400 | 0x1);
    ASSERT_EQ(w.size(), 7u);
    EXPECT_EQ(w[0], "signed integer minimum negated (overflow)");
    EXPECT_EQ(w[1], "integer add/sub/mul/mac overflow");
    EXPECT_EQ(w[2], "floating-point overflow");
    EXPECT_EQ(w[3], "negative float converted to unsigned");
    EXPECT_EQ(w[4], "FP32/INT32 to FP16 conversion overflow");
    EXPECT_EQ(w[5], "cube accumulation overflow");
    EXPECT_EQ(w[6], "bit 0x1");
    EXPECT_TRUE(describeAiCoreStatus(0).empty());
}

TEST(Opdebug, MalformedJson) {
    const char* bad[] = {"",
                         "{",
                         "[]",
                         "{}",
                         R"({"AI Core":5})",
                         R"({"AI Core":{"status":-1}})",
                         R"({"AI Core":{"status":"0xZZ"}})",
                         R"({"AI Core":{"task_id":1.5}})",
                         R"({"AI Core":{"block_idx":"x"}})",
                         R"({"AI Core":{"pc_start":"0x"}})"};
    for (const char* t : bad) {
        OpdebugRecord r;
        std::string err;
        EXPECT_FALSE(parseOpdebugJson(t, r, err)) << t;
        EXPECT_FALSE(err.empty()) << t;
    }
}

TEST(Opdebug, RawPayload) {
    auto p = samplePayload();
    put64(p, 512, 7);  // DHA status
    OpdebugRecord r;
    std::string err;
    ASSERT_TRUE(decodeOpdebugPayload(p.data(), p.size(), r, err)) << err;
    EXPECT_EQ(r.dhaAtomic.status, 7u);
    EXPECT_EQ(overflowCulprit(r).block, OverflowBlock::AiCore);  // AI Core wins over Atomic
    r.dhaAtomic.status = 0;
    expectDocSample(r);
    EXPECT_FALSE(decodeOpdebugPayload(p.data(), 1047, r, err));
    EXPECT_NE(err.find("1047"), std::string::npos);
    EXPECT_FALSE(decodeOpdebugPayload(nullptr, 0, r, err));
}

TEST(Opdebug, RawFileWithProtobufHeaderAndInput) {
    // DumpData header: op_name (field 6) and one OpInput (field 4) with size (field 5) = 16, one
    // OpOutput (field 3) with size (field 6) = 1048. Payload: 16 input bytes, then the table.
    std::vector<std::uint8_t> header = {0x32, 0x02, 'o',  'p',          // op_name "op"
                                        0x22, 0x02, 0x28, 0x10,         // input { size: 16 }
                                        0x1a, 0x03, 0x30, 0x98, 0x08};  // output { size: 1048 }
    std::vector<std::uint8_t> file(8, 0);
    file[0] = std::uint8_t(header.size());
    file.insert(file.end(), header.begin(), header.end());
    file.insert(file.end(), 16, 0xAB);
    auto p = samplePayload();
    file.insert(file.end(), p.begin(), p.end());
    OpdebugRecord r;
    std::string err;
    ASSERT_TRUE(decodeOpdebugFile(file.data(), file.size(), r, err)) << err;
    expectDocSample(r);

    // Header length beyond the file.
    auto broken = file;
    broken[0] = 0xff;
    broken[1] = 0xff;
    EXPECT_FALSE(decodeOpdebugFile(broken.data(), broken.size(), r, err));
    EXPECT_NE(err.find("header length"), std::string::npos);
    // Truncated payload.
    EXPECT_FALSE(decodeOpdebugFile(file.data(), file.size() - 1, r, err));
    EXPECT_FALSE(decodeOpdebugFile(file.data(), 4, r, err));
}

TEST(Opdebug, ReadFileJsonAndRaw) {
    const std::string dir = ::testing::TempDir();
    const std::string json = dir + "/Opdebug.Node_OpDebug.1.2.3.output.0.json",
                      raw = dir + "/Opdebug.Node_OpDebug.1.2.3";
    auto write = [](const std::string& p, const void* d, std::size_t n) {
        std::FILE* f = std::fopen(p.c_str(), "wb");
        ASSERT_NE(f, nullptr);
        std::fwrite(d, 1, n, f);
        std::fclose(f);
    };
    write(json, kMindSporeJson, std::strlen(kMindSporeJson));
    std::vector<std::uint8_t> file(8, 0);  // header length 0, payload right after
    auto p = samplePayload();
    file.insert(file.end(), p.begin(), p.end());
    write(raw, file.data(), file.size());
    OpdebugRecord r;
    std::string err;
    ASSERT_TRUE(readOpdebugFile(json, r, err)) << err;
    expectDocSample(r);
    ASSERT_TRUE(readOpdebugFile(raw, r, err)) << err;
    expectDocSample(r);
    std::remove(json.c_str());
    std::remove(raw.c_str());
    EXPECT_FALSE(readOpdebugFile(raw, r, err));
    EXPECT_NE(err.find(raw), std::string::npos);
}
