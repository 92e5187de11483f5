#include "core/formats/msprobe/msprobe_value_text.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>

namespace dl {

namespace msprobe {

using simdjson::dom::element;
using simdjson::dom::element_type;

// A number as msprobe writes it: JSON number, bool (bool tensors), or a rewritten NaN/Inf token.
bool numberOf(element v, double& out) {
    switch (v.type()) {
        case element_type::DOUBLE:
            out = double(v.get_double().value_unsafe());
            return true;
        case element_type::INT64:
            out = double(v.get_int64().value_unsafe());
            return true;
        case element_type::UINT64:
            out = double(v.get_uint64().value_unsafe());
            return true;
        case element_type::BOOL:
            out = v.get_bool().value_unsafe() ? 1 : 0;
            return true;
        case element_type::STRING: {
            const std::string_view s = v.get_string().value_unsafe();
            if (s == "N" || s == "NaN" || s == "nan")
                out = std::numeric_limits<double>::quiet_NaN();
            else if (s == "Infnty" || s == "Infinity" || s == "inf")
                out = HUGE_VAL;
            else if (s == "-Infnty" || s == "-Infinity" || s == "-inf")
                out = -HUGE_VAL;
            else
                return false;
            return true;
        }
        default:
            return false;
    }
}

namespace {

// Python's str() of a JSON value (repr() inside lists and dicts, like Python prints them).
void pythonText(element v, std::string& out, bool nested) {
    switch (v.type()) {
        case element_type::INT64:
            out += std::to_string(v.get_int64().value_unsafe());
            return;
        case element_type::UINT64:
            out += std::to_string(v.get_uint64().value_unsafe());
            return;
        case element_type::DOUBLE:
            out += pythonFloatText(v.get_double().value_unsafe());
            return;
        case element_type::BOOL:
            out += v.get_bool().value_unsafe() ? "True" : "False";
            return;
        case element_type::NULL_VALUE:
            out += "None";
            return;
        case element_type::STRING: {
            double d = 0;
            if (numberOf(v, d)) {
                out += pythonFloatText(d);
                return;
            }
            const std::string_view s = v.get_string().value_unsafe();
            if (nested) out += '\'';
            out += s;
            if (nested) out += '\'';
            return;
        }
        case element_type::ARRAY: {
            out += '[';
            bool first = true;
            const simdjson::dom::array arr = v.get_array().value_unsafe();  // named: the result temporary dies
            for (element x : arr) {
                if (!first) out += ", ";
                first = false;
                pythonText(x, out, true);
            }
            out += ']';
            return;
        }
        case element_type::OBJECT: {
            out += '{';
            bool first = true;
            const simdjson::dom::object obj = v.get_object().value_unsafe();
            for (auto [k, x] : obj) {
                if (!first) out += ", ";
                first = false;
                out += '\'';
                out.append(k);
                out += "': ";
                pythonText(x, out, true);
            }
            out += '}';
            return;
        }
    }
}

}  // namespace

std::string pythonText(element v) {
    std::string s;
    pythonText(v, s, false);
    return s;
}

const char* pythonTypeName(element v) {
    double d = 0;
    switch (v.type()) {
        case element_type::INT64:
        case element_type::UINT64:
            return "int";
        case element_type::DOUBLE:
            return "float";
        case element_type::BOOL:
            return "bool";
        case element_type::NULL_VALUE:
            return "NoneType";
        case element_type::STRING:
            return numberOf(v, d) ? "float" : "str";
        case element_type::ARRAY:
            return "list";
        case element_type::OBJECT:
            return "dict";
    }
    return "NoneType";
}

MsprobeValue valueOf(element v) {
    MsprobeValue out;
    double d = 0;
    switch (v.type()) {
        case element_type::INT64:
        case element_type::UINT64:
            out.kind = MsprobeValue::Kind::Int;
            numberOf(v, out.number);
            break;
        case element_type::DOUBLE:
            out.kind = MsprobeValue::Kind::Float;
            numberOf(v, out.number);
            break;
        case element_type::BOOL:
            out.kind = MsprobeValue::Kind::Bool;
            break;
        case element_type::NULL_VALUE:
            out.kind = MsprobeValue::Kind::None;
            break;
        case element_type::STRING:
            if (numberOf(v, d)) {
                out.kind = MsprobeValue::Kind::Float;
                out.number = d;
            } else {
                out.kind = MsprobeValue::Kind::Text;
            }
            break;
        default:
            out.kind = MsprobeValue::Kind::Text;
            break;
    }
    out.text = pythonText(v);
    return out;
}

MsprobeValue noneValue() {
    MsprobeValue v;
    v.text = "None";
    return v;
}

MsprobeValue textValue(std::string s) {
    MsprobeValue v;
    v.kind = MsprobeValue::Kind::Text;
    v.text = std::move(s);
    return v;
}

std::string pythonShape(const std::vector<std::int64_t>& shape) {
    std::string s = "[";
    for (std::size_t i = 0; i < shape.size(); ++i) {
        if (i) s += ", ";
        s += std::to_string(shape[i]);
    }
    return s + "]";
}

}  // namespace msprobe

std::string pythonFloatText(double v) {
    if (std::isnan(v)) return "nan";
    if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
    char buf[64];
    const auto r = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific);
    const std::string_view sci(buf, std::size_t(r.ptr - buf));  // "-1.2345e+05"
    const std::size_t e = sci.find('e');
    const int exp = std::atoi(std::string(sci.substr(e + 1)).c_str());
    if (exp < -4 || exp >= 16) return std::string(sci);  // Python's repr switches here
    const bool neg = sci[0] == '-';
    std::string digits;
    for (char c : sci.substr(neg, e - neg))
        if (c != '.') digits += c;
    std::string out = neg ? "-" : "";
    const int n = int(digits.size());
    if (exp < 0) {
        out += "0." + std::string(std::size_t(-exp - 1), '0') + digits;
    } else if (exp >= n - 1) {
        out += digits + std::string(std::size_t(exp - (n - 1)), '0') + ".0";
    } else {
        out += digits.substr(0, std::size_t(exp) + 1) + "." + digits.substr(std::size_t(exp) + 1);
    }
    return out;
}

std::string crc32Text(std::string_view text) {
    // zlib's CRC-32 (reflected polynomial 0xEDB88320); a table is not worth it for short values.
    std::uint32_t c = 0xffffffffu;
    for (const char ch : text) {
        c ^= static_cast<unsigned char>(ch);
        for (int k = 0; k < 8; ++k) c = (c >> 1) ^ (0xedb88320u & (0u - (c & 1u)));
    }
    char buf[9];
    std::snprintf(buf, sizeof buf, "%08x", c ^ 0xffffffffu);
    return buf;
}

}  // namespace dl
