#include "core/formats/mindspore/execution_order.h"
#include "core/formats/mindspore/mapping_csv.h"

#include <gtest/gtest.h>

using namespace dl;

TEST(ExecutionOrder, SkipsHeaderKeepsOrder) {
    std::vector<std::string> names;
    std::string err;
    ASSERT_TRUE(
        parseExecutionOrderCsv("NodeExecutionOrder-FullNameWithScope\r\n"
                               "Default/network-WithLossCell/_backbone-AlexNet/conv1-Conv2d/Conv2D-op12\r\n"
                               "\n"
                               "Gradients/Default/network-WithLossCell/_backbone-Net/gradSqrt/SqrtGrad-op42\n",
                               names, err));
    ASSERT_EQ(names.size(), 2u);
    EXPECT_EQ(names[0], "Default/network-WithLossCell/_backbone-AlexNet/conv1-Conv2d/Conv2D-op12");
    EXPECT_EQ(names[1], "Gradients/Default/network-WithLossCell/_backbone-Net/gradSqrt/SqrtGrad-op42");
    // Without a header the first line is a name.
    ASSERT_TRUE(parseExecutionOrderCsv("Default/Add-op1\nDefault/Mul-op2", names, err));
    EXPECT_EQ(names, (std::vector<std::string>{"Default/Add-op1", "Default/Mul-op2"}));
    EXPECT_FALSE(parseExecutionOrderCsv("\n\n", names, err));
    EXPECT_FALSE(err.empty());
}

TEST(ExecutionOrder, GlobalIterations) {
    std::vector<std::uint32_t> its, bad;
    std::string err;
    ASSERT_TRUE(parseGlobalExecutionOrderCsv("0\n1\r\n2\nx\n\n5\n", its, bad, err));
    EXPECT_EQ(its, (std::vector<std::uint32_t>{0, 1, 2, 5}));
    EXPECT_EQ(bad, (std::vector<std::uint32_t>{4}));
    EXPECT_TRUE(parseGlobalExecutionOrderCsv("", its, bad, err));
    EXPECT_TRUE(its.empty());
    EXPECT_FALSE(parseGlobalExecutionOrderCsv("abc\n-1\n99999999999\n", its, bad, err));
    EXPECT_EQ(bad.size(), 3u);
}

TEST(ExecutionOrder, ScopeToFileNameForms) {
    const std::string full = "Default/network-WithLossCell/_backbone-AlexNet/conv3-Conv2d/Conv2D-op12";
    EXPECT_EQ(scopeToFileName(full, ScopeNameForm::ShortMs22), "Conv2D-op12");
    EXPECT_EQ(scopeToFileName(full, ScopeNameForm::ScopedMs23),
              "Default_network-WithLossCell__backbone-AlexNet_conv3-Conv2d_Conv2D-op12");
    EXPECT_EQ(scopeToFileName(full, ScopeNameForm::BinMs12),
              "Default--network-WithLossCell--_backbone-AlexNet--conv3-Conv2d--Conv2D-op12");
    EXPECT_EQ(scopeToFileName("Default/a.b\\c d/Add-op1", ScopeNameForm::ScopedMs23), "Default_a_b_c_d_Add-op1");
    EXPECT_EQ(scopeToFileName("Add-op1", ScopeNameForm::ShortMs22), "Add-op1");
    EXPECT_EQ(scopeToFileName("", ScopeNameForm::ShortMs22), "");
}

TEST(ExecutionOrder, GraphIdFromFileName) {
    bool global = true;
    EXPECT_EQ(executionOrderGraphId("ms_execution_order_graph_3.csv", &global), 3);
    EXPECT_FALSE(global);
    EXPECT_EQ(executionOrderGraphId("ms_global_execution_order_graph_12.csv", &global), 12);
    EXPECT_TRUE(global);
    EXPECT_EQ(executionOrderGraphId("ms_execution_order_graph_.csv"), -1);
    EXPECT_EQ(executionOrderGraphId("ms_execution_order_graph_3.txt"), -1);
    EXPECT_EQ(executionOrderGraphId("ms_execution_order_graph_3x.csv"), -1);
    EXPECT_EQ(executionOrderGraphId("statistic.csv"), -1);
}

TEST(MappingCsv, FirstRowIsDataAndLookupForms) {
    MappingTable t;
    std::vector<std::uint32_t> bad;
    t.parse(
        "12345,Add.Default_very_long_name-op1.0.0.1.output.0.DefaultFormat.npy\n"
        "67890.npy,Mul.Default_x,with,commas-op2.0.0.1.output.0.ND.npy\r\n"
        "\n"
        "nocomma\n"
        ",empty\n"
        "1111,\n",
        bad);
    EXPECT_EQ(t.size(), 2u);
    EXPECT_EQ(bad, (std::vector<std::uint32_t>{4, 5, 6}));
    ASSERT_NE(t.lookup("12345.npy"), nullptr);
    EXPECT_EQ(*t.lookup("12345.npy"), "Add.Default_very_long_name-op1.0.0.1.output.0.DefaultFormat.npy");
    ASSERT_NE(t.lookup("12345"), nullptr);
    ASSERT_NE(t.lookup("67890.npy"), nullptr);
    EXPECT_EQ(*t.lookup("67890.npy"), "Mul.Default_x,with,commas-op2.0.0.1.output.0.ND.npy");
    EXPECT_EQ(t.lookup("99999.npy"), nullptr);
}
