// msprobe dumps (docs/formats.md 3): entry names, dump.json with bare NaN/Infinity tokens, non-tensor
// arguments, stack.json in both forms, construct.json, linked dump_tensor_data files, and the real
// sample files.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>

#include "core/analysis/comm_matcher.h"
#include "core/formats/msprobe/msprobe_dump.h"
#include "core/index/dump_indexer.h"
#include "core/io/npy_writer.h"
#include "tests/core/temp_dir.h"

namespace fs = std::filesystem;
using namespace dl;

namespace {

using TempDir = dltest::TempDir;

MsprobeEntry nameOf(std::string_view n) {
    MsprobeEntry e;
    parseMsprobeEntryName(n, e);
    return e;
}

const char* kDump = R"({
 "task": "tensor",
 "level": "mix",
 "framework": "mindspore",
 "dump_data_dir": "./dump/step1/rank2/dump_tensor_data",
 "data": {
  "Functional.linear.0.forward": {
   "input_args": [
    {"type": "mindspore.Tensor", "dtype": "Float16", "shape": [2, 3], "Max": NaN, "Min": -Infinity, "Mean": NaN, "Norm": Infinity,
     "data_name": "Functional.linear.0.forward.input.0.npy"},
    {"type": "int", "value": 1},
    [{"type": "slice", "value": [0, 2, null]}, {"type": "mindspore.Tensor", "dtype": "BFloat16", "shape": [], "Max": 1.5, "Min": 1.5, "Mean": 1.5, "Norm": 1.5}]
   ],
   "input_kwargs": {"alpha": {"type": "float", "value": 2.0}, "weight": {"type": "mindspore.Tensor", "dtype": "Float32", "shape": [3], "Max": 3, "Min": -1, "Mean": 1.0, "Norm": 3.3, "md5": "0a1b2c3d"}},
   "output": [{"type": "mindspore.Tensor", "dtype": "Float16", "shape": [2, 3], "Max": 65504.0, "Min": -2.0, "Mean": 1.0, "Norm": 9.0,
     "data_name": "Functional.linear.0.forward.output.0.pt"}, null]
  },
  "Distributed.all_reduce.0.forward": {
   "input_args": [{"type": "mindspore.Tensor", "dtype": "Float32", "shape": [4], "Max": 1, "Min": 0, "Mean": 0.5, "Norm": 1.4}],
   "input_kwargs": {"group": {"type": "torch.ProcessGroup", "group_ranks": [0, 1], "group_id": "abc"}},
   "output": [{"type": "mindspore.Tensor", "dtype": "Float32", "shape": [4], "Max": 2, "Min": 0, "Mean": 1, "Norm": 2.8}]
  },
  "Cell.net.layer.Dense.backward.0": {
   "input": [{"type": "mindspore.Tensor", "dtype": "Bool", "shape": [2], "Max": true, "Min": false, "Mean": null, "Norm": null}],
   "output": [{"type": "mindspore.Tensor", "dtype": "Float32", "shape": [0], "Max": null, "Min": null, "Mean": null, "Norm": null}]
  },
  "Cell.net.layer.Dense.parameters_grad.0": {"weight": [{"type": "mindspore.Tensor", "dtype": "Float32", "shape": [2, 2], "Max": 1, "Min": 1, "Mean": 1, "Norm": 2}]},
  "Tensor.__add__.3.forward": {"input_args": [{"type": "str", "value": "NaN and Infinity \" NaN"}], "input_kwargs": {}, "output": [{"type": "float", "value": -Infinity}]}
 }
})";

}  // namespace

TEST(MsprobeEntryName, EveryForm) {
    auto e = nameOf("Functional.conv2d.0.forward");
    EXPECT_EQ(e.kind, MsprobeEntryKind::Api);
    EXPECT_EQ(e.prefix, "Functional");
    EXPECT_EQ(e.op, "conv2d");
    EXPECT_EQ(e.callIndex, 0);
    EXPECT_FALSE(e.backward);
    e = nameOf("Aten.add.Tensor.12.backward");
    EXPECT_EQ(e.op, "add.Tensor");
    EXPECT_EQ(e.callIndex, 12);
    EXPECT_TRUE(e.backward);
    EXPECT_EQ(nameOf("Tensor.__add__.0.forward").op, "__add__");
    EXPECT_EQ(nameOf("Torch.matmul.3.forward").op, "matmul");
    EXPECT_EQ(nameOf("Distributed.all_reduce.7.forward").op, "all_reduce");
    e = nameOf("Module.module.language_model.encoder.layers.0.mlp.ParallelMlp.forward.2");
    EXPECT_EQ(e.kind, MsprobeEntryKind::Module);
    EXPECT_EQ(e.op, "ParallelMlp");
    EXPECT_EQ(e.modulePath, "module.language_model.encoder.layers.0.mlp");
    EXPECT_EQ(e.callIndex, 2);
    e = nameOf("Cell.relu.ReLU.backward.0");
    EXPECT_EQ(e.kind, MsprobeEntryKind::Module);
    EXPECT_TRUE(e.backward);
    e = nameOf("Module.conv1.Conv2d.parameters_grad.1");
    EXPECT_EQ(e.kind, MsprobeEntryKind::ParamGrad);
    EXPECT_EQ(e.op, "Conv2d");
    EXPECT_EQ(e.callIndex, 1);
    e = nameOf("loss.layer.3");
    EXPECT_EQ(e.kind, MsprobeEntryKind::Debug);
    EXPECT_EQ(e.op, "loss.layer");
}

