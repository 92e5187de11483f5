// Short op names and their scopes on the name forms the indexer meets (formats.md, sec. 1.4-1.5):
// the 2.3+ and <=1.2 forms are derived here from a /-joined full scope the way MindSpore writes
// them (GetFileKernelName), so the split is checked against the scope it came from.
#include <gtest/gtest.h>

#include <string>

#include "core/util/op_name.h"

using namespace dl;

namespace {

// MindSpore 2.3+ / CANN file kernel name: '/', '\', '.', ' ' each become '_'.
std::string fileKernelName23(std::string s) {
    for (char& c : s)
        if (c == '/' || c == '\\' || c == '.' || c == ' ') c = '_';
    return s;
}

// MindSpore <= 1.2: '/' becomes "--".
std::string fileKernelName12(const std::string& s) {
    std::string out;
    for (char c : s) out += c == '/' ? std::string("--") : std::string(1, c);
    return out;
}

struct Scoped {
    std::string scope, op;
    std::string full() const { return scope + "/" + op; }
};

// Real full scopes: the AlexNet GPU sample, the demo's kernel-by-kernel SqrtGrad, a Megatron-like
// gradient with a scope component starting with '_' and an op whose type starts with '_'.
const Scoped kScopes[] = {
    {"Default/network-WithLossCell/_backbone-AlexNet/conv3-Conv2d", "Conv2D-op308"},
    {"Gradients/Default/network-MFTrainOneStepCell/network-NormHead/gradSqrt", "SqrtGrad-op520"},
    {"Default/network-WithLossCell/_backbone-AlexNet", "ReLUV2-op300"},
    {"Default/network-PipelineCell/_backbone", "_MirrorOperator-op12"},
    {"Default", "Add-op0"},
};

}  // namespace

TEST(OpName, SlashJoinedFullScope) {
    for (const Scoped& s : kScopes) {
        const std::string full = s.full();  // the parts are views into it
        const OpNameParts p = splitOpName(full);
        EXPECT_EQ(p.shortName, s.op) << full;
        EXPECT_EQ(p.scope, s.scope) << full;
    }
}

TEST(OpName, UnderscoreJoinedKernelByKernelNames) {
    for (const Scoped& s : kScopes) {
        const std::string name = fileKernelName23(s.full());
        const OpNameParts p = splitOpName(name);
        EXPECT_EQ(p.shortName, fileKernelName23(s.op)) << name;
        EXPECT_EQ(p.scope, fileKernelName23(s.scope)) << name;
    }
    // The form from formats.md, sec. 1.5 and the msprobe test name.
    EXPECT_EQ(splitOpName("Default_network-WithLossCell__backbone-AlexNet_conv3-Conv2d_Conv2D-op12").shortName,
              "Conv2D-op12");
    EXPECT_EQ(splitOpName("Default_Add-op0").scope, "Default");
}

TEST(OpName, DoubleDashNamesOfMindSpore12) {
    for (const Scoped& s : kScopes) {
        const std::string name = fileKernelName12(s.full());
        const OpNameParts p = splitOpName(name);
        EXPECT_EQ(p.shortName, s.op) << name;
        EXPECT_EQ(p.scope, fileKernelName12(s.scope)) << name;
    }
    // Parameters of that era keep their dotted names and have no scope.
    EXPECT_EQ(splitOpName("moments.fc3.bias").shortName, "moments.fc3.bias");
    EXPECT_TRUE(splitOpName("moments.fc3.bias").scope.empty());
}

TEST(OpName, ShortNamesOfMindSpore13To22StayWhole) {
    for (const char* n : {"Conv2D-op12", "SqrtGrad-op393", "Parameter", "conv2.bias"}) {
        EXPECT_EQ(splitOpName(n).shortName, n);
        EXPECT_TRUE(splitOpName(n).scope.empty()) << n;
    }
    // With the full scope from execution_order beside it, the scope comes from there.
    const Scoped& s = kScopes[1];
    const std::string full = s.full();
    const OpDisplayName d = opDisplayName(s.op, full);
    EXPECT_EQ(d.shortName, s.op);
    EXPECT_EQ(d.scope, s.scope);
    EXPECT_EQ(d.full, full);
}

