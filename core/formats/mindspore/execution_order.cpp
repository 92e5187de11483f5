#include "core/formats/mindspore/execution_order.h"

#include <charconv>

#include "core/util/text.h"
#include "core/util/text_lines.h"

namespace dl {

bool parseExecutionOrderCsv(std::string_view text, std::vector<std::string>& names, std::string& error) {
    names.clear();
    bool first = true;
    forEachLine(text, [&](std::string_view line, std::uint32_t) {
        line = trim(line);
        if (line.empty()) return;
        const bool header = first && line == "NodeExecutionOrder-FullNameWithScope";
        first = false;
        if (!header) names.emplace_back(line);
    });
    if (first) {
        error = "execution order file is empty";
        return false;
    }
    return true;
}

bool parseGlobalExecutionOrderCsv(std::string_view text, std::vector<std::uint32_t>& iterations,
                                  std::vector<std::uint32_t>& badLines, std::string& error) {
    iterations.clear();
    badLines.clear();
    forEachLine(text, [&](std::string_view line, std::uint32_t no) {
        line = trim(line);
        if (line.empty()) return;
        std::uint32_t v = 0;
        auto [p, ec] = std::from_chars(line.data(), line.data() + line.size(), v);
        if (ec == std::errc() && p == line.data() + line.size())
            iterations.push_back(v);
        else
            badLines.push_back(no);
    });
    if (iterations.empty() && !badLines.empty()) {
        error = "global execution order: no line is an iteration number";
        return false;
    }
    return true;
}

std::string scopeToFileName(std::string_view name, ScopeNameForm form) {
    std::string out;
    out.reserve(name.size() + 8);
    switch (form) {
        case ScopeNameForm::ScopedMs23:
            for (char c : name) out += (c == '/' || c == '\\' || c == '.' || c == ' ') ? '_' : c;
            return out;
        case ScopeNameForm::BinMs12:
        case ScopeNameForm::ShortMs22:
            for (char c : name) {
                if (c == '/')
                    out += "--";
                else
                    out += c;
            }
            if (form == ScopeNameForm::ShortMs22) {  // GetOpNameWithoutScope: text after the last "--"
                std::size_t p = out.rfind("--");
                if (p != std::string::npos) out.erase(0, p + 2);
            }
            return out;
    }
    return out;
}

std::string_view stripOpSuffix(std::string_view name) {
    const std::size_t p = name.rfind("-op");
    if (p == std::string_view::npos || p == 0 || p + 3 == name.size()) return name;
    for (std::size_t i = p + 3; i < name.size(); ++i)
        if (name[i] < '0' || name[i] > '9') return name;
    return name.substr(0, p);
}

void OpOrderTable::add(Tier& t, std::string key, std::int64_t pos, const std::vector<std::string>& names) {
    if (key.empty()) return;
    auto [it, inserted] = t.emplace(std::move(key), pos);
    // The same kernel listed twice (control flow) keeps its first position; two kernels sharing a key do not.
    if (!inserted && it->second != pos &&
        (it->second == kAmbiguous || names[std::size_t(it->second)] != names[std::size_t(pos)]))
        it->second = kAmbiguous;
}

void OpOrderTable::assign(std::vector<std::string> fullNames) {
    m_names = std::move(fullNames);
    m_scoped.clear();
    m_short.clear();
    m_loose.clear();
    for (std::size_t i = 0; i < m_names.size(); ++i) {
        const std::string& n = m_names[i];
        const auto pos = std::int64_t(i);
        const std::string forms[] = {n, scopeToFileName(n, ScopeNameForm::BinMs12),
                                     scopeToFileName(n, ScopeNameForm::ScopedMs23)};
        const std::string shortName = scopeToFileName(n, ScopeNameForm::ShortMs22);
        const std::string shorts[] = {shortName, scopeToFileName(shortName, ScopeNameForm::ScopedMs23)};
        for (const std::string& f : forms) add(m_scoped, f, pos, m_names);
        for (const std::string& f : shorts) add(m_short, f, pos, m_names);
        for (const std::string& f : forms) add(m_loose, std::string(stripOpSuffix(f)), pos, m_names);
        for (const std::string& f : shorts) add(m_loose, std::string(stripOpSuffix(f)), pos, m_names);
    }
    // A loose key that is also some kernel's exact short name would match a different kernel by guess.
    for (auto& [key, pos] : m_loose)
        if (auto s = m_short.find(key); s != m_short.end() && s->second != pos) pos = kAmbiguous;
}

std::int64_t OpOrderTable::find(std::string_view dumpName, const std::string** fullName) const {
    if (m_names.empty() || dumpName.empty()) return -1;
    const std::string key(dumpName);
    std::int64_t pos = -1;
    for (const Tier* t : {&m_scoped, &m_short}) {
        if (auto it = t->find(key); it != t->end()) {
            pos = it->second;
            break;
        }
    }
    if (pos == -1) {
        if (auto it = m_loose.find(std::string(stripOpSuffix(dumpName))); it != m_loose.end()) pos = it->second;
    }
    if (pos < 0) return -1;
    if (fullName) *fullName = &m_names[std::size_t(pos)];
    return pos;
}

std::int64_t executionOrderGraphId(std::string_view f, bool* isGlobal) {
    constexpr std::string_view local = "ms_execution_order_graph_", global = "ms_global_execution_order_graph_";
    bool g = f.starts_with(global);
    if (!g && !f.starts_with(local)) return -1;
    if (!f.ends_with(".csv")) return -1;
    f = f.substr((g ? global : local).size());
    f.remove_suffix(4);
    std::uint32_t id = 0;
    auto [p, ec] = std::from_chars(f.data(), f.data() + f.size(), id);
    if (f.empty() || ec != std::errc() || p != f.data() + f.size()) return -1;
    if (isGlobal) *isGlobal = g;
    return id;
}

}  // namespace dl
