// Pipeline stages from the Send/Receive kernels the execution order files name, on a dump that
// holds no tensor of them (overflow-only or partial dumps): the send/receive topology, not the
// ops-held guess. The stages are set here, out of rank order, and must come back exactly.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <string>

#include "core/analysis/overflow_analyzer.h"
#include "core/index/dump_indexer.h"
#include "core/io/npy_writer.h"
#include "core/util/text_lines.h"
#include "tests/core/index_uncached.h"
#include "tests/core/temp_dir.h"

namespace fs = std::filesystem;
using namespace dl;
using dltest::TempDir;
using dltest::writeFile;

namespace {

const char* kScope = "Default/network-_VirtualDatasetCell/_backbone-PipelineCell/network-Net";

// Rank r at stage stageOf[r] of `stages`: one MatMul tensor in the dump; its execution order
// lists the MatMul and the pipeline's Send/Receive (forward: stage s sends sr_tag s; backward
// under Gradients/ the other way), as MindSpore's pipeline cells name them.
void writeRank(const fs::path& root, std::uint32_t rank, int stage, int stages, bool withOrder = true) {
    const std::string dir = "rank_" + std::to_string(rank);
    const std::string matmul = "MatMul-op" + std::to_string(100 * (rank + 1));
    const fs::path npy = root / dir / "net" / "0" / "1" /
        ("MatMul." + std::string(kScope) + "_" + matmul + ".1.2.170000000000000" + std::to_string(rank) +
         ".output.0.DefaultFormat.float16.npy");
    fs::create_directories(npy.parent_path());
    std::string bytes, error;
    ASSERT_TRUE(encodeFloats({1, 2}, DType::Float16, bytes, error)) << error;
    ASSERT_TRUE(writeNpyFile(npy.string(), DType::Float16, {2}, bytes, error)) << error;
    if (!withOrder) return;
    std::string order = "NodeExecutionOrder-FullNameWithScope\n";
    const std::string base = std::string(kScope) + "/";
    int op = 1000 * int(rank + 1);
    if (stage > 0)
        order += base + "_pipeline_receive_sr_tag_" + std::to_string(stage - 1) + "/Receive-op" + std::to_string(op++) +
            "\n";
    order += base + matmul + "\n";
    if (stage + 1 < stages) {
        order += base + "_pipeline_send_sr_tag_" + std::to_string(stage) + "/Send-op" + std::to_string(op++) + "\n";
        order += "Gradients/" + base + "_pipeline_send_sr_tag_" + std::to_string(stage) + "/gradSend/Receive-op" +
            std::to_string(op++) + "\n";
    }
    if (stage > 0)
        order += "Gradients/" + base + "_pipeline_receive_sr_tag_" + std::to_string(stage - 1) +
            "/gradReceive/Send-op" + std::to_string(op++) + "\n";
    writeFile(root / dir / "execution_order" / "ms_execution_order_graph_0.csv", order);
}

AnalysisResult analyzeDump(const fs::path& root) {
    const DumpIndex idx = dltest::indexUncached(root.string());
    return analyze(idx);
}

}  // namespace

TEST(StageFromExecutionOrder, SendReceiveOfTheOrderFilesPlaceEveryRank) {
    TempDir d;
    // Two ranks per stage (tensor parallel), stages out of rank order.
    const std::map<std::uint32_t, int> truth{{0, 1}, {1, 0}, {2, 2}, {3, 1}, {4, 0}, {5, 2}};
    for (const auto& [rank, stage] : truth) writeRank(d.path, rank, stage, 3);
    const AnalysisResult r = analyzeDump(d.path);
    EXPECT_EQ(r.stages.source, "send/receive topology (execution order files)");
    EXPECT_TRUE(r.stages.confident);
    EXPECT_EQ(r.stages.stageCount, 3);
    EXPECT_EQ(r.stages.stageOfRank, truth);
}

TEST(StageFromExecutionOrder, BackwardTrafficAloneStillOrdersTheStages) {
    TempDir d;
    const std::map<std::uint32_t, int> truth{{0, 2}, {1, 0}, {2, 1}};
    for (const auto& [rank, stage] : truth) {
        writeRank(d.path, rank, stage, 3);
        // Keep only the Gradients/ lines: a dump of the backward pass's order.
        const fs::path f =
            d.path / ("rank_" + std::to_string(rank)) / "execution_order" / "ms_execution_order_graph_0.csv";
        std::string kept;
        for (const std::string& line : splitLines(dltest::readText(f)))
            if (line.find("Send") == std::string::npos && line.find("Receive") == std::string::npos)
                kept += line + "\n";
            else if (line.starts_with("Gradients/"))
                kept += line + "\n";
        writeFile(f, kept);
    }
    const AnalysisResult r = analyzeDump(d.path);
    EXPECT_EQ(r.stages.source, "send/receive topology (execution order files)");
    EXPECT_EQ(r.stages.stageOfRank, truth);
}

TEST(StageFromExecutionOrder, ARankWithoutAnOrderFileIsNotPlacedByIt) {
    TempDir d;
    writeRank(d.path, 0, 0, 2);
    writeRank(d.path, 1, 1, 2, /*withOrder=*/false);
    const AnalysisResult r = analyzeDump(d.path);
    EXPECT_NE(r.stages.source, "send/receive topology (execution order files)");
}
