#pragma once
// Splits a JSON object into its members by a string-aware bracket scan, without parsing the
// values. msprobe's dump.json is one object of ~10^5 entries: parsing each entry on its own with a
// small reused parser avoids building a DOM of the whole file (about ten times its size in fresh
// memory, whose page faults cost more than the parse itself) and lets entries parse in parallel.
#include <cstddef>
#include <string_view>
#include <vector>

namespace dl {

struct JsonMember {
    std::string_view rawKey;                   // between the quotes, escapes as written
    std::size_t valueBegin = 0, valueEnd = 0;  // [begin, end) of the value's text
};

// `pos` is at (or whitespace before) the object's '{'. On success `end` is just past its '}'.
// False when the object is not well formed at this level (the values themselves are checked by
// whoever parses them).
bool splitJsonObject(std::string_view text, std::size_t pos, std::vector<JsonMember>& out, std::size_t& end);

}  // namespace dl
