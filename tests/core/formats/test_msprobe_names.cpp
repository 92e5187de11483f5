// msprobe tensor names exactly as msprobe writes and compares them, and msprobe rank folders.
// The expected names follow msprobe's own rules (msprobe core/compare/utils.py):
// - read_op: input_args, input_kwargs and input map to "{entry}.input", output to
//   "{entry}.output", parameters to "{entry}.parameters"; parameters_grad entries are parsed from
//   the entry name itself;
// - op_item_parse: each list element appends its index (a null still takes its index and gets
//   a row), each dict key appends the key; below a parameters_grad name a list adds no index;
// - gen_op_item: a tensor with a data_name is named after the file (data_name without extension);
// and the dump writer (data_processor/base.py get_save_file_path, analyze_params): files are
// "{entry}.{category}.{index path}.pt" with category input / kwargs / output / parameters, and
// parameter gradients "{module}.parameters_grad.{param}.pt".
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <string>

#include "core/analysis/analysis_result.h"
#include "core/analysis/tensor_anomaly.h"
#include "core/compare/run_comparison.h"
#include "core/formats/msprobe/msprobe_dump.h"
#include "core/index/dump_indexer.h"
#include "tests/core/temp_dir.h"

namespace fs = std::filesystem;
using namespace dl;

namespace {

// A PyTorch statistics dump in the shape of msprobe's quick start (ResNet-50, level mix), one
// entry per naming case.
std::string tensorJson(double max, const std::string& dataName = "") {
    std::string s = R"({"type": "torch.Tensor", "dtype": "torch.float32", "shape": [2, 2], "Max": )" +
        std::to_string(max) + R"(, "Min": 0.0, "Mean": 0.5, "Norm": 1.0, "requires_grad": true)";
    if (!dataName.empty()) s += R"(, "data_name": ")" + dataName + "\"";
    return s + "}";
}

std::string dumpJson(double scale = 1) {
    auto t = [&](double v, const std::string& dn = "") { return tensorJson(v * scale, dn); };
    return std::string(
               R"({"task": "tensor", "level": "mix", "framework": "pytorch", "dump_data_dir": null, "data": {)") +
        // Module forward with its parameters; the weight was saved.
        R"("Module.conv1.Conv2d.forward.0": {"input_args": [)" + t(1) + R"(], "input_kwargs": {}, "output": [)" + t(2) +
        R"(], "parameters": {"weight": )" + t(3, "Module.conv1.Conv2d.forward.0.parameters.weight.pt") +
        R"(, "bias": )" + t(4) + "}}," +
        // Parameter gradients of the same module (data_collector: "{module}.parameters_grad").
        R"("Module.conv1.Conv2d.parameters_grad": {"weight": [)" +
        t(5, "Module.conv1.Conv2d.parameters_grad.weight.pt") + R"(], "bias": [)" + t(6) + "]}," +
        // An output list with nulls around its one tensor.
        R"("Functional.max_pool2d.0.forward": {"input_args": [)" + t(7) +
        R"(, {"type": "int", "value": 3}], "input_kwargs": {}, "output": [null, )" + t(8) + ", null]}," +
        // Keyword-argument tensors among non-tensor keywords; one saved (msprobe's "kwargs" file).
        R"("Functional.scaled_dot_product_attention.0.forward": {"input_args": [)" + t(9) + "," + t(10) + "," + t(11) +
        R"(], "input_kwargs": {"attn_mask": )" + t(12) +
        R"(, "dropout_p": {"type": "float", "value": 0.0}, "scale": )" +
        t(13, "Functional.scaled_dot_product_attention.0.forward.kwargs.scale.pt") + R"(}, "output": [)" + t(14) +
        "]}," +
        // layer_norm(x, normalized_shape, weight, bias): the shape tuple takes index 1.
        R"("Functional.layer_norm.0.forward": {"input_args": [)" + t(15) + R"(, [{"type": "int", "value": 2}], )" +
        t(16) + "," + t(17) + R"(], "input_kwargs": {"eps": {"type": "float", "value": 1e-05}}, "output": [)" + t(18) +
        "]}," +
        // Nested tuples: cat of a tuple with a null, and an LSTM output (out, (h, c)).
        R"("Torch.cat.0.forward": {"input_args": [[)" + t(19) + "," + t(20) + ", null," + t(21) +
        R"(]], "input_kwargs": {"dim": {"type": "int", "value": 0}}, "output": [)" + t(22) + "]}," +
        R"("Module.lstm.LSTM.forward.0": {"input_args": [)" + t(23) + R"(], "input_kwargs": {}, "output": [)" + t(24) +
        ", [" + t(25) + "," + t(26) + "]]}," +
        // Backward: grads w.r.t. outputs in, grads w.r.t. inputs out (no grad for the bias: null).
        R"("Functional.linear.0.backward": {"input": [)" + t(27) + R"(], "output": [null, )" + t(28) + "," + t(29) +
        "]}" + "}}";
}

