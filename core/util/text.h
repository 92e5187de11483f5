#pragma once
// Small ASCII text helpers shared by the readers and the queries (dump names and CSV cells are
// ASCII; locale-dependent case mapping would make a file parse differently per machine).
#include <algorithm>
#include <cctype>
#include <cstdio>
#include <string>
#include <string_view>

namespace dl {

// `s` without the leading and trailing characters in `chars` (blanks and a stray CR by default).
// A figure in a message: six significant digits, as printf's %g (and an ostream's default).
inline std::string shortNumber(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.6g", v);
    return buf;
}

inline std::string_view trim(std::string_view s, std::string_view chars = " \t\r") {
    const auto a = s.find_first_not_of(chars);
    if (a == std::string_view::npos) return {};
    return s.substr(a, s.find_last_not_of(chars) - a + 1);
}

inline char lowerAscii(char c) { return char(std::tolower(static_cast<unsigned char>(c))); }

inline std::string lower(std::string_view s) {
    std::string out(s);
    for (char& c : out) c = lowerAscii(c);
    return out;
}

// An empty needle is in every text.
inline bool containsNoCase(std::string_view hay, std::string_view needle) {
    return needle.empty() || std::search(hay.begin(), hay.end(), needle.begin(), needle.end(), [](char a, char b) {
                                 return lowerAscii(a) == lowerAscii(b);
                             }) != hay.end();
}

}  // namespace dl