TEST(OpName, CannNodeNamesWithoutKernelSuffixStayWhole) {
    // Their own '_' is no scope separator (no "-op{N}" kernel component to split at).
    for (const char* n : {"trans_TransData_12", "atomic_addr_clean_node", "conv1_Conv2D"}) {
        EXPECT_EQ(splitOpName(n).shortName, n);
        EXPECT_TRUE(splitOpName(n).scope.empty()) << n;
    }
}

TEST(OpName, MsprobeModuleAndApiNames) {
    const std::string path = "Module.module.module.language_model.encoder.layers.0.input_norm";
    const std::string name = path + ".RMSNorm.forward.0";
    const OpNameParts m = splitOpName(name);
    EXPECT_EQ(m.shortName, "RMSNorm.forward.0");
    EXPECT_EQ(m.scope, path);
    EXPECT_EQ(splitOpName("Cell.network_with_loss.module.layers.0.ParallelTransformerLayer.backward.0").shortName,
              "ParallelTransformerLayer.backward.0");
    // API calls are short already; their module chain (the index's scope) gives the scope.
    for (const char* n : {"Functional.linear.3.forward", "Tensor.__add__.0.forward", "Primitive.norm.RmsNorm.0.forward",
                          "Distributed.all_reduce.0.forward", "Module.Linear.forward.0"}) {
        EXPECT_EQ(splitOpName(n).shortName, n);
        EXPECT_TRUE(splitOpName(n).scope.empty()) << n;
    }
    const std::string chain = "Module.encoder.forward.0/Module.encoder.layers.0.Linear.forward.0";
    const std::string scope = chain + "/Functional.linear.3.forward";
    const OpDisplayName d = opDisplayName("Functional.linear.3.forward", scope);
    EXPECT_EQ(d.shortName, "Functional.linear.3.forward");
    EXPECT_EQ(d.scope, chain);
    EXPECT_EQ(d.full, "Functional.linear.3.forward");  // msprobe's own key, what dump.json holds
}

TEST(OpName, DegenerateNames) {
    EXPECT_TRUE(splitOpName("").shortName.empty());
    EXPECT_EQ(splitOpName("Default/").shortName, "Default/");
    EXPECT_EQ(splitOpName("_Add-op1").shortName, "_Add-op1");
    EXPECT_EQ(splitOpName("__Add-op1").shortName, "__Add-op1");
    EXPECT_EQ(splitOpName("x-opN").shortName, "x-opN");
    const OpDisplayName d = opDisplayName("Add-op3", "");
    EXPECT_EQ(d.shortName, "Add-op3");
    EXPECT_TRUE(d.scope.empty());
    EXPECT_EQ(d.full, "Add-op3");
}

// Timeline slices name an msprobe call by its API ("relu", not "Funct…"), other ops by their short name.
TEST(OpName, SliceLabels) {
    EXPECT_EQ(sliceLabel("Functional.relu.0.forward"), "relu");
    EXPECT_EQ(sliceLabel("Functional.conv2d.12.backward"), "conv2d");
    EXPECT_EQ(sliceLabel("Tensor.__add__.3.forward"), "__add__");
    EXPECT_EQ(sliceLabel("Distributed.all_reduce.0.forward"), "all_reduce");
    EXPECT_EQ(sliceLabel("RMSNorm.forward.0"), "RMSNorm");  // a module call's short name
    EXPECT_EQ(sliceLabel(splitOpName("Module.layers.0.RMSNorm.forward.0").shortName), "RMSNorm");
    EXPECT_EQ(sliceLabel("Module.head.Linear.parameters_grad.0"), "Linear");  // its weight gradients
    // Not msprobe keys: kept whole.
    EXPECT_EQ(sliceLabel("SqrtGrad-op520"), "SqrtGrad-op520");
    EXPECT_EQ(sliceLabel("Conv2D.1.forward"), "Conv2D.1.forward");  // no kind before the API
    EXPECT_EQ(sliceLabel("a.b.x.forward"), "a.b.x.forward");        // no call number
    EXPECT_EQ(sliceLabel("trans_Cast_12"), "trans_Cast_12");
    EXPECT_EQ(sliceLabel(""), "");
    EXPECT_EQ(sliceLabel(".forward"), ".forward");
}