// entry -> its tensors' labels, in the index's order (inputs, then outputs).
std::map<std::string, std::vector<std::string>> labelsByEntry(const DumpIndex& idx) {
    std::map<std::string, std::vector<std::string>> out;
    for (const OpRecord& o : idx.ops)
        for (std::uint32_t t = o.firstTensor; t < o.firstTensor + o.tensorCount; ++t)
            out[idx.strings.str(o.name)].push_back(tensorLabel(idx, idx.tensors[t]));
    return out;
}

const std::map<std::string, std::vector<std::string>> kExpected = {
    {"Module.conv1.Conv2d.forward.0", {"input.0", "parameters.weight", "parameters.bias", "output.0"}},
    {"Module.conv1.Conv2d.parameters_grad", {"weight", "bias"}},
    {"Functional.max_pool2d.0.forward", {"input.0", "output.1"}},
    {"Functional.scaled_dot_product_attention.0.forward",
     {"input.0", "input.1", "input.2", "input.attn_mask", "kwargs.scale", "output.0"}},
    {"Functional.layer_norm.0.forward", {"input.0", "input.2", "input.3", "output.0"}},
    {"Torch.cat.0.forward", {"input.0.0", "input.0.1", "input.0.3", "output.0"}},
    {"Module.lstm.LSTM.forward.0", {"input.0", "output.0", "output.1.0", "output.1.1"}},
    {"Functional.linear.0.backward", {"input.0", "output.1", "output.2"}},
};

DumpIndex indexOf(const fs::path& root, const std::string& cacheDir = "") {
    DumpIndex idx;
    IndexReport report;
    IndexOptions o;
    o.useCache = !cacheDir.empty();
    o.cacheDir = cacheDir;
    o.threads = 2;
    std::string error;
    EXPECT_TRUE(indexDump(root.string(), o, idx, report, error)) << error;
    return idx;
}

}  // namespace

TEST(MsprobeNames, ParserLabelsFollowMsprobesCompare) {
    std::string text = dumpJson();
    MsprobeDump d;
    std::string error;
    ASSERT_TRUE(parseMsprobeDumpJson(text, d, error)) << error;
    ASSERT_EQ(d.entries.size(), kExpected.size());
    for (const MsprobeEntry& e : d.entries) {
        std::vector<std::string> in, out;
        for (const MsprobeTensor& t : e.tensors) (t.io == Io::Input ? in : out).push_back(t.label);
        in.insert(in.end(), out.begin(), out.end());
        EXPECT_EQ(in, kExpected.at(e.name)) << e.name;
    }
    const MsprobeEntry& grad = d.entries[1];
    EXPECT_EQ(grad.kind, MsprobeEntryKind::ParamGrad);
    EXPECT_EQ(grad.op, "Conv2d");
    EXPECT_EQ(grad.modulePath, "conv1");
    EXPECT_TRUE(grad.backward);
    MsprobeEntry dbg;
    parseMsprobeEntryName("x_tensor.0.debug", dbg);
    EXPECT_EQ(dbg.kind, MsprobeEntryKind::Debug);
    EXPECT_EQ(dbg.op, "x_tensor");
    EXPECT_EQ(dbg.callIndex, 0);
}

TEST(MsprobeNames, IndexKeepsTheNamesAndTheirFilesThroughTheCache) {
    dltest::TempDir dir, cache;
    const fs::path rank = dir.path / "step0/rank0";
    dltest::writeFile(rank / "dump.json", dumpJson());
    // Saved tensors: the file each name maps to (contents are not read for these checks).
    for (const char* f :
         {"Module.conv1.Conv2d.forward.0.parameters.weight.pt", "Module.conv1.Conv2d.parameters_grad.weight.pt",
          "Functional.scaled_dot_product_attention.0.forward.kwargs.scale.pt"})
        dltest::writeFile(rank / "dump_tensor_data" / f, "PK\x03\x04 not a real archive");
    for (int pass = 0; pass < 2; ++pass) {  // built, then reopened from the cache
        const DumpIndex idx = indexOf(dir.path, cache.path.string());
        EXPECT_EQ(labelsByEntry(idx), kExpected) << "pass " << pass;
        // Every saved tensor's file is "{entry}.{label}.pt".
        std::size_t saved = 0;
        for (const TensorRecord& t : idx.tensors) {
            if (idx.side(t).file == 0) continue;
            ++saved;
            const std::string name = idx.strings.str(idx.ops[t.op].name) + "." + tensorLabel(idx, t) + ".pt";
            EXPECT_EQ(fs::path(idx.strings.str(idx.side(t).file)).filename().string(), name);
        }
        EXPECT_EQ(saved, 3u);
        // Ops without names keep the positional form.
        TensorRecord plain;
        plain.op = kNoIndex;
        plain.io = Io::Output;
        plain.slot = 3;
        EXPECT_EQ(tensorLabel(idx, plain), "output.3");
    }
}

