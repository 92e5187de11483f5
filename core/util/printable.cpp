#include "core/util/printable.h"

namespace dl {

namespace {

constexpr char kHex[] = "0123456789abcdef";

// Converts text[0, end) into out; returns the bytes consumed (all, or all but a trailing 0xC2).
std::size_t convert(std::string_view text, bool keepLayout, bool last, std::string& out) {
    std::size_t i = 0;
    for (; i < text.size(); ++i) {
        const auto c = static_cast<unsigned char>(text[i]);
        if (c < 0x20) {
            if (keepLayout && (c == '\n' || c == '\t')) {
                out += char(c);
            } else {
                out += "\\x";
                out += kHex[c >> 4];
                out += kHex[c & 15];
            }
        } else if (c == 0x7f) {
            out += "\\u007f";
        } else if (c == 0xc2) {  // U+0080..U+009F are C2 80..C2 9F in UTF-8
            if (i + 1 == text.size() && !last) return i;
            const auto next = i + 1 < text.size() ? static_cast<unsigned char>(text[i + 1]) : 0;
            if (next >= 0x80 && next <= 0x9f) {
                out += "\\u00";
                out += kHex[next >> 4];
                out += kHex[next & 15];
                ++i;
            } else {
                out += char(c);
            }
        } else {
            out += char(c);
        }
    }
    return i;
}

}  // namespace

std::string printable(std::string_view text, bool keepLayout) {
    std::string out;
    out.reserve(text.size());
    convert(text, keepLayout, true, out);
    return out;
}

std::size_t appendPrintable(std::string_view text, bool last, std::string& out) {
    return convert(text, true, last, out);
}

}  // namespace dl
