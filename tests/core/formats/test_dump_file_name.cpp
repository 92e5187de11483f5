#include "core/formats/mindspore/dump_file_name.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <numeric>
#include <regex>
#include <set>
#include <sstream>

using namespace dl;

namespace {
DumpFileName parse(std::string_view n) {
    DumpFileName f;
    parseDumpFileName(n, f);
    return f;
}
}  // namespace

TEST(DumpFileName, MindSpore8FieldDocExample) {
    auto f = parse("Conv2d.Conv2D-op107.2.2.1623124369613540.output.0.DefaultFormat.npy");
    EXPECT_EQ(f.kind, DumpFileKind::MindSporeNpy);
    EXPECT_EQ(f.opType, "Conv2d");
    EXPECT_EQ(f.opName, "Conv2D-op107");
    EXPECT_EQ(f.taskId, 2u);
    EXPECT_EQ(f.streamId, 2u);
    EXPECT_EQ(f.timestampUs, 1623124369613540);
    EXPECT_TRUE(f.hasIo);
    EXPECT_EQ(f.io, Io::Output);
    EXPECT_EQ(f.slot, 0);
    EXPECT_EQ(f.format, "DefaultFormat");
    EXPECT_EQ(f.dtype, DType::Unknown);
    EXPECT_TRUE(f.dtypeRaw.empty());
    EXPECT_TRUE(f.reason.empty());
}

TEST(DumpFileName, MindSpore9FieldWithDtype) {
    auto f = parse("Conv2D.Conv2D-op12.0.0.1623124369613540.output.0.DefaultFormat.float16.npy");
    EXPECT_EQ(f.kind, DumpFileKind::MindSporeNpy);
    EXPECT_EQ(f.opName, "Conv2D-op12");
    EXPECT_EQ(f.format, "DefaultFormat");
    EXPECT_EQ(f.dtype, DType::Float16);
    EXPECT_EQ(f.dtypeRaw, "float16");

    auto g = parse("Add.Default_Add-op0.0.0.1734008383669918.input.0.DefaultFormat.float32.npy");
    EXPECT_EQ(g.kind, DumpFileKind::MindSporeNpy);
    EXPECT_EQ(g.opType, "Add");
    EXPECT_EQ(g.opName, "Default_Add-op0");
    EXPECT_EQ(g.io, Io::Input);
    EXPECT_EQ(g.timestampUs, 1734008383669918);
    EXPECT_EQ(g.dtype, DType::Float32);

    auto b = parse("MatMul.Default_MatMul-op3.0.1.1734008383669918.output.0.ND.bfloat16.npy");
    EXPECT_EQ(b.dtype, DType::BFloat16);
    EXPECT_EQ(b.streamId, 1u);
    EXPECT_EQ(b.format, "ND");
}

TEST(DumpFileName, EmptyDtypeFieldIsAccepted) {
    auto f = parse("Add.Default_Add-op0.0.0.1734008383669918.output.0.DefaultFormat..npy");
    EXPECT_EQ(f.kind, DumpFileKind::MindSporeNpy);
    EXPECT_EQ(f.format, "DefaultFormat");
    EXPECT_EQ(f.dtype, DType::Unknown);
    EXPECT_EQ(f.dtypeRaw, "");
}

TEST(DumpFileName, ParameterNamesWithDots) {
    auto f = parse("Parameter.conv1.weight.0.0.1623124369613540.output.0.DefaultFormat.npy");
    EXPECT_EQ(f.kind, DumpFileKind::MindSporeNpy);
    EXPECT_EQ(f.opType, "Parameter");
    EXPECT_EQ(f.opName, "conv1.weight");
    EXPECT_EQ(f.taskId, 0u);
    EXPECT_EQ(f.timestampUs, 1623124369613540);

    auto g = parse("Parameter.moments.fc3.bias.0.0.1623124369613540.output.0.DefaultFormat.float32.npy");
    EXPECT_EQ(g.opName, "moments.fc3.bias");
    EXPECT_EQ(g.dtype, DType::Float32);

    auto c = parse("Parameter.data-3.0.0.1623124369613540.output.0.DefaultFormat.npy");
    EXPECT_EQ(c.opName, "data-3");
}