TEST(MsprobeDumpJson, NonStandardTokensOnlyOutsideStrings) {
    std::string s = R"({"a": NaN, "b": [Infinity, -Infinity], "c": "NaN \" Infinity", "d": "x\\", "e": NaN})";
    EXPECT_EQ(neutralizeNonFiniteTokens(s.data(), s.size()), 4u);
    EXPECT_EQ(s, R"({"a": "N", "b": ["Infnty", "-Infnty"], "c": "NaN \" Infinity", "d": "x\\", "e": "N"})");
}

// Many tokens of one kind and none of the other (a run whose Max went to inf everywhere): every
// one is rewritten, and the next search for the absent kind is not repeated per token.
TEST(MsprobeDumpJson, ManyTokensOfOneKindOnly) {
    std::string s = "[";
    const std::size_t n = 200000;
    for (std::size_t i = 0; i < n; ++i) s += i ? ", Infinity" : "Infinity";
    s += "]";
    std::string expected = "[";
    for (std::size_t i = 0; i < n; ++i) expected += i ? ", \"Infnty\"" : "\"Infnty\"";
    expected += "]";
    EXPECT_EQ(neutralizeNonFiniteTokens(s.data(), s.size()), n);
    EXPECT_EQ(s, expected);
}

TEST(MsprobeDumpJson, ParsesTensorsStatisticsAndArguments) {
    std::string text = kDump;
    MsprobeDump d;
    std::string error;
    ASSERT_TRUE(parseMsprobeDumpJson(text, d, error)) << error;
    EXPECT_EQ(d.task, "tensor");
    EXPECT_EQ(d.level, "mix");
    EXPECT_EQ(d.framework, "mindspore");
    ASSERT_EQ(d.entries.size(), 5u);
    const MsprobeEntry& lin = d.entries[0];
    ASSERT_EQ(lin.tensors.size(), 4u);  // 2 positional tensors (one nested), kwarg weight, output 0
    EXPECT_EQ(lin.nonTensorArgs, 4u);   // int, slice, float kwarg, null output
    const MsprobeTensor& x = lin.tensors[0];
    EXPECT_EQ(x.path, "input_args.0");
    EXPECT_EQ(x.dtype, DType::Float16);
    EXPECT_EQ(x.shape, (std::vector<std::int64_t>{2, 3}));
    EXPECT_TRUE(x.stats.has(stat::NanCount));
    EXPECT_GE(x.stats.nanCount, 1u);
    EXPECT_GE(x.stats.negInfCount, 1u);
    EXPECT_FALSE(x.stats.has(stat::Max));
    EXPECT_FALSE(x.stats.has(stat::L2));
    EXPECT_EQ(x.stats.count, 6u);
    EXPECT_EQ(x.dataName, "Functional.linear.0.forward.input.0.npy");
    EXPECT_EQ(lin.tensors[1].path, "input_args.2.1");
    EXPECT_EQ(lin.tensors[1].dtype, DType::BFloat16);
    EXPECT_EQ(lin.tensors[1].stats.count, 1u);  // 0-d
    EXPECT_EQ(lin.tensors[2].path, "input_kwargs.weight");
    EXPECT_EQ(lin.tensors[2].io, Io::Input);
    EXPECT_EQ(lin.tensors[2].slot, 2);
    EXPECT_EQ(lin.tensors[2].md5, "0a1b2c3d");
    EXPECT_EQ(lin.tensors[2].stats.max, 3);
    EXPECT_EQ(lin.tensors[3].io, Io::Output);
    EXPECT_EQ(lin.tensors[3].slot, 0);
    EXPECT_EQ(lin.tensors[3].stats.max, 65504);
    EXPECT_EQ(d.entries[1].tensors.size(), 2u);
    EXPECT_EQ(d.entries[1].nonTensorArgs, 1u);  // process group
    const MsprobeEntry& bwd = d.entries[2];
    ASSERT_EQ(bwd.tensors.size(), 2u);
    EXPECT_EQ(bwd.tensors[0].io, Io::Input);  // grads w.r.t. outputs
    EXPECT_EQ(bwd.tensors[0].dtype, DType::Bool);
    EXPECT_EQ(bwd.tensors[0].stats.max, 1);
    EXPECT_EQ(bwd.tensors[0].stats.min, 0);
    EXPECT_EQ(bwd.tensors[1].stats.count, 0u);
    EXPECT_FALSE(bwd.tensors[1].stats.has(stat::Max));
    EXPECT_EQ(d.entries[3].kind, MsprobeEntryKind::ParamGrad);
    ASSERT_EQ(d.entries[3].tensors.size(), 1u);
    EXPECT_EQ(d.entries[3].tensors[0].path, "weight.0");
    EXPECT_TRUE(d.entries[4].tensors.empty());
    EXPECT_EQ(d.entries[4].nonTensorArgs, 2u);
}

