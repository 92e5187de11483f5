// jsonUnsigned: the one parser of unsigned integers that MindSpore's .dump_metadata (decimal
// strings) and CANN's Opdebug records (hex strings) share. Expected values are written out by hand.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>

#include "core/io/json_number.h"

namespace {

using nlohmann::json;

std::uint64_t parsed(const json& v, bool hex, bool& ok) {
    std::uint64_t out = 12345;
    ok = dl::jsonUnsigned(v, out, hex);
    return out;
}

TEST(JsonNumber, NumbersAndDecimalStrings) {
    bool ok = false;
    EXPECT_EQ(parsed(json(7), false, ok), 7u);
    EXPECT_TRUE(ok);
    EXPECT_EQ(parsed(json(std::numeric_limits<std::uint64_t>::max()), false, ok), 18446744073709551615ull);
    EXPECT_TRUE(ok);
    EXPECT_EQ(parsed(json("3"), false, ok), 3u);
    EXPECT_TRUE(ok);
    EXPECT_EQ(parsed(json("18446744073709551615"), false, ok), 18446744073709551615ull);
    EXPECT_TRUE(ok);
}

TEST(JsonNumber, HexOnlyWhereAllowed) {
    bool ok = false;
    EXPECT_EQ(parsed(json("0x1F"), true, ok), 31u);
    EXPECT_TRUE(ok);
    EXPECT_EQ(parsed(json("0Xff"), true, ok), 255u);
    EXPECT_TRUE(ok);
    EXPECT_EQ(parsed(json("10"), true, ok), 10u);  // decimal stays decimal
    EXPECT_TRUE(ok);
    parsed(json("0x1F"), false, ok);
    EXPECT_FALSE(ok);
}

TEST(JsonNumber, RefusesWhatIsNotAnUnsignedInteger) {
    bool ok = true;
    for (const json& v : {json(-1), json(1.5), json(""), json("0x"), json("12a"), json("-3"), json(" 3"),
                          json("18446744073709551616"), json(nullptr), json(true), json::array({1})}) {
        parsed(v, true, ok);
        EXPECT_FALSE(ok) << v.dump();
    }
}

}  // namespace