TEST(DumpFileName, AplusMAndMsprobeUpperCase) {
    auto f = parse("Add.Add-op1.7.3.1623124369613540.output.0.ND.npy");
    EXPECT_EQ(f.kind, DumpFileKind::MindSporeNpy);
    EXPECT_EQ(f.taskId, 7u);
    EXPECT_EQ(f.streamId, 3u);
    EXPECT_EQ(f.format, "ND");

    auto m = parse("MatMul.Default_MatMul-op5.12.65535.1700000000000000.input.1.FRACTAL_NZ.FLOAT16.npy");
    EXPECT_EQ(m.kind, DumpFileKind::MindSporeNpy);
    EXPECT_EQ(m.streamId, 65535u);
    EXPECT_EQ(m.slot, 1);
    EXPECT_EQ(m.format, "FRACTAL_NZ");
    EXPECT_EQ(m.dtype, DType::Float16);
    EXPECT_EQ(m.dtypeRaw, "FLOAT16");

    // msprobe writes bf16 raw without .npy.
    auto r = parse("MatMul.Default_MatMul-op5.12.2.1700000000000000.input.0.ND.BF16");
    EXPECT_EQ(r.kind, DumpFileKind::NamedRaw);
    EXPECT_EQ(r.dtype, DType::BFloat16);
    EXPECT_EQ(r.io, Io::Input);
}

TEST(DumpFileName, MsaccucmpConverted) {
    auto f = parse(
        "Conv2D.Default_network-WithLossCell__backbone-AlexNet_conv3-Conv2d_Conv2D-op12.2.7.161243956333802"
        ".input.0.32x256x13x13.npy");
    EXPECT_EQ(f.kind, DumpFileKind::ConvertedNpy);
    EXPECT_EQ(f.opType, "Conv2D");
    EXPECT_EQ(f.opName, "Default_network-WithLossCell__backbone-AlexNet_conv3-Conv2d_Conv2D-op12");
    EXPECT_EQ(f.taskId, 2u);
    EXPECT_EQ(f.streamId, 7u);
    EXPECT_EQ(f.timestampUs, 161243956333802);
    EXPECT_TRUE(f.hasShape);
    EXPECT_EQ(f.shape, (std::vector<std::int64_t>{32, 256, 13, 13}));
    EXPECT_TRUE(f.format.empty());

    auto g = parse("Pooling.pool1.1.5.1732082705016774.output.0.npy");
    EXPECT_EQ(g.kind, DumpFileKind::ConvertedNpy);
    EXPECT_EQ(g.opName, "pool1");
    EXPECT_EQ(g.slot, 0);
    EXPECT_FALSE(g.hasShape);

    auto one = parse("Cast.Default_Cast-op3.1.5.1732082705016774.output.0.10.npy");
    EXPECT_EQ(one.kind, DumpFileKind::ConvertedNpy);
    EXPECT_EQ(one.shape, (std::vector<std::int64_t>{10}));
}

TEST(DumpFileName, Opdebug) {
    auto r = parse("Opdebug.Node_OpDebug.57.563.1623124369613540");
    EXPECT_EQ(r.kind, DumpFileKind::OpdebugRaw);
    EXPECT_EQ(r.taskId, 57u);
    EXPECT_EQ(r.streamId, 563u);
    EXPECT_EQ(r.timestampUs, 1623124369613540);
    EXPECT_FALSE(r.hasIo);

    auto j = parse("Opdebug.Node_OpDebug.57.563.1623124369613540.output.0.json");
    EXPECT_EQ(j.kind, DumpFileKind::OpdebugJson);
    EXPECT_EQ(j.opName, "Node_OpDebug");
    EXPECT_EQ(j.taskId, 57u);
    EXPECT_TRUE(j.hasIo);
    EXPECT_EQ(j.slot, 0);

    EXPECT_EQ(parse("Opdebug.Node_OpDebug.57.563.1623124369613540.output.0.ND.npy").kind, DumpFileKind::OpdebugNpy);
    EXPECT_EQ(parse("Opdebug.Node_OpDebug.57.x.1623124369613540").kind, DumpFileKind::Unknown);
    EXPECT_EQ(parse("Opdebug.Node_OpDebug.57.563.1623124369613540.json").kind, DumpFileKind::Unknown);
}

