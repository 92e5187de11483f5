#include "core/export/json_text.h"

#include <array>
#include <cmath>
#include <cstdint>

namespace dl {

namespace {

// Length of the valid UTF-8 sequence at s[i], 0 when the bytes there are not one (overlong forms,
// surrogates and code points above U+10FFFF included, as RFC 3629 says).
std::size_t utf8Length(std::string_view s, std::size_t i) {
    const auto b = [&](std::size_t k) { return static_cast<unsigned char>(s[i + k]); };
    const auto cont = [&](std::size_t k) { return i + k < s.size() && (b(k) & 0xC0) == 0x80; };
    const unsigned c = b(0);
    if (c < 0x80) return 1;
    if (c >= 0xC2 && c <= 0xDF) return cont(1) ? 2 : 0;
    if (c >= 0xE0 && c <= 0xEF) {
        if (!cont(1) || !cont(2)) return 0;
        if (c == 0xE0 && b(1) < 0xA0) return 0;   // overlong
        if (c == 0xED && b(1) >= 0xA0) return 0;  // surrogate
        return 3;
    }
    if (c >= 0xF0 && c <= 0xF4) {
        if (!cont(1) || !cont(2) || !cont(3)) return 0;
        if (c == 0xF0 && b(1) < 0x90) return 0;   // overlong
        if (c == 0xF4 && b(1) >= 0x90) return 0;  // above U+10FFFF
        return 4;
    }
    return 0;
}

// Bytes that cannot be copied as they are: controls, the quote, the backslash and every non-ASCII
// byte (checked as UTF-8). One table load a byte: names and scopes are most of a trace.
constexpr auto kCareful = [] {
    std::array<bool, 256> t{};
    for (int c = 0; c < 256; ++c) t[std::size_t(c)] = c < 0x20 || c == '"' || c == '\\' || c >= 0x80;
    return t;
}();

}  // namespace

void appendJsonString(fmt::memory_buffer& out, std::string_view s) {
    out.push_back('"');
    std::size_t plain = 0;  // start of the run of bytes copied as they are
    const auto flush = [&](std::size_t upto) { out.append(s.data() + plain, s.data() + upto); };
    for (std::size_t i = 0; i < s.size();) {
        const auto c = static_cast<unsigned char>(s[i]);
        if (!kCareful[c]) {
            ++i;
            continue;
        }
        if (c >= 0x80) {
            if (const std::size_t n = utf8Length(s, i)) {
                i += n;
                continue;
            }
            flush(i);
            fmt::format_to(fmt::appender(out), "\\ufffd");
        } else {
            flush(i);
            if (c == '"' || c == '\\') {
                out.push_back('\\');
                out.push_back(static_cast<char>(c));
            } else {
                fmt::format_to(fmt::appender(out), "\\u{:04x}", c);
            }
        }
        plain = ++i;
    }
    flush(s.size());
    out.push_back('"');
}

void appendJsonNumber(fmt::memory_buffer& out, double v) {
    const std::string_view text = std::isnan(v) ? "\"nan\"" : v > 0 ? "\"inf\"" : "\"-inf\"";
    if (std::isfinite(v))
        fmt::format_to(fmt::appender(out), "{}", v);
    else
        out.append(text.data(), text.data() + text.size());
}

}  // namespace dl
