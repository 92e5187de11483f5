#include "core/io/json_members.h"

#include <cstring>

namespace dl {

namespace {

constexpr std::size_t npos = std::string_view::npos;

bool isSpace(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

std::size_t skipSpace(std::string_view t, std::size_t p) {
    while (p < t.size() && isSpace(t[p])) ++p;
    return p;
}

// p at an opening quote; returns the index just past the closing quote.
std::size_t skipString(std::string_view t, std::size_t p) {
    ++p;
    while (p < t.size()) {
        const void* q = std::memchr(t.data() + p, '"', t.size() - p);
        if (!q) return npos;
        const std::size_t at = std::size_t(static_cast<const char*>(q) - t.data());
        std::size_t slashes = 0;
        while (at - slashes > p && t[at - slashes - 1] == '\\') ++slashes;
        if (slashes % 2 == 0) return at + 1;
        p = at + 1;
    }
    return npos;
}

// p at the first character of a value; returns the index just past it.
std::size_t skipValue(std::string_view t, std::size_t p) {
    if (p >= t.size()) return npos;
    const char c = t[p];
    if (c == '"') return skipString(t, p);
    if (c != '{' && c != '[') {  // number, true, false, null: up to a delimiter
        while (p < t.size() && t[p] != ',' && t[p] != '}' && t[p] != ']' && !isSpace(t[p])) ++p;
        return p;
    }
    std::size_t depth = 0;
    while (p < t.size()) {
        const char x = t[p];
        if (x == '"') {
            p = skipString(t, p);
            if (p == npos) return npos;
            continue;
        }
        if (x == '{' || x == '[')
            ++depth;
        else if (x == '}' || x == ']') {
            if (--depth == 0) return p + 1;
        }
        ++p;
    }
    return npos;
}

}  // namespace

bool splitJsonObject(std::string_view t, std::size_t pos, std::vector<JsonMember>& out, std::size_t& end) {
    out.clear();
    std::size_t p = skipSpace(t, pos);
    if (p >= t.size() || t[p] != '{') return false;
    p = skipSpace(t, p + 1);
    if (p < t.size() && t[p] == '}') {
        end = p + 1;
        return true;
    }
    while (p < t.size()) {
        if (t[p] != '"') return false;
        const std::size_t keyEnd = skipString(t, p);
        if (keyEnd == npos) return false;
        JsonMember m;
        m.rawKey = t.substr(p + 1, keyEnd - p - 2);
        p = skipSpace(t, keyEnd);
        if (p >= t.size() || t[p] != ':') return false;
        m.valueBegin = skipSpace(t, p + 1);
        m.valueEnd = skipValue(t, m.valueBegin);
        if (m.valueEnd == npos || m.valueEnd == m.valueBegin) return false;
        out.push_back(m);
        p = skipSpace(t, m.valueEnd);
        if (p >= t.size()) return false;
        if (t[p] == '}') {
            end = p + 1;
            return true;
        }
        if (t[p] != ',') return false;
        p = skipSpace(t, p + 1);
    }
    return false;
}

}  // namespace dl
