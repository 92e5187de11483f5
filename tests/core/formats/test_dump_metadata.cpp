#include "core/formats/mindspore/dump_metadata.h"

#include <gtest/gtest.h>

#include <filesystem>

using namespace dl;
namespace fs = std::filesystem;

namespace {
DumpConfig loadConfig(const std::string& rel) {
    std::string text, err;
    EXPECT_TRUE(readSmallTextFile(std::string(DUMPLENS_SAMPLES_DIR) + "/" + rel, text, err)) << err;
    DumpConfig c;
    EXPECT_TRUE(parseDumpConfig(text, c, err)) << rel << ": " << err;
    return c;
}
}  // namespace

TEST(DumpMetadata, MsRunConfig) {
    MsRunConfig c;
    std::string err;
    ASSERT_TRUE(parseMsRunConfig(R"({"device_target":"Ascend","ms_version":"2.2.0"})", c, err)) << err;
    EXPECT_EQ(c.deviceTarget, "Ascend");
    EXPECT_EQ(c.msVersion, "2.2.0");
    EXPECT_FALSE(parseMsRunConfig("{}", c, err));
    EXPECT_FALSE(parseMsRunConfig("not json", c, err));
    EXPECT_FALSE(parseMsRunConfig("[1]", c, err));
}

TEST(DumpMetadata, EveryDumpConfigSampleParses) {
    int n = 0;
    for (const char* dir : {"mindinsight", "mindspore-docs", "mindspore-tests/st_dump"}) {
        for (const auto& e : fs::recursive_directory_iterator(fs::path(DUMPLENS_SAMPLES_DIR) / dir)) {
            if (!e.is_regular_file() || e.path().extension() != ".json" || e.path().filename() == "hccl.json") continue;
            std::string text, err;
            ASSERT_TRUE(readSmallTextFile(e.path().string(), text, err)) << err;
            DumpConfig c;
            EXPECT_TRUE(parseDumpConfig(text, c, err)) << e.path() << ": " << err;
            EXPECT_FALSE(c.netName.empty()) << e.path();
            EXPECT_FALSE(c.iteration.empty()) << e.path();
            ++n;
        }
    }
    EXPECT_EQ(n, 8);
}

TEST(DumpMetadata, AsyncOldStyle) {
    auto c = loadConfig("mindinsight/Ascend_async/rank_0/.dump_metadata/data_dump.json");
    EXPECT_EQ(c.dumpMode, 0);
    EXPECT_EQ(c.path, "/absolute_path");
    EXPECT_EQ(c.netName, "Lenet");
    EXPECT_EQ(c.iteration, "0");  // uint in <=1.2
    EXPECT_EQ(c.inputOutput, 0);
    EXPECT_EQ(c.kernels, std::vector<std::string>{"Default/Conv-op12"});
    EXPECT_EQ(c.supportDevice.size(), 8u);
    EXPECT_TRUE(c.hasAsyncSection);
    EXPECT_EQ(c.asyncEnable, std::optional<bool>(true));
    EXPECT_EQ(c.opDebugMode, 0);
    EXPECT_FALSE(c.isE2e());
    EXPECT_EQ(c.savedData, "tensor");
}

TEST(DumpMetadata, SyncAndDocs) {
    auto s = loadConfig("mindinsight/Ascend_sync/rank_0/.dump_metadata/data_dump.json");
    EXPECT_EQ(s.iteration, "all");
    EXPECT_TRUE(s.isE2e());
    EXPECT_EQ(s.transFlag, std::optional<bool>(false));
    EXPECT_EQ(s.opDebugMode, -1);

    auto a = loadConfig("mindspore-docs/sample_code_dump/async_dump.json");
    EXPECT_EQ(a.fileFormat, "bin");
    EXPECT_EQ(a.iteration, "0");
    EXPECT_EQ(a.opDebugMode, 0);
    EXPECT_EQ(a.savedData, "tensor");
    EXPECT_FALSE(a.hasE2eSection);
    EXPECT_FALSE(a.isE2e());

    auto d = loadConfig("mindspore-docs/sample_code_dump/sync_dump.json");
    EXPECT_EQ(d.inputOutput, 2);
    EXPECT_EQ(d.transFlag, std::optional<bool>(true));
    EXPECT_TRUE(d.isE2e());

    auto m = loadConfig("mindspore-tests/st_dump/test_async_dump_net_multi_layer_mode1.json");
    EXPECT_EQ(m.kernels.size(), 5u);
    EXPECT_TRUE(m.hasE2eSection);
    EXPECT_FALSE(m.isE2e());
    EXPECT_EQ(m.asyncEnable, std::optional<bool>(true));
}

