// The map between two runs' timelines: monotone through the matched ops.
#include <gtest/gtest.h>

#include "core/compare/time_map.h"

using namespace dl;

TEST(TimeMap, MonotoneThroughMatchedPoints) {
    TimeMap m;
    // B runs twice as slow; one contradicting pair (an op matched across the order) is dropped.
    m.build({{10, 20}, {30, 60}, {20, 40}, {25, 5}, {40, 80}}, 0, 50, 0, 100);
    EXPECT_DOUBLE_EQ(m.toB(10), 20);
    EXPECT_DOUBLE_EQ(m.toB(15), 30);
    EXPECT_DOUBLE_EQ(m.toB(25), 50);  // not pulled to 5
    EXPECT_DOUBLE_EQ(m.toA(70), 35);
    EXPECT_DOUBLE_EQ(m.toB(0), 0);
    EXPECT_DOUBLE_EQ(m.toB(50), 100);
    for (double t = 0; t <= 50; t += 0.5) EXPECT_LE(m.toB(t), m.toB(t + 0.5));
    TimeMap empty;
    empty.build({}, 0, 10, 100, 300);
    EXPECT_DOUBLE_EQ(empty.toB(5), 200);
    EXPECT_DOUBLE_EQ(empty.toA(300), 10);
}