TEST(DumpFileName, CannRaw) {
    auto f =
        parse("Conv2D.Default_network-WithLossCell__backbone-AlexNet_conv3-Conv2d_Conv2D-op12.2.7.161243956333802");
    EXPECT_EQ(f.kind, DumpFileKind::CannRaw);
    EXPECT_EQ(f.opType, "Conv2D");
    EXPECT_EQ(f.taskId, 2u);
    EXPECT_EQ(f.streamId, 7u);
    EXPECT_TRUE(f.hasStream);
    EXPECT_FALSE(f.hasIo);
    EXPECT_FALSE(f.typeNameSwapped);

    auto old = parse("Conv2D.Default_Conv2D-op12.2.161243956333802");  // <=1.2: no stream id
    EXPECT_EQ(old.kind, DumpFileKind::CannRaw);
    EXPECT_FALSE(old.hasStream);
    EXPECT_EQ(old.taskId, 2u);
    EXPECT_EQ(old.timestampUs, 161243956333802);

    auto aclnn = parse("Default_network_Add-op3.Add.65535.65535.1700000000000000");  // 2.3 aclnn: swapped
    EXPECT_EQ(aclnn.kind, DumpFileKind::CannRaw);
    EXPECT_TRUE(aclnn.typeNameSwapped);
    EXPECT_EQ(aclnn.opType, "Add");
    EXPECT_EQ(aclnn.opName, "Default_network_Add-op3");
    EXPECT_EQ(aclnn.taskId, 65535u);

    auto pool = parse("Pooling.pool1.1.5.1732082705016774");
    EXPECT_EQ(pool.kind, DumpFileKind::CannRaw);
    EXPECT_FALSE(pool.typeNameSwapped);
}

TEST(DumpFileName, MappedNames) {
    auto f = parse("1234567890.npy");
    EXPECT_EQ(f.kind, DumpFileKind::Mapped);
    EXPECT_EQ(f.mappedKey, "1234567890");
    auto g = parse("98765432109876543210987654321098");
    EXPECT_EQ(g.kind, DumpFileKind::Mapped);
    EXPECT_EQ(g.mappedKey, "98765432109876543210987654321098");
}

TEST(DumpFileName, Bin12Names) {
    auto f = parse(
        "Default--network-WithLossCell--_backbone-AlexNet--conv3-Conv2d--Conv2D-op308_output_0_shape_4_4_4_4_Float32_"
        "NCHW.bin");
    EXPECT_EQ(f.kind, DumpFileKind::MindSporeBin);
    EXPECT_EQ(f.opName, "Default--network-WithLossCell--_backbone-AlexNet--conv3-Conv2d--Conv2D-op308");
    EXPECT_EQ(binNameToScope(f.opName), "Default/network-WithLossCell/_backbone-AlexNet/conv3-Conv2d/Conv2D-op308");
    EXPECT_EQ(f.opType, "Conv2D");
    EXPECT_EQ(f.io, Io::Output);
    EXPECT_EQ(f.slot, 0);
    EXPECT_EQ(f.shape, (std::vector<std::int64_t>{4, 4, 4, 4}));
    EXPECT_EQ(f.dtype, DType::Float32);
    EXPECT_EQ(f.format, "NCHW");
    EXPECT_FALSE(f.hasIds);

    auto p = parse("moments.fc3.bias_output_0_shape_10_Float32_DefaultFormat.bin");
    EXPECT_EQ(p.opName, "moments.fc3.bias");
    EXPECT_EQ(p.opType, "Parameter");
    EXPECT_EQ(p.shape, (std::vector<std::int64_t>{10}));

    auto k = parse("conv2.bias_input_1_shape_128_kNumberTypeFloat32_DefaultFormat.bin");
    EXPECT_EQ(k.io, Io::Input);
    EXPECT_EQ(k.slot, 1);
    EXPECT_EQ(k.dtype, DType::Float32);
    EXPECT_EQ(k.dtypeRaw, "kNumberTypeFloat32");

    auto s = parse("Default--Mul-op3_output_0_shape_0_Float16_DefaultFormat.bin");  // scalar
    EXPECT_EQ(s.kind, DumpFileKind::MindSporeBin);
    EXPECT_TRUE(s.hasShape);
    EXPECT_TRUE(s.shape.empty());
    EXPECT_EQ(s.dtype, DType::Float16);

    auto u = parse("Default--Cast-op3_output_0_shape_2_16_Float16_FRACTAL_Z_3D.bin");  // format with '_'
    EXPECT_EQ(u.format, "FRACTAL_Z_3D");
    EXPECT_EQ(u.shape, (std::vector<std::int64_t>{2, 16}));
}

