#include "core/compare/msprobe_table_text.h"

#include <cstdio>
#include <cstdlib>

#include "core/formats/msprobe/msprobe_dump.h"

namespace dl::msprobe_text {

std::string csvCell(const std::string& s) {
    if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
    std::string q = "\"";
    for (char ch : s) q += ch == '"' ? std::string("\"\"") : std::string(1, ch);
    return q + "\"";
}

std::optional<double> pyFloat(const std::string& s) {
    if (s.empty()) return std::nullopt;
    char* end = nullptr;
    const double v = std::strtod(s.c_str(), &end);
    if (end != s.c_str() + s.size()) return std::nullopt;
    return v;
}

std::string formatValue(double v) {
    char buf[512];
    std::snprintf(buf, sizeof buf, "%.12f", v);
    return pythonFloatText(std::strtod(buf, nullptr));
}

std::string cosineText(double cos) {
    char buf[512];
    std::snprintf(buf, sizeof buf, "%.12f", cos);
    double v = std::strtod(buf, nullptr);
    if (v > 0.9999) {
        std::snprintf(buf, sizeof buf, "%.6f", v);
        v = std::strtod(buf, nullptr);
    }
    return pythonFloatText(v);
}

std::string pyRepr(std::string_view s) {
    const bool dq = s.find('\'') != std::string_view::npos && s.find('"') == std::string_view::npos;
    const char quote = dq ? '"' : '\'';
    std::string out(1, quote);
    for (const char ch : s) {
        const auto u = static_cast<unsigned char>(ch);
        if (ch == '\\')
            out += "\\\\";
        else if (ch == quote)
            out += std::string("\\") + quote;
        else if (ch == '\n')
            out += "\\n";
        else if (ch == '\r')
            out += "\\r";
        else if (ch == '\t')
            out += "\\t";
        else if (u < 0x20 || u == 0x7f) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\x%02x", u);
            out += buf;
        } else
            out += ch;  // UTF-8 bytes of printable characters stay as they are
    }
    return out + quote;
}

std::string pyList(const std::vector<std::string>& items) {
    std::string s = "[";
    for (std::size_t i = 0; i < items.size(); ++i) s += (i ? ", " : "") + pyRepr(items[i]);
    return s + "]";
}

std::string jsonList(const std::vector<std::string>& items) {
    std::string s = "[";
    for (std::size_t i = 0; i < items.size(); ++i) {
        s += i ? ", \"" : "\"";
        for (const char ch : items[i]) {
            if (ch == '"' || ch == '\\') s += '\\';
            s += ch;
        }
        s += '"';
    }
    return s + "]";
}

}  // namespace dl::msprobe_text