TEST(MsprobeNames, CompareMatchesByMsprobeNames) {
    // Run B's max_pool2d output list holds its tensor first: by slot it would meet A's "output.1",
    // by name it does not, and B's "output.1" does.
    dltest::TempDir a, b;
    dltest::writeFile(a.path / "step0/rank0/dump.json", dumpJson());
    std::string other = dumpJson(2);
    const std::string from = R"("output": [null, )";
    const auto at = other.find(from, other.find("Functional.max_pool2d.0.forward"));
    ASSERT_NE(at, std::string::npos);
    other.replace(at, from.size(), R"("output": [)" + tensorJson(100) + ", ");
    dltest::writeFile(b.path / "step0/rank0/dump.json", other);
    const DumpIndex ia = indexOf(a.path), ib = indexOf(b.path);
    const RunComparison c = compareRuns(ia, ib, CompareOptions());
    std::size_t pooled = 0, all = 0;
    for (const TensorPair& p : c.alignment.tensors) {
        const TensorRecord &ta = ia.tensors[p.a], &tb = ib.tensors[p.b];
        EXPECT_EQ(ia.strings.str(ia.ops[ta.op].name), ib.strings.str(ib.ops[tb.op].name));
        EXPECT_EQ(tensorLabel(ia, ta), tensorLabel(ib, tb));
        // Paired by name, the figures are A's and twice A's (B was written with scale 2).
        EXPECT_DOUBLE_EQ(ib.stats(tb).max, 2 * ia.stats(ta).max) << tensorLabel(ia, ta);
        if (ia.strings.str(ia.ops[ta.op].name) == "Functional.max_pool2d.0.forward" && ta.io == Io::Output) ++pooled;
        ++all;
    }
    EXPECT_EQ(pooled, 1u);
    std::size_t tensors = 0;
    for (const auto& [entry, names] : kExpected) tensors += names.size();
    EXPECT_EQ(all, tensors);
    EXPECT_EQ(c.alignment.onlyTensorsA, 0u);
    EXPECT_EQ(c.alignment.onlyTensorsB, 1u);  // B's extra output.0
}

TEST(MsprobeNames, StepRankTreeListsEachRankOnce) {
    dltest::TempDir dir;
    for (int step = 0; step < 2; ++step)
        for (int rank = 0; rank < 2; ++rank)
            dltest::writeFile(
                dir.path / ("step" + std::to_string(step)) / ("rank" + std::to_string(rank)) / "dump.json", dumpJson());
    const DumpIndex idx = indexOf(dir.path);
    std::vector<std::uint32_t> ranks;
    for (const RankInfo& r : idx.ranks) {
        ranks.push_back(r.rank);
        EXPECT_EQ(r.format, DumpFormat::Msprobe);
        EXPECT_EQ(r.folder, "rank" + std::to_string(r.rank));
    }
    EXPECT_EQ(ranks, (std::vector<std::uint32_t>{0, 1}));
    std::set<std::pair<std::uint32_t, std::uint32_t>> seen;  // (rank, iteration)
    for (const OpRecord& o : idx.ops) seen.insert({o.rank, o.iteration});
    EXPECT_EQ(seen, (std::set<std::pair<std::uint32_t, std::uint32_t>>{{0, 0}, {0, 1}, {1, 0}, {1, 1}}));
}

TEST(MsprobeNames, ProcFoldersAreProcessesOfUnknownRank) {
    dltest::TempDir one, two;
    dltest::writeFile(one.path / "step0/proc1234/dump.json", dumpJson());
    dltest::writeFile(one.path / "step1/proc1234/dump.json", dumpJson());
    const DumpIndex a = indexOf(one.path);
    ASSERT_EQ(a.ranks.size(), 1u);
    EXPECT_EQ(a.ranks[0].folder, "proc1234");
    EXPECT_EQ(a.ranks[0].format, DumpFormat::Msprobe);
    EXPECT_EQ(a.iterations(), (std::vector<std::uint32_t>{0, 1}));
    // Two processes: two stand-in ranks, each named by its folder; their ops stay apart.
    dltest::writeFile(two.path / "step0/proc77/dump.json", dumpJson());
    dltest::writeFile(two.path / "step0/proc1234/dump.json", dumpJson(2));
    const DumpIndex b = indexOf(two.path);
    ASSERT_EQ(b.ranks.size(), 2u);
    std::map<std::string, std::uint32_t> rankOf;
    for (const RankInfo& r : b.ranks) rankOf[r.folder] = r.rank;
    ASSERT_TRUE(rankOf.count("proc77") && rankOf.count("proc1234"));
    EXPECT_NE(rankOf["proc77"], rankOf["proc1234"]);
    // proc1234 was written with twice proc77's figures: each op's tensors tell which process it is.
    std::map<std::string, std::map<std::uint32_t, double>> firstMax;  // entry -> rank -> its first tensor's max
    for (const OpRecord& o : b.ops)
        if (o.tensorCount) firstMax[b.strings.str(o.name)][o.rank] = b.stats(b.tensors[o.firstTensor]).max;
    EXPECT_EQ(firstMax.size(), kExpected.size());
    for (auto& [name, byRank] : firstMax) {
        ASSERT_EQ(byRank.size(), 2u) << name;
        EXPECT_DOUBLE_EQ(byRank[rankOf["proc1234"]], 2 * byRank[rankOf["proc77"]]) << name;
    }
}
