// Source lines from MindSpore's text graph IR.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <unistd.h>

#include "core/formats/mindspore/graph_ir.h"

using namespace dl;

namespace {

class GraphIr : public ::testing::Test {
protected:
    void SetUp() override {
        m_dir = ::testing::TempDir() + "/dl_graph_ir_" + std::to_string(::getpid());
        std::filesystem::remove_all(m_dir);
        std::filesystem::create_directories(m_dir);
    }
    void TearDown() override { std::filesystem::remove_all(m_dir); }
    void write(const std::string& name, const std::string& text) { std::ofstream(m_dir + "/" + name) << text; }
    std::string m_dir;
};

const char* kIr =
    "# IR entry: @kernel_graph_0\n"
    "  %41(CNode_40) = SqrtGrad(%39, %40) {instance name: sqrt_grad}\n"
    "      : (<Tensor[Float16], (125696)>, <Tensor[Float16], (125696)>) -> (<Tensor[Float16], (125696)>)\n"
    "      : full_name_with_scope: (Gradients/Default/network/head-NormHead/gradSqrt/SqrtGrad-op4)\n"
    "      # In file /models/baichuan.py:88/        norm = ops.sqrt(x)/\n"
    "  %42(CNode_41) = SqrtGrad(%39, %40) {instance name: sqrt_grad}\n"
    "      : full_name_with_scope: (Gradients/Default/network/head-NormHead/gradSqrt/SqrtGrad-op42)\n"
    "      # In file /models/baichuan.py:97/        w = self.weight / norm/\n"
    "      # In file /usr/lib/mindspore/nn/cell.py:700/        return self.construct(*args)/\n"
    "  %43(CNode_42) = Mul(%42, %1)\n"
    "      # In file /models/other.py:1/ not this/\n";

TEST_F(GraphIr, FindsTheTraceOfTheExactScope) {
    write("ms_output_trace_code_graph_0.ir", kIr);
    const auto lines = findSourceLines(m_dir, "Gradients/Default/network/head-NormHead/gradSqrt/SqrtGrad-op42");
    ASSERT_EQ(lines.size(), 2u);
    EXPECT_EQ(lines[0], "In file /models/baichuan.py:97/        w = self.weight / norm/");
    EXPECT_EQ(lines[1].rfind("In file /usr/lib/mindspore/nn/cell.py:700", 0), 0u);
    EXPECT_EQ(findSourceLines(m_dir, "Gradients/Default/network/head-NormHead/gradSqrt/SqrtGrad-op4").size(), 1u);
    EXPECT_EQ(findSourceLines(m_dir, "Gradients/Default/network/head-NormHead/gradSqrt/SqrtGrad-op42", 1).size(), 1u);
}

TEST_F(GraphIr, OlderScopeCommentSpelling) {
    write("ms_output_trace_code_graph_3.ir",
          "%1([CNode]2) = Conv2D(%para1, %para2)\n    # scope: (Default/network/conv1-Conv2d/Conv2D-op107)\n"
          "    # In file /lenet.py(30)/        x = self.conv1(x)/\n");
    const auto lines = findSourceLines(m_dir, "Default/network/conv1-Conv2d/Conv2D-op107");
    ASSERT_EQ(lines.size(), 1u);
    EXPECT_EQ(lines[0], "In file /lenet.py(30)/        x = self.conv1(x)/");
}

TEST_F(GraphIr, AbsenceIsEmptyNotAnError) {
    EXPECT_TRUE(findSourceLines(m_dir + "/missing", "X-op1").empty());
    EXPECT_TRUE(findSourceLines(m_dir, "").empty());
    write("ms_output_trace_code_graph_0.pb", kIr);  // only .ir files are text IR
    write("other.ir", kIr);
    EXPECT_TRUE(findSourceLines(m_dir, "Gradients/Default/network/head-NormHead/gradSqrt/SqrtGrad-op42").empty());
    write("ms_output_trace_code_graph_1.ir", "  : full_name_with_scope: (A/B-op1)\n  %2 = Add(%1)\n");
    EXPECT_TRUE(findSourceLines(m_dir, "A/B-op1").empty()) << "a node without trace lines has no source";
}

}  // namespace