// Every .bin sample: the name's shape x dtype size equals the file size, and the parsed names match
// what MindSpore's own offline reader reported (golden/*.expected).
TEST(DumpFileName, GpuDumpSamplesAgreeWithGolden) {
    namespace fs = std::filesystem;
    const fs::path root = fs::path(DUMPLENS_SAMPLES_DIR) / "mindspore-tests/gpu_dumps";
    int files = 0;
    std::map<std::string, std::set<std::pair<std::string, int>>> seen;  // variant -> (short name, slot)
    for (const auto& e : fs::recursive_directory_iterator(root)) {
        if (!e.is_regular_file() || e.path().extension() != ".bin") continue;
        DumpFileName f;
        ASSERT_TRUE(parseDumpFileName(e.path().filename().string(), f)) << e.path() << ": " << f.reason;
        ASSERT_EQ(f.kind, DumpFileKind::MindSporeBin);
        std::uint64_t elems = std::accumulate(f.shape.begin(), f.shape.end(), std::uint64_t(1),
                                              [](std::uint64_t a, std::int64_t d) { return a * std::uint64_t(d); });
        EXPECT_EQ(elems * dtypeSize(f.dtype), fs::file_size(e.path())) << e.path();
        std::string variant = e.path().lexically_relative(root).begin()->string();
        std::string shortName = binNameToScope(f.opName);
        shortName = shortName.substr(shortName.rfind('/') + 1);
        seen[variant].insert({shortName, f.slot});
        ++files;
    }
    EXPECT_EQ(files, 14);
    for (const char* variant : {"sync_trans_true", "sync_trans_false"}) {
        std::ifstream in(root / "golden" / (std::string(variant) + "_read_tensors.expected"));
        ASSERT_TRUE(in) << variant;
        std::stringstream ss;
        ss << in.rdbuf();
        std::string text = ss.str();
        std::regex re(R"(node name =\s+(\S+)\s*\nslot =\s+(\d+))");
        int matched = 0;
        for (std::sregex_iterator it(text.begin(), text.end(), re), end; it != end; ++it) {
            std::string node = (*it)[1];
            std::string shortName = node.substr(node.rfind('/') + 1);
            int slot = std::stoi((*it)[2]);
            EXPECT_TRUE(seen[variant].count({shortName, slot})) << variant << " " << shortName << " slot " << slot;
            ++matched;
        }
        EXPECT_GE(matched, 3) << variant;
    }
}

TEST(DumpFileName, MalformedNamesGiveReasons) {
    const char* bad[] = {
        "",
        "statistic.csv",
        "mapping",
        "Add.json",
        "Add.Add-op1.x.0.1623124369613540.output.0.DefaultFormat.npy",    // task not a number
        "Add.Add-op1.0.0.1623124369613540.sideways.0.DefaultFormat.npy",  // io
        "Add.Add-op1.0.0.1623124369613540.output.x.DefaultFormat.npy",    // slot
        "Add.Add-op1.0.0.1623124369613540.output.0..npy",                 // empty format
        "Add.0.0.1623124369613540.output.0.DefaultFormat.npy",            // no op name
        ".npy",
        "....npy",
        "Add.Add-op1.99999999999.0.1623124369613540.output.0.DefaultFormat.npy",  // task > 32 bit
        "Add.Add-op1.0.0.99999999999999999999999.output.0.DefaultFormat.npy",     // timestamp overflow
        "x_output_0_shape_Float32_NCHW.bin",                                      // no dims
        "x_output_0_shape_4_Float99_NCHW.bin",                                    // unknown dtype
        "x_output_0_shape_4_Float32_.bin",                                        // empty format
        "_output_0_shape_4_Float32_ND.bin",                                       // empty name
        "x_sideways_0_shape_4_Float32_ND.bin",
        "x.bin",
        "a/b.npy",
        "Add.Add-op1.1.2.3.4.5",  // 7 fields, no io
    };
    for (const char* n : bad) {
        DumpFileName f;
        EXPECT_FALSE(parseDumpFileName(n, f)) << n;
        EXPECT_EQ(f.kind, DumpFileKind::Unknown) << n;
        EXPECT_FALSE(f.reason.empty()) << n;
    }
}
