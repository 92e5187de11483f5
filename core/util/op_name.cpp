#include "core/util/op_name.h"

#include <cctype>

namespace dl {

namespace {

bool allDigits(std::string_view s) {
    if (s.empty()) return false;
    for (char c : s)
        if (!std::isdigit(static_cast<unsigned char>(c))) return false;
    return true;
}

OpNameParts at(std::string_view name, std::size_t sepBegin, std::size_t shortBegin) {
    return {name.substr(0, sepBegin), name.substr(shortBegin)};
}

// msprobe keys: "{Module|Cell}.{path}.{Class}.{forward|backward}.{n}" for module calls,
// "{Kind}.{api}.{n}.{forward|backward}" for API calls (short already: kept whole).
bool splitMsprobe(std::string_view name, OpNameParts& out) {
    const bool module = name.starts_with("Module.") || name.starts_with("Cell.");
    if (!module) return false;
    // The last three dot fields are Class.direction.n.
    std::size_t p = name.size();
    for (int k = 0; k < 3; ++k) {
        p = name.rfind('.', p - 1);
        if (p == std::string_view::npos || p == 0) return false;
    }
    const std::string_view tail = name.substr(p + 1);
    const std::size_t d1 = tail.find('.'), d2 = tail.rfind('.');
    const std::string_view dir = tail.substr(d1 + 1, d2 - d1 - 1);
    if (d1 == d2 || (dir != "forward" && dir != "backward") || !allDigits(tail.substr(d2 + 1))) return false;
    if (name.find('.') == p) return false;  // "Module.Class.forward.0": no path to split off
    out = at(name, p, p + 1);
    return true;
}

bool looksLikeMsprobe(std::string_view name) {
    if (name.find('.') == std::string_view::npos) return false;
    for (std::string_view dir : {".forward", ".backward"}) {
        if (name.ends_with(dir)) return true;
        const std::size_t p = name.rfind(dir);
        if (p != std::string_view::npos && name[p + dir.size()] == '.' && allDigits(name.substr(p + dir.size() + 1)))
            return true;
    }
    return false;
}

}  // namespace

OpNameParts splitOpName(std::string_view name) {
    if (name.empty()) return {};
    // A trailing separator is no split point: "Default/" keeps its whole text.
    if (const std::size_t p = name.rfind('/'); p != std::string_view::npos && p + 1 < name.size())
        return at(name, p, p + 1);
    if (const std::size_t p = name.rfind("--"); p != std::string_view::npos && p + 2 < name.size())
        return at(name, p, p + 2);
    OpNameParts ms;
    if (splitMsprobe(name, ms)) return ms;
    // '_'-joined scope: only where the last component is a kernel ("{Type}-op{N}"), since op types
    // and CANN node names hold '_' of their own ("atomic_addr_clean", "trans_Cast_12").
    const std::size_t op = name.rfind("-op");
    if (op == std::string_view::npos || op == 0 || !allDigits(name.substr(op + 3))) return {{}, name};
    const std::size_t u = name.rfind('_', op - 1);
    if (u == std::string_view::npos || u == 0) return {{}, name};
    // 2.3+ turns "/_MirrorOperator" into "__MirrorOperator": the second '_' belongs to the op.
    if (name[u - 1] == '_') return u - 1 == 0 ? OpNameParts{{}, name} : at(name, u - 1, u);
    return at(name, u, u + 1);
}

OpDisplayName opDisplayName(std::string_view name, std::string_view scope) {
    const OpNameParts own = splitOpName(name);
    if (!own.scope.empty() || scope.empty()) return {own.shortName, own.scope, name};
    // An unscoped dump name with its full scoped name beside it: the scope comes from the latter.
    // msprobe API calls keep their own key as the full name (their "scope" is the module chain).
    return {own.shortName, splitOpName(scope).scope, looksLikeMsprobe(name) ? name : scope};
}

std::string_view sliceLabel(std::string_view n) {
    const std::size_t d = n.rfind('.');
    if (d == std::string_view::npos || d == 0) return n;
    const std::string_view last = n.substr(d + 1);
    if (last == "forward" || last == "backward") {  // API call: {Kind}.{api}.{n}.{direction}
        const std::size_t c = n.rfind('.', d - 1);
        if (c == std::string_view::npos || !allDigits(n.substr(c + 1, d - c - 1))) return n;
        const std::size_t k = n.find('.');
        return k < c ? n.substr(k + 1, c - k - 1) : n;
    }
    if (!allDigits(last)) return n;  // module call: {Class}.{direction}.{n}
    const std::size_t c = n.rfind('.', d - 1);
    if (c == std::string_view::npos || c == 0) return n;
    const std::string_view dir = n.substr(c + 1, d - c - 1);
    // A module's weight gradients ("Module.head.Linear.parameters_grad.0") are named by it too.
    if (dir != "forward" && dir != "backward" && dir != "parameters_grad") return n;
    const std::size_t b = n.rfind('.', c - 1);
    return b == std::string_view::npos ? n.substr(0, c) : n.substr(b + 1, c - b - 1);
}

}  // namespace dl
