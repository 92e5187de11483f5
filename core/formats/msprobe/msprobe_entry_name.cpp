#include <charconv>

#include "core/formats/msprobe/msprobe_dump.h"

namespace dl {
namespace {

bool isDigits(std::string_view s) {
    if (s.empty()) return false;
    for (char c : s)
        if (c < '0' || c > '9') return false;
    return true;
}

// Digits to a number; a run too long for int64 (fuzzed or corrupt names) gives -1, not overflow.
std::int64_t toInt(std::string_view s) {
    std::int64_t v = 0;
    const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    return ec == std::errc() && p == s.data() + s.size() ? v : -1;
}

std::string join(const std::vector<std::string_view>& parts, std::size_t from, std::size_t to) {
    std::string out;
    for (std::size_t i = from; i < to; ++i) {
        if (i > from) out += '.';
        out.append(parts[i]);
    }
    return out;
}

}  // namespace

void parseMsprobeEntryName(std::string_view name, MsprobeEntry& e) {
    std::vector<std::string_view> parts;
    for (std::size_t start = 0;;) {
        const auto dot = name.find('.', start);
        parts.push_back(name.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start));
        if (dot == std::string_view::npos) break;
        start = dot + 1;
    }
    const std::size_t n = parts.size();
    e.prefix = std::string(parts[0]);
    auto isDir = [](std::string_view s) { return s == "forward" || s == "backward"; };
    if (n >= 4 && isDir(parts[n - 1]) && isDigits(parts[n - 2])) {  // API
        e.kind = MsprobeEntryKind::Api;
        e.backward = parts[n - 1] == "backward";
        e.callIndex = toInt(parts[n - 2]);
        e.op = join(parts, 1, n - 2);
    } else if (n >= 4 && isDigits(parts[n - 1]) && isDir(parts[n - 2])) {  // Module / Cell
        e.kind = MsprobeEntryKind::Module;
        e.backward = parts[n - 2] == "backward";
        e.callIndex = toInt(parts[n - 1]);
        e.op = std::string(parts[n - 3]);
        e.modulePath = join(parts, 1, n - 3);
    } else if (n >= 3 && parts[n - 1] == "parameters_grad") {  // msprobe's data_collector: {module}.parameters_grad
        e.kind = MsprobeEntryKind::ParamGrad;
        e.backward = true;
        e.op = std::string(parts[n - 2]);
        e.modulePath = join(parts, 1, n - 2);
    } else if (n >= 4 && isDigits(parts[n - 1]) && parts[n - 2] == "parameters_grad") {  // older writers
        e.kind = MsprobeEntryKind::ParamGrad;
        e.backward = true;
        e.callIndex = toInt(parts[n - 1]);
        e.op = std::string(parts[n - 3]);
        e.modulePath = join(parts, 1, n - 3);
    } else if (n >= 3 && parts[n - 1] == "debug" && isDigits(parts[n - 2])) {  // {name}.{count}.debug
        e.kind = MsprobeEntryKind::Debug;
        e.callIndex = toInt(parts[n - 2]);
        e.op = join(parts, 0, n - 2);
    } else if (n >= 2 && isDigits(parts[n - 1])) {
        e.kind = MsprobeEntryKind::Debug;
        e.callIndex = toInt(parts[n - 1]);
        e.op = join(parts, 0, n - 1);
    } else {
        e.kind = MsprobeEntryKind::Other;
        e.op = std::string(name);
    }
}

}  // namespace dl
