// `dumplens-cli inspect` on one file: a "{digits}.npy" written for a name over NAME_MAX gets its
// op, slot and timestamp from the mapping.csv beside it, as the indexer does.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "core/index/tensor_inspection.h"
#include "core/io/npy_writer.h"
#include "tests/core/temp_dir.h"

namespace fs = std::filesystem;
using namespace dl;

TEST(TensorInspection, MappedNameIsResolvedThroughMappingCsv) {
    dltest::TempDir dir;
    const std::string original = "Add.Default_net-Net_" + std::string(220, 'x') +
        "_Add-op5.0.0.1734008383770118.output.0.DefaultFormat.float16.npy";
    ASSERT_GT(original.size(), 255u);
    std::string bytes, error;
    ASSERT_TRUE(encodeFloats({1, 2, 3}, DType::Float16, bytes, error)) << error;
    ASSERT_TRUE(writeNpyFile((dir.path / "3151620475.npy").string(), DType::Float16, {3}, bytes, error)) << error;
    dltest::writeFile(dir.path / "mapping.csv", "3151620475.npy," + original + "\n");

    TensorInspection t;
    ASSERT_TRUE(inspectTensorFile((dir.path / "3151620475.npy").string(), t, error)) << error;
    EXPECT_EQ(t.name.opType, "Add");
    EXPECT_EQ(t.name.opName, "Default_net-Net_" + std::string(220, 'x') + "_Add-op5");
    EXPECT_EQ(t.name.timestampUs, 1734008383770118);
    EXPECT_EQ(t.name.io, Io::Output);
    EXPECT_EQ(int(t.name.slot), 0);
    EXPECT_NE(inspectionText(t).find("_Add-op5 (output 0)"), std::string::npos) << inspectionText(t);

    // Without the mapping the file is still read, and names no op.
    fs::remove(dir.path / "mapping.csv");
    TensorInspection bare;
    ASSERT_TRUE(inspectTensorFile((dir.path / "3151620475.npy").string(), bare, error)) << error;
    EXPECT_TRUE(bare.name.opType.empty());
}

// L2 is over the finite elements, and says so: [1, inf, 3] gives sqrt(10) = 3.162 (where
// MindSpore 2.3+ statistic.csv and msprobe's Norm give inf), and an all-Inf tensor has none (null,
// not 0).
TEST(TensorInspection, L2IsOverFiniteElementsAndNullWithoutAny) {
    dltest::TempDir dir;
    std::string bytes, error;
    ASSERT_TRUE(encodeFloats({1.f, INFINITY, 3.f}, DType::Float32, bytes, error)) << error;
    ASSERT_TRUE(writeNpyFile((dir.path / "mixed.npy").string(), DType::Float32, {3}, bytes, error)) << error;
    ASSERT_TRUE(encodeFloats({INFINITY, -INFINITY}, DType::Float16, bytes, error)) << error;
    ASSERT_TRUE(writeNpyFile((dir.path / "allinf.npy").string(), DType::Float16, {2}, bytes, error)) << error;
    TensorInspection t;
    ASSERT_TRUE(inspectTensorFile((dir.path / "mixed.npy").string(), t, error)) << error;
    auto j = nlohmann::json::parse(inspectionJson(t));
    EXPECT_NEAR(j["stats"]["l2"].get<double>(), std::sqrt(10.0), 1e-9);
    EXPECT_EQ(j["stats"]["l2_over"], "finite elements");
    EXPECT_NE(inspectionText(t).find("L2 (finite) 3.162"), std::string::npos) << inspectionText(t);
    ASSERT_TRUE(inspectTensorFile((dir.path / "allinf.npy").string(), t, error)) << error;
    j = nlohmann::json::parse(inspectionJson(t));
    EXPECT_TRUE(j["stats"]["l2"].is_null()) << j["stats"].dump();
}