TEST(MsprobeDumpJson, RejectsNonDumps) {
    MsprobeDump d;
    std::string error;
    std::string a = "[1,2]", b = R"({"task":"x"})", c = "{\"data\": {";
    EXPECT_FALSE(parseMsprobeDumpJson(a, d, error));
    EXPECT_FALSE(parseMsprobeDumpJson(b, d, error));
    EXPECT_NE(error.find("data"), std::string::npos);
    EXPECT_FALSE(parseMsprobeDumpJson(c, d, error));
}

TEST(MsprobeStackJson, OldAndNewForms) {
    std::unordered_map<std::string, std::string> stacks;
    std::string error;
    std::string oldForm =
        R"({"Tensor.__add__.0.forward": ["File a.py, line 1, in f, \n x", "File b.py, line 2, in g, \n y"]})";
    ASSERT_TRUE(parseMsprobeStackJson(oldForm, stacks, error)) << error;
    EXPECT_EQ(stacks["Tensor.__add__.0.forward"], "File a.py, line 1, in f, \n x\nFile b.py, line 2, in g, \n y");
    std::string newForm = R"({"0": [["A.x.0.forward", "B.y.1.forward"], ["File c.py, line 3, in h, \n z"]]})";
    stacks.clear();
    ASSERT_TRUE(parseMsprobeStackJson(newForm, stacks, error)) << error;
    EXPECT_EQ(stacks.size(), 2u);
    EXPECT_EQ(stacks["B.y.1.forward"], "File c.py, line 3, in h, \n z");
}

