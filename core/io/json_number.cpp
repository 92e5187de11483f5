#include "core/io/json_number.h"

#include <charconv>
#include <string_view>

namespace dl {

bool jsonUnsigned(const nlohmann::json& v, std::uint64_t& out, bool hex) {
    if (v.is_number_unsigned()) {
        out = v.get<std::uint64_t>();
        return true;
    }
    if (v.is_number_integer()) {
        const auto i = v.get<std::int64_t>();
        if (i < 0) return false;
        out = std::uint64_t(i);
        return true;
    }
    if (!v.is_string()) return false;
    std::string_view s = v.get_ref<const std::string&>();
    int base = 10;
    if (hex && (s.starts_with("0x") || s.starts_with("0X"))) {
        s.remove_prefix(2);
        base = 16;
    }
    if (s.empty()) return false;
    const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out, base);
    return ec == std::errc() && p == s.data() + s.size();
}

}  // namespace dl