TEST(DumpMetadata, Ms23Categories) {
    DumpConfig c;
    std::string err;
    ASSERT_TRUE(parseDumpConfig(R"({"common_dump_settings":{"dump_mode":0,"path":"/x","net_name":"Net",
        "iteration":"0|5-8","saved_data":"statistic","input_output":0,"kernels":[],"support_device":[0],
        "op_debug_mode":3,"file_format":"npy","statistic_category":["max","min","l2norm"]},
        "e2e_dump_settings":{"enable":true,"trans_flag":true,"stat_calc_mode":"device"}})",
                                c, err))
        << err;
    EXPECT_EQ(c.iteration, "0|5-8");
    EXPECT_EQ(c.savedData, "statistic");
    EXPECT_EQ(c.opDebugMode, 3);
    EXPECT_EQ(c.fileFormat, "npy");
    EXPECT_EQ(c.statisticCategory, (std::vector<std::string>{"max", "min", "l2norm"}));
    EXPECT_EQ(c.statCalcMode, "device");
}

TEST(DumpMetadata, BadConfigs) {
    const char* bad[] = {"",
                         "{",
                         "[]",
                         R"({"e2e_dump_settings":{}})",
                         R"({"common_dump_settings":[]})",
                         R"({"common_dump_settings":{"dump_mode":"x"}})",
                         R"({"common_dump_settings":{"kernels":"Default"}})",
                         R"({"common_dump_settings":{"support_device":[-1]}})",
                         R"({"common_dump_settings":{"path":[1]}})",
                         R"({"common_dump_settings":{},"e2e_dump_settings":{"enable":"yes"}})"};
    for (const char* t : bad) {
        DumpConfig c;
        std::string err;
        EXPECT_FALSE(parseDumpConfig(t, c, err)) << t;
        EXPECT_FALSE(err.empty()) << t;
    }
}

TEST(DumpMetadata, HcclSample) {
    std::string text, err;
    ASSERT_TRUE(readSmallTextFile(std::string(DUMPLENS_SAMPLES_DIR) + "/mindinsight/Ascend_async/.metadata/hccl.json",
                                  text, err));
    std::vector<RankTableEntry> ranks;
    ASSERT_TRUE(parseRankTable(text, ranks, err)) << err;
    ASSERT_EQ(ranks.size(), 2u);
    EXPECT_EQ(ranks[0].rank, 0u);
    EXPECT_EQ(ranks[0].server, "0.0.0.0");
    EXPECT_EQ(ranks[0].hostIp, "reserve");
    EXPECT_EQ(ranks[0].deviceId, "0");
    EXPECT_EQ(ranks[0].deviceIp, "0.0.0.1");
    EXPECT_EQ(ranks[1].rank, 1u);
    EXPECT_EQ(ranks[1].deviceId, "1");
}

TEST(DumpMetadata, RankTableVariants) {
    std::vector<RankTableEntry> ranks;
    std::string err;
    // Two servers, numeric ids, ranks out of order.
    ASSERT_TRUE(parseRankTable(R"({"server_list":[
        {"server_id":"10.0.0.2","host_ip":"10.0.0.2","device":[{"device_id":0,"device_ip":"a","rank_id":8}]},
        {"server_id":"10.0.0.1","device":[{"device_id":"3","rank_id":"3"}]}]})",
                               ranks, err))
        << err;
    ASSERT_EQ(ranks.size(), 2u);
    EXPECT_EQ(ranks[0].rank, 3u);
    EXPECT_EQ(ranks[0].server, "10.0.0.1");
    EXPECT_EQ(ranks[1].rank, 8u);
    EXPECT_EQ(ranks[1].hostIp, "10.0.0.2");
    EXPECT_EQ(ranks[1].deviceId, "0");
    // Old group_list layout.
    ASSERT_TRUE(parseRankTable(R"({"group_count":"1","group_list":[{"group_name":"hccl_world_group","instance_list":[
        {"devices":[{"device_id":"1","device_ip":"x"}],"rank_id":"1","server_id":"s1"},
        {"devices":[{"device_id":"0","device_ip":"y"}],"rank_id":"0","server_id":"s1"}]}]})",
                               ranks, err))
        << err;
    ASSERT_EQ(ranks.size(), 2u);
    EXPECT_EQ(ranks[0].rank, 0u);
    EXPECT_EQ(ranks[0].deviceId, "0");
    EXPECT_EQ(ranks[0].group, "hccl_world_group");
    EXPECT_EQ(ranks[1].server, "s1");
    // Failures.
    EXPECT_FALSE(parseRankTable(R"({"version":"1.0"})", ranks, err));
    EXPECT_FALSE(parseRankTable(R"({"server_list":[{"device":[{"rank_id":"x"}]}]})", ranks, err));
    EXPECT_NE(err.find("rank_id"), std::string::npos);
    EXPECT_FALSE(parseRankTable("nope", ranks, err));
}