TEST(MsprobeIndex, RankFolderWithLinkedTensorsStacksAndModules) {
    TempDir dir;
    const fs::path rank = dir.path / "step1/rank2";
    dltest::writeFile(rank / "dump.json", kDump);
    dltest::writeFile(
        rank / "stack.json",
        R"({"0": [["Functional.linear.0.forward"], ["File model.py, line 7, in forward, \n y = linear x"]]})");
    dltest::writeFile(
        rank / "construct.json",
        R"({"Functional.linear.0.forward": "Cell.net.layer.Dense.forward.0", "Cell.net.layer.Dense.forward.0": "Cell.net.Net.forward.0", "Cell.net.Net.forward.0": null})");
    std::string bytes, error;
    fs::create_directories(rank / "dump_tensor_data");
    ASSERT_TRUE(encodeFloats({1, 2, 3, 4, 5, -6}, DType::Float16, bytes, error)) << error;
    ASSERT_TRUE(writeNpyFile((rank / "dump_tensor_data/Functional.linear.0.forward.input.0.npy").string(),
                             DType::Float16, {2, 3}, bytes, error))
        << error;
    dltest::writeFile(rank / "dump_tensor_data/Functional.linear.0.forward.output.0.pt", "PK\x03\x04 not read");
    DumpIndex idx;
    IndexReport report;
    IndexOptions o;
    o.useCache = false;
    ASSERT_TRUE(indexDump(dir.path.string(), o, idx, report, error)) << error;
    ASSERT_EQ(idx.ops.size(), 5u);
    for (std::uint32_t i = 0; i < idx.ops.size(); ++i) {
        EXPECT_EQ(idx.ops[i].rank, 2u);
        EXPECT_EQ(idx.ops[i].iteration, 1u);
        EXPECT_EQ(idx.ops[i].execPos, i);  // dump.json order is execution order
    }
    const OpRecord& lin = idx.ops[0];
    EXPECT_EQ(idx.strings.view(lin.name), "Functional.linear.0.forward");
    EXPECT_EQ(idx.strings.view(lin.type), "linear");
    EXPECT_EQ(idx.strings.view(lin.stack), "File model.py, line 7, in forward, \n y = linear x");
    EXPECT_EQ(idx.strings.view(lin.parent), "Cell.net.layer.Dense.forward.0");
    EXPECT_EQ(idx.strings.view(lin.scope),
              "Cell.net.Net.forward.0/Cell.net.layer.Dense.forward.0/Functional.linear.0.forward");
    const TensorRecord& x = idx.tensors[lin.firstTensor];
    EXPECT_TRUE(x.flags & HasData);
    EXPECT_EQ(idx.stats(x).count, 6u);
    EXPECT_EQ(idx.stats(x).max, 5);  // from the file, not the dump.json NaN
    EXPECT_EQ(idx.stats(x).nanCount, 0u);
    const TensorRecord& out = idx.tensors[lin.firstTensor + 3];
    EXPECT_EQ(out.io, Io::Output);
    // Not a real torch.save archive: reported, and dump.json's figures kept.
    EXPECT_TRUE(out.flags & ReadError);
    EXPECT_FALSE(out.flags & HasData);
    bool warned = false;
    for (const IndexWarning& w : idx.warnings)
        warned |= w.path.ends_with("output.0.pt") && w.reason.find("ZIP") != std::string::npos;
    EXPECT_TRUE(warned);
    EXPECT_EQ(idx.strings.view(idx.side(out).file),
              "step1/rank2/dump_tensor_data/Functional.linear.0.forward.output.0.pt");
    EXPECT_EQ(idx.stats(out).max, 65504);
    EXPECT_EQ(classifyComm(idx.strings.view(idx.ops[1].type), idx.strings.view(idx.ops[1].name)), CommKind::AllReduce);
    ASSERT_FALSE(report.formats.empty());
    EXPECT_NE(std::find(report.formats.begin(), report.formats.end(), "msprobe"), report.formats.end());
    ASSERT_EQ(idx.ranks.size(), 1u);
    EXPECT_EQ(idx.ranks[0].format, DumpFormat::Msprobe);
}

TEST(MsprobeSamples, EverySampleDumpJsonReads) {
    std::size_t files = 0, entries = 0;
    for (const auto& e : fs::recursive_directory_iterator(fs::path(DUMPLENS_SAMPLES_DIR) / "msprobe")) {
        const std::string name = e.path().filename().string();
        if (!e.is_regular_file() || !name.ends_with(".json") || name == "config.json" || name == "stack.json" ||
            name == "construct.json")
            continue;
        MsprobeDump d;
        std::string error;
        ASSERT_TRUE(readMsprobeDumpJson(e.path().string(), d, error)) << e.path() << ": " << error;
        // Two visualization fixtures are minimal: "data": {} and a lone entry named "api".
        for (const auto& en : d.entries)
            if (en.name != "api") {
                EXPECT_NE(en.kind, MsprobeEntryKind::Other) << en.name;
            }
        entries += d.entries.size();
        ++files;
    }
    EXPECT_GE(files, 10u);
    EXPECT_GE(entries, 20u);
    for (const char* sub : {"layer_mapping_mindspore", "layer_mapping_pytorch"}) {
        const fs::path p = fs::path(DUMPLENS_SAMPLES_DIR) / "msprobe" / sub;
        std::string st = dltest::readText(p / "stack.json"), ct = dltest::readText(p / "construct.json");
        std::unordered_map<std::string, std::string> stacks, parents;
        std::string error;
        ASSERT_TRUE(parseMsprobeStackJson(st, stacks, error)) << error;
        ASSERT_TRUE(parseMsprobeConstructJson(ct, parents, error)) << error;
        EXPECT_FALSE(stacks.empty());
        EXPECT_FALSE(parents.empty());
    }
}

TEST(MsprobeSamples, SampleFolderIndexes) {
    TempDir dir;
    const fs::path src = fs::path(DUMPLENS_SAMPLES_DIR) / "msprobe/layer_mapping_mindspore";
    for (const char* f : {"dump.json", "stack.json", "construct.json"}) {
        fs::create_directories(dir.path / "step0/rank0");
        fs::copy_file(src / f, dir.path / "step0/rank0" / f);
    }
    DumpIndex idx;
    IndexReport report;
    IndexOptions o;
    o.useCache = false;
    std::string error;
    ASSERT_TRUE(indexDump(dir.path.string(), o, idx, report, error)) << error;
    ASSERT_FALSE(idx.ops.empty());
    std::size_t withStack = 0;
    for (const auto& op : idx.ops) withStack += op.stack != 0;
    EXPECT_GT(withStack, 0u);
}
