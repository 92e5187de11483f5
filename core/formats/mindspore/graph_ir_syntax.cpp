// The graph IR's text helpers: a primitive's kind, arguments split at top-level commas, the
// bracket that closes one, %N / %paraN references, TupleGetItem indexes, scope lines. Apart from
// the parser so the spellings of every MindSpore version sit in one place.
#include <charconv>

#include "core/formats/mindspore/graph_ir_parser.h"

namespace dl::graph_ir_detail {

namespace {

// The bracket scan splitArgs and matching share: from `from` on, quoted text ("...") is skipped,
// ( [ { go one level deeper and ) ] } one back (never past the outermost); `at(i, c, depth)` sees
// every other character with the depth after it. The scan stops at the first i `at` accepts and
// returns it, else npos.
template <class At>
std::size_t scanBrackets(std::string_view s, std::size_t from, At at) {
    int depth = 0;
    bool quoted = false;
    for (std::size_t i = from; i < s.size(); ++i) {
        const char c = s[i];
        if (quoted) {
            quoted = c != '"';
            continue;
        }
        if (c == '"') {
            quoted = true;
            continue;
        }
        if (c == '(' || c == '[' || c == '{')
            ++depth;
        else if ((c == ')' || c == ']' || c == '}') && depth > 0)
            --depth;
        if (at(i, c, depth)) return i;
    }
    return std::string_view::npos;
}

}  // namespace

std::string_view stripPrefix(std::string_view p) {
    for (std::string_view pre : {"PrimFunc_", "S-Prim-", "S_Prim_", "Prim::", "prim::"})
        if (p.starts_with(pre)) return p.substr(pre.size());
    return p;
}

NodeKind kindOfPrimitive(std::string_view prim) {
    const std::string_view p = stripPrefix(prim);
    if (p == "TupleGetItem" || p == "tuple_getitem" || p == "getitem" || p == "RealTupleGetItem" ||
        p == "ListGetItem" || p == "list_getitem")
        return NodeKind::TupleGet;
    if (p == "MakeTuple" || p == "make_tuple" || p == "RealMakeTuple" || p == "MakeList" || p == "make_list")
        return NodeKind::MakeTuple;
    if (p == "Depend" || p == "depend") return NodeKind::Depend;
    if (p == "Load" || p == "load") return NodeKind::Load;
    if (p == "UpdateState" || p == "update_state") return NodeKind::UpdateState;
    if (p == "Return" || p == "return") return NodeKind::Return;
    if (p == "Partial" || p == "partial") return NodeKind::Partial;
    if (p == "Switch" || p == "switch") return NodeKind::Switch;
    if (p == "SwitchLayer" || p == "switch_layer") return NodeKind::SwitchLayer;
    return NodeKind::Opaque;  // a Kernel once its scope line names it
}

// Splits "a, f(b, c), [d, e]" at top-level commas; brackets and quotes nest.
std::vector<std::string_view> splitArgs(std::string_view s) {
    std::vector<std::string_view> out;
    std::size_t start = 0;
    scanBrackets(s, 0, [&](std::size_t i, char c, int depth) {
        if (c == ',' && depth == 0) {
            out.push_back(trim(s.substr(start, i - start)));
            start = i + 1;
        }
        return false;
    });
    const std::string_view last = trim(s.substr(start));
    if (!last.empty() || !out.empty()) out.push_back(last);
    return out;
}

// The index of the bracket closing the one at `open`, or npos.
std::size_t matching(std::string_view s, std::size_t open) {
    return scanBrackets(
        s, open, [](std::size_t, char c, int depth) { return depth == 0 && (c == ')' || c == ']' || c == '}'); });
}

bool readNumber(std::string_view s, std::uint32_t& v) {
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    return ec == std::errc() && p != s.data();
}

// "%para3_w" -> 3; "%12" -> 12 (isParam false).
bool readRef(std::string_view t, bool& isParam, std::uint32_t& n) {
    if (!t.starts_with('%')) return false;
    t.remove_prefix(1);
    isParam = t.starts_with("para");
    if (isParam) t.remove_prefix(4);
    return readNumber(t, n);
}

// A TupleGetItem index written "0", "I64(0)", "Int64(0)", "Tensor(shape=[], dtype=Int64, value=0)".
std::optional<std::uint32_t> indexConstant(std::string_view t) {
    std::uint32_t v = 0;
    if (readNumber(t, v)) return v;
    const std::size_t open = t.find('(');
    if (open == std::string_view::npos || !t.ends_with(')')) return std::nullopt;
    std::string_view in = t.substr(open + 1, t.size() - open - 2);
    if (const std::size_t val = in.find("value="); val != std::string_view::npos) in = in.substr(val + 6);
    if (readNumber(trim(in), v)) return v;
    return std::nullopt;
}

// The scoped name on a trace line: "# Fullname with scope: (X)", "full_name_with_scope: (X)",
// "# scope: (X)", "#scope: (X)".
std::optional<std::string_view> scopeOf(std::string_view line) {
    std::size_t key = line.find("ith scope: (");  // "Fullname with scope" (2.x), any case of the F
    std::size_t skip = 12;
    if (key == std::string_view::npos) {
        key = line.find("full_name_with_scope: (");
        skip = 23;
    }
    if (key == std::string_view::npos) {
        key = line.find("scope: (");
        skip = 8;
    }
    if (key == std::string_view::npos) return std::nullopt;
    const std::size_t start = key + skip, close = line.find(')', start);
    if (close == std::string_view::npos) return std::nullopt;
    return trim(line.substr(start, close - start));
}

// The op type in a scoped name: "Default/net/SqrtGrad-op31" -> "SqrtGrad".
std::string_view typeOfScope(std::string_view scope) {
    if (const std::size_t slash = scope.rfind('/'); slash != std::string_view::npos) scope = scope.substr(slash + 1);
    return stripOpSuffix(scope);
}

}  // namespace dl::graph_ir_detail
