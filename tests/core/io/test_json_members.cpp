// The JSON member splitter behind the per-entry dump.json parse: strings with escaped quotes and
// brackets, nested values, scalars, empty objects, and malformed text refused (the caller then
// parses the whole document for its error message).
#include <gtest/gtest.h>

#include <string>

#include "core/io/json_members.h"

using namespace dl;

namespace {

std::string valueText(const std::string& t, const JsonMember& m) {
    return t.substr(m.valueBegin, m.valueEnd - m.valueBegin);
}

}  // namespace

TEST(JsonMembers, SplitsTopLevelMembersOnly) {
    const std::string t = R"(  {"a": 1, "b\"}": {"x": [1, {"y": "}]\\"}]}, "c" : "s,}", "d":null ,"e":[] }  )";
    std::vector<JsonMember> m;
    std::size_t end = 0;
    ASSERT_TRUE(splitJsonObject(t, 0, m, end));
    ASSERT_EQ(m.size(), 5u);
    EXPECT_EQ(m[0].rawKey, "a");
    EXPECT_EQ(valueText(t, m[0]), "1");
    EXPECT_EQ(m[1].rawKey, "b\\\"}");
    EXPECT_EQ(valueText(t, m[1]), R"({"x": [1, {"y": "}]\\"}]})");
    EXPECT_EQ(valueText(t, m[2]), R"("s,}")");
    EXPECT_EQ(valueText(t, m[3]), "null");
    EXPECT_EQ(valueText(t, m[4]), "[]");
    EXPECT_EQ(t.find_first_not_of(' ', end), std::string::npos);
    ASSERT_TRUE(splitJsonObject(" {} ", 0, m, end));
    EXPECT_TRUE(m.empty());
}

TEST(JsonMembers, RefusesMalformedObjects) {
    std::vector<JsonMember> m;
    std::size_t end = 0;
    for (const char* bad : {"", "[]", "{", "{\"a\" 1}", "{\"a\": 1,}", "{\"a\": 1 \"b\": 2}", "{\"a\": \"unterminated}",
                            "{\"a\": {\"b\": 1}", "{a: 1}", "{\"a\":}"})
        EXPECT_FALSE(splitJsonObject(bad, 0, m, end)) << bad;
}
