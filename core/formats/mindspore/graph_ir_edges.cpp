#include "core/formats/mindspore/graph_ir_edges.h"

#include <algorithm>
#include <charconv>
#include <deque>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <unordered_set>

#include "core/formats/mindspore/graph_ir.h"
#include "core/util/text.h"

namespace dl {

namespace {

enum class NodeKind : std::uint8_t {
    Kernel,    // a primitive with a scoped name: a kernel of the dump
    Opaque,    // a primitive without a scoped name: nothing known flows through it
    TupleGet,  // TupleGetItem / tuple_getitem / getitem: element (or output slot) k
    MakeTuple,
    Depend,       // input 0 is the value, the rest only order
    Load,         // reads its parameter; the monad only orders
    UpdateState,  // ordering only
    Return,
    Partial,      // Partial(@g, bound...): a closure
    Switch,       // Switch(cond, a, b): either closure
    SwitchLayer,  // SwitchLayer(index, MakeTuple(closures...))
    Call,         // @g(args) or call @g(args)
    CallValue,    // %K(args) / %K[@FuncUnion(...)](args): calls what %K resolves to
};

struct Arg {
    enum class Kind : std::uint8_t { Node, Param, Graph, Monad, Const, Unknown };
    Kind kind = Kind::Const;
    std::uint32_t id = 0;  // node index, parameter number or graph index
    std::string text;      // a constant's text (cut), used as its label
};

struct Node {
    NodeKind kind = NodeKind::Opaque;
    std::uint32_t sub = 0;     // subgraph it is defined in
    std::int32_t kernel = -1;  // index into IrDataflow::kernels (Kernel nodes)
    std::uint32_t callee = 0;  // CallValue: the node called; Call: the graph called
    std::string prim;          // primitive name as written (Kernel/Opaque until its scope line)
    std::vector<Arg> args;
};

// The value a node or argument stands for: kernel outputs, parameters, constants, closures, or a
// tuple of such values.
struct Atom {
    enum class Kind : std::uint8_t { Output, Param, Const, Closure };
    Kind kind = Kind::Output;
    std::uint32_t a = 0;      // kernel, parameter number, constant (node << 16 | arg), or graph
    std::int32_t slot = -1;   // Output: the output slot, -1 for "the kernel's value" (slot 0 or a tuple)
    std::int64_t bound = -1;  // Closure: the Partial node whose arguments are bound first, -1 when none
    friend bool operator==(const Atom&, const Atom&) = default;
};
struct Value {
    std::vector<Atom> atoms;
    std::vector<Value> tuple;  // a MakeTuple's elements (then atoms is empty)
    bool isTuple = false;
    void add(const Value& v) {
        if (v.isTuple && atoms.empty() && !isTuple && tuple.empty()) {
            *this = v;
            return;
        }
        for (const Atom& x : v.atoms)
            if (std::find(atoms.begin(), atoms.end(), x) == atoms.end()) atoms.push_back(x);
        if (v.isTuple)  // a union of a tuple and something else: keep the elements' atoms
            for (const Value& e : v.tuple) add(e);
    }
};

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
    int depth = 0;
    bool quoted = false;
    std::size_t start = 0;
    for (std::size_t i = 0; i < s.size(); ++i) {
        const char c = s[i];
        if (quoted) {
            quoted = c != '"';
            continue;
        }
        if (c == '"')
            quoted = true;
        else if (c == '(' || c == '[' || c == '{')
            ++depth;
        else if ((c == ')' || c == ']' || c == '}') && depth > 0)
            --depth;
        else if (c == ',' && depth == 0) {
            out.push_back(trim(s.substr(start, i - start)));
            start = i + 1;
        }
    }
    const std::string_view last = trim(s.substr(start));
    if (!last.empty() || !out.empty()) out.push_back(last);
    return out;
}

// The index of the bracket closing the one at `open`, or npos.
std::size_t matching(std::string_view s, std::size_t open) {
    int depth = 0;
    bool quoted = false;
    for (std::size_t i = open; i < s.size(); ++i) {
        const char c = s[i];
        if (quoted) {
            quoted = c != '"';
            continue;
        }
        if (c == '"')
            quoted = true;
        else if (c == '(' || c == '[' || c == '{')
            ++depth;
        else if (c == ')' || c == ']' || c == '}') {
            if (--depth == 0) return i;
        }
    }
    return std::string_view::npos;
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

class FileParser {
public:
    FileParser(std::uint32_t graph, IrDataflow& out) : m_graph(graph), m_out(out) {}

    void line(std::string_view raw) {
        const std::string_view t = trim(raw);
        if (t.empty()) return;
        if (t.starts_with("subgraph @")) return beginSubgraph(t);
        if (t == "}") {
            m_last = -1;
            return;
        }
        const bool assigns = t.starts_with('%') && t.find(" = ") != std::string_view::npos;
        if (t.starts_with("%para") && !assigns) return paramHeader(t);
        // Node lines outside a "subgraph @g() {" block (older excerpts) belong to one implicit graph.
        if (m_subs.empty() && (assigns || t.starts_with("Return(") || t.starts_with("return("))) graphIndex("");
        if (assigns) return nodeLine(t);
        if (t.starts_with("Return(") || t.starts_with("return(")) return returnLine(t);
        // The lines after a node: its types (": (...) -> (...)"), its scope ("# Fullname with scope:
        // (...)", ": full_name_with_scope: (...)", "# scope: (...)") and its source trace.
        if (m_last >= 0) {
            if (auto s = scopeOf(t); s) return nameLast(*s);
        }
        if (!t.starts_with('#') && !t.starts_with(':')) m_last = -1;
    }

    void finish();

private:
    struct Sub {
        std::string name;
        std::vector<std::uint32_t> params;  // formal parameter numbers
        std::int64_t ret = -1;              // its Return node
    };

    std::uint32_t graphIndex(std::string_view name) {
        auto [it, inserted] = m_graphIds.emplace(std::string(name), std::uint32_t(m_subs.size()));
        if (inserted) m_subs.push_back({std::string(name), {}, -1});
        return it->second;
    }

    void beginSubgraph(std::string_view t) {
        t.remove_prefix(10);
        const std::size_t open = t.find('(');
        const std::uint32_t g = graphIndex(trim(t.substr(0, open)));
        m_cur = g;
        m_last = -1;
        if (open == std::string_view::npos) return;
        const std::size_t close = matching(t, open);
        if (close == std::string_view::npos) return;
        for (std::string_view a : splitArgs(t.substr(open + 1, close - open - 1))) {
            bool isParam = false;
            std::uint32_t n = 0;
            if (readRef(a, isParam, n) && isParam) {
                m_subs[g].params.push_back(n);
                m_formal.insert(n);
            }
        }
    }

    void paramHeader(std::string_view t) {
        bool isParam = false;
        std::uint32_t n = 0;
        if (!readRef(t, isParam, n)) return;
        const std::size_t colon = t.find(':');
        std::string_view name = t.substr(0, colon == std::string_view::npos ? t.size() : colon);
        name = trim(name);
        if (const std::size_t us = name.find('_'); us != std::string_view::npos) name = name.substr(us + 1);
        const std::string_view type = colon == std::string_view::npos ? std::string_view() : trim(t.substr(colon + 1));
        if (type.starts_with("<UMonad") || type.starts_with("<IOMonad")) m_monadParams.insert(n);
        if (!name.empty()) m_paramNames[n] = std::string(name);
    }

    Arg argOf(std::string_view a) {
        Arg r;
        bool isParam = false;
        std::uint32_t n = 0;
        if (readRef(a, isParam, n)) {
            if (isParam) {
                r.kind = m_monadParams.count(n) ? Arg::Kind::Monad : Arg::Kind::Param;
                r.id = n;
                if (!m_paramNames.count(n)) {
                    std::string_view name = a.substr(1);
                    if (const std::size_t us = name.find('_'); us != std::string_view::npos)
                        m_paramNames[n] = std::string(name.substr(us + 1));
                }
                return r;
            }
            auto it = m_local.find(key(m_cur, n));
            if (it == m_local.end()) {  // a node not defined (yet): unknown, no edge and no constant either
                r.kind = Arg::Kind::Unknown;
                return r;
            }
            r.kind = Arg::Kind::Node;  // an UpdateState is a monad too: finish() tells
            r.id = it->second;
            return r;
        }
        if (a.starts_with('@')) {
            r.kind = Arg::Kind::Graph;
            r.id = graphIndex(a.substr(1));
            return r;
        }
        if (a == "U" || a == "IO" || a.starts_with("UMonad") || a.starts_with("IOMonad")) {
            r.kind = Arg::Kind::Monad;
            return r;
        }
        r.text = std::string(a.substr(0, 64));
        return r;
    }

    static std::uint64_t key(std::uint32_t sub, std::uint32_t n) { return (std::uint64_t(sub) << 32) | n; }

    // "%N(debug) = Op(args) attrs ..." (1.x: "%N = Op(args)").
    void nodeLine(std::string_view t) {
        m_last = -1;
        bool isParam = false;
        std::uint32_t n = 0;
        const std::size_t eq = t.find(" = ");
        if (eq == std::string_view::npos || !readRef(t, isParam, n) || isParam) return;
        std::string_view rhs = trim(t.substr(eq + 3));
        if (rhs.starts_with("call ")) rhs = trim(rhs.substr(5));
        // The callee ends at the first '(' outside brackets ("%5[@FuncUnion(@a, @b)](...)").
        std::size_t open = std::string_view::npos;
        for (std::size_t i = 0; i < rhs.size(); ++i) {
            if (rhs[i] == '[') {
                const std::size_t close = matching(rhs, i);
                if (close == std::string_view::npos) return;
                i = close;
            } else if (rhs[i] == '(') {
                open = i;
                break;
            }
        }
        if (open == std::string_view::npos) return;
        const std::size_t close = matching(rhs, open);
        if (close == std::string_view::npos) return;
        const std::string_view callee = trim(rhs.substr(0, open));
        Node node;
        node.sub = m_cur;
        if (callee.starts_with('@')) {
            node.kind = NodeKind::Call;
            node.callee = graphIndex(callee.substr(1));
        } else if (callee.starts_with('%')) {
            bool calleeParam = false;
            std::uint32_t k = 0;
            const std::size_t bracket = callee.find('[');
            if (!readRef(callee.substr(0, bracket), calleeParam, k) || calleeParam) return;
            auto it = m_local.find(key(m_cur, k));
            if (it == m_local.end()) return;
            node.kind = NodeKind::CallValue;
            node.callee = it->second;
        } else {
            node.prim = std::string(callee);
            node.kind = kindOfPrimitive(callee);
        }
        for (std::string_view a : splitArgs(rhs.substr(open + 1, close - open - 1))) node.args.push_back(argOf(a));
        const auto index = std::uint32_t(m_nodes.size());
        m_nodes.push_back(std::move(node));
        m_local[key(m_cur, n)] = index;
        m_last = std::int64_t(index);
        if (auto s = scopeOf(rhs.substr(close)); s) nameLast(*s);  // 1.x: the scope on the node line
    }

    void returnLine(std::string_view t) {
        m_last = -1;
        const std::size_t open = t.find('(');
        const std::size_t close = matching(t, open);
        if (close == std::string_view::npos) return;
        Node node;
        node.sub = m_cur;
        node.kind = NodeKind::Return;
        for (std::string_view a : splitArgs(t.substr(open + 1, close - open - 1))) node.args.push_back(argOf(a));
        m_subs[m_cur].ret = std::int64_t(m_nodes.size());
        m_nodes.push_back(std::move(node));
    }

    // The scope line after a node: a primitive with a name becomes a kernel.
    void nameLast(std::string_view scope) {
        Node& node = m_nodes[std::size_t(m_last)];
        m_last = -1;
        if (node.kind != NodeKind::Opaque || node.kernel >= 0 || scope.empty()) return;
        node.kind = NodeKind::Kernel;
        node.kernel = std::int32_t(m_out.kernels.size());
        std::string type(typeOfScope(scope));
        if (type.empty()) type = std::string(stripPrefix(node.prim));
        m_out.kernels.push_back({std::string(scope), std::move(type), m_graph});
        node.prim.clear();
        node.prim.shrink_to_fit();
    }

    // Values (after the whole file: a subgraph may be called before it is printed).
    Value valueOf(std::uint32_t n);
    Value argValue(const Arg& a);
    void closuresOf(std::uint32_t n, std::vector<Atom>& out, int depth) const;
    void collectCallSites();
    std::vector<std::uint32_t> kernelsIn(const Value& v) const;
    void controlKernels(const Arg& a, std::vector<std::uint32_t>& out);

    std::uint32_t m_graph;
    IrDataflow& m_out;
    std::vector<Node> m_nodes;
    std::vector<Sub> m_subs;
    std::unordered_map<std::string, std::uint32_t> m_graphIds;
    std::unordered_map<std::uint64_t, std::uint32_t> m_local;     // (subgraph, %N) -> node
    std::unordered_map<std::uint32_t, std::string> m_paramNames;  // %paraN -> its name
    std::unordered_set<std::uint32_t> m_monadParams, m_formal;
    // A subgraph's formal parameter -> the arguments that bind it: (node, argument index).
    std::unordered_map<std::uint32_t, std::vector<std::pair<std::uint32_t, std::uint32_t>>> m_sites;
    std::unordered_map<std::uint32_t, Value> m_memo;
    std::unordered_set<std::uint32_t> m_busy, m_busyParams;
    std::uint32_t m_cur = 0;
    std::int64_t m_last = -1;  // the node whose scope line may follow
};

// Closures a callee node stands for, read from the text (Partial, Switch of Partials, @g).
void FileParser::closuresOf(std::uint32_t n, std::vector<Atom>& out, int depth) const {
    if (depth > 32) return;
    const Node& node = m_nodes[n];
    const auto fromArg = [&](const Arg& a) {
        if (a.kind == Arg::Kind::Graph)
            out.push_back({Atom::Kind::Closure, a.id, -1, -1});
        else if (a.kind == Arg::Kind::Node)
            closuresOf(a.id, out, depth + 1);
    };
    switch (node.kind) {
        case NodeKind::Partial:
            if (!node.args.empty() && node.args[0].kind == Arg::Kind::Graph)
                out.push_back({Atom::Kind::Closure, node.args[0].id, -1, std::int64_t(n)});
            break;
        case NodeKind::Switch:
            for (std::size_t i = 1; i < node.args.size(); ++i) fromArg(node.args[i]);
            break;
        case NodeKind::SwitchLayer:
        case NodeKind::MakeTuple:
            for (std::size_t i = node.kind == NodeKind::SwitchLayer ? 1 : 0; i < node.args.size(); ++i)
                fromArg(node.args[i]);
            break;
        case NodeKind::Depend:
            if (!node.args.empty()) fromArg(node.args[0]);
            break;
        default:
            break;
    }
}

void FileParser::collectCallSites() {
    for (std::uint32_t n = 0; n < m_nodes.size(); ++n) {
        const Node& node = m_nodes[n];
        std::vector<Atom> callees;
        if (node.kind == NodeKind::Call)
            callees.push_back({Atom::Kind::Closure, node.callee, -1, -1});
        else if (node.kind == NodeKind::CallValue)
            closuresOf(node.callee, callees, 0);
        for (const Atom& c : callees) {
            const Sub& g = m_subs[c.a];
            std::size_t p = 0;
            if (c.bound >= 0) {
                const Node& partial = m_nodes[std::size_t(c.bound)];
                for (std::uint32_t i = 1; i < partial.args.size() && p < g.params.size(); ++i, ++p)
                    m_sites[g.params[p]].push_back({std::uint32_t(c.bound), i});
            }
            for (std::uint32_t i = 0; i < node.args.size() && p < g.params.size(); ++i, ++p)
                m_sites[g.params[p]].push_back({n, i});
        }
    }
}

Value FileParser::argValue(const Arg& a) {
    Value v;
    switch (a.kind) {
        case Arg::Kind::Node:
            return valueOf(a.id);
        case Arg::Kind::Param: {
            auto s = m_sites.find(a.id);
            if (!m_formal.count(a.id) || s == m_sites.end()) {
                v.atoms.push_back({Atom::Kind::Param, a.id, -1, -1});
                return v;
            }
            if (!m_busyParams.insert(a.id).second) return v;  // a recursive call: what it adds is already there
            for (const auto& [node, arg] : s->second) v.add(argValue(m_nodes[node].args[arg]));
            m_busyParams.erase(a.id);
            return v;
        }
        case Arg::Kind::Graph:
            v.atoms.push_back({Atom::Kind::Closure, a.id, -1, -1});
            return v;
        case Arg::Kind::Const:
            v.atoms.push_back({Atom::Kind::Const, 0, -1, -1});
            return v;
        case Arg::Kind::Monad:
        case Arg::Kind::Unknown:
            return v;
    }
    return v;
}

Value FileParser::valueOf(std::uint32_t n) {
    if (auto it = m_memo.find(n); it != m_memo.end()) return it->second;
    const Node& node = m_nodes[n];
    Value v;
    if (node.kind == NodeKind::Kernel) {
        v.atoms.push_back({Atom::Kind::Output, std::uint32_t(node.kernel), -1, -1});
        return v;
    }
    if (!m_busy.insert(n).second) return v;  // a cycle through recursive graphs: adds nothing new
    const auto args = [&](std::size_t i) { return i < node.args.size() ? argValue(node.args[i]) : Value{}; };
    switch (node.kind) {
        case NodeKind::TupleGet: {
            const Value t = args(0);
            const std::optional<std::uint32_t> k =
                node.args.size() > 1 ? indexConstant(node.args[1].text) : std::nullopt;
            if (!k) break;  // an index DumpLens cannot read: no edge rather than a guess
            if (t.isTuple) {
                if (*k < t.tuple.size()) v = t.tuple[*k];
            } else {
                for (Atom a : t.atoms)
                    if (a.kind == Atom::Kind::Output && a.slot < 0) {
                        a.slot = std::int32_t(*k);
                        v.atoms.push_back(a);
                    }
            }
            break;
        }
        case NodeKind::MakeTuple:
            v.isTuple = true;
            for (const Arg& a : node.args) v.tuple.push_back(argValue(a));
            break;
        case NodeKind::Depend:
        case NodeKind::Load:
        case NodeKind::Return:
            v = args(0);
            break;
        case NodeKind::Partial:
        case NodeKind::Switch:
        case NodeKind::SwitchLayer:
            closuresOf(n, v.atoms, 0);
            break;
        case NodeKind::Call:
        case NodeKind::CallValue: {
            std::vector<Atom> callees;
            if (node.kind == NodeKind::Call)
                callees.push_back({Atom::Kind::Closure, node.callee, -1, -1});
            else
                closuresOf(node.callee, callees, 0);
            for (const Atom& c : callees)
                if (m_subs[c.a].ret >= 0) v.add(valueOf(std::uint32_t(m_subs[c.a].ret)));
            break;
        }
        default:
            break;  // UpdateState, Opaque: no data
    }
    m_busy.erase(n);
    m_memo.emplace(n, v);
    return v;
}

std::vector<std::uint32_t> FileParser::kernelsIn(const Value& v) const {
    std::vector<std::uint32_t> k;
    for (const Atom& a : v.atoms)
        if (a.kind == Atom::Kind::Output) k.push_back(a.a);
    for (const Value& e : v.tuple)
        for (std::uint32_t x : kernelsIn(e)) k.push_back(x);
    return k;
}

// Kernels an ordering input waits for: Depend's later inputs, an UpdateState's inputs.
void FileParser::controlKernels(const Arg& a, std::vector<std::uint32_t>& out) {
    if (a.kind != Arg::Kind::Node) return;
    const Node& node = m_nodes[a.id];
    if (node.kind == NodeKind::Depend) {
        for (std::size_t i = 1; i < node.args.size(); ++i)
            if (node.args[i].kind == Arg::Kind::Node)
                for (std::uint32_t k : kernelsIn(argValue(node.args[i]))) out.push_back(k);
    } else if (node.kind == NodeKind::UpdateState) {
        for (const Arg& x : node.args)
            if (x.kind == Arg::Kind::Node)
                for (std::uint32_t k : kernelsIn(argValue(x))) out.push_back(k);
    }
}

void FileParser::finish() {
    collectCallSites();
    for (std::uint32_t n = 0; n < m_nodes.size(); ++n) {
        const Node& node = m_nodes[n];
        if (node.kind != NodeKind::Kernel) continue;
        const auto to = std::uint32_t(node.kernel);
        // Input slots count the kernel's real inputs: a MakeTuple argument unfolds into one per
        // element (AddN, Concat), monads take none.
        std::uint32_t slot = 0;
        for (const Arg& a : node.args) {
            if (a.kind == Arg::Kind::Monad ||
                (a.kind == Arg::Kind::Node && m_nodes[a.id].kind == NodeKind::UpdateState)) {
                std::vector<std::uint32_t> ctl;
                controlKernels(a, ctl);
                for (std::uint32_t k : ctl) m_out.controlEdges.push_back({k, to, 0, 0});
                continue;
            }
            // Depend's later inputs order this kernel, also as an element of a MakeTuple argument.
            if (a.kind == Arg::Kind::Node) {
                const Node& in = m_nodes[a.id];
                std::vector<const Arg*> direct{&a};
                if (in.kind == NodeKind::MakeTuple)
                    for (const Arg& e : in.args) direct.push_back(&e);
                for (const Arg* d : direct)
                    if (d->kind == Arg::Kind::Node && m_nodes[d->id].kind == NodeKind::Depend) {
                        std::vector<std::uint32_t> ctl;
                        controlKernels(*d, ctl);
                        for (std::uint32_t k : ctl) m_out.controlEdges.push_back({k, to, 0, 0});
                    }
            }
            const Value v = argValue(a);
            const std::vector<const Value*> parts = [&] {
                std::vector<const Value*> p;
                if (v.isTuple && a.kind == Arg::Kind::Node && m_nodes[a.id].kind == NodeKind::MakeTuple)
                    for (const Value& e : v.tuple) p.push_back(&e);
                else
                    p.push_back(&v);
                return p;
            }();
            for (const Value* part : parts) {
                const auto s = std::uint16_t(std::min<std::uint32_t>(slot, 0xffff));
                for (const Atom& x : part->atoms) {
                    if (x.kind == Atom::Kind::Output)
                        m_out.edges.push_back({x.a, to, std::uint16_t(std::max(0, x.slot)), s});
                    else if (x.kind == Atom::Kind::Param) {
                        auto name = m_paramNames.find(x.a);
                        m_out.sources.push_back(
                            {to, s, IrSourceInput::Kind::Parameter,
                             name == m_paramNames.end() ? "%para" + std::to_string(x.a) : name->second});
                    } else if (x.kind == Atom::Kind::Const) {
                        m_out.sources.push_back(
                            {to, s, IrSourceInput::Kind::Constant, a.kind == Arg::Kind::Const ? a.text : "constant"});
                    }
                }
                for (std::uint32_t k : part->isTuple ? kernelsIn(*part) : std::vector<std::uint32_t>{})
                    m_out.edges.push_back({k, to, 0, s});  // a tuple handed in whole: its kernels feed this input
                ++slot;
            }
        }
    }
}

}  // namespace

void parseGraphIrDataflow(std::string_view text, std::uint32_t graph, IrDataflow& out) {
    FileParser p(graph, out);
    std::size_t pos = 0;
    while (pos < text.size()) {
        const std::size_t nl = text.find('\n', pos);
        p.line(text.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos));
        pos = nl == std::string_view::npos ? text.size() : nl + 1;
    }
    p.finish();
    ++out.filesRead;
}

bool readGraphIrDataflow(const std::string& file, std::uint32_t graph, IrDataflow& out, std::string& error,
                         std::size_t maxBytes) {
    std::ifstream in(file);
    if (!in) {
        error = file + ": graph IR cannot be opened";
        return false;
    }
    FileParser p(graph, out);
    std::string line;
    std::size_t bytes = 0;
    while (std::getline(in, line)) {
        bytes += line.size() + 1;
        if (bytes > maxBytes) {
            error = file + ": graph IR larger than " + std::to_string(maxBytes) + " bytes: not read";
            return false;
        }
        p.line(line);
    }
    if (in.bad()) {
        error = file + ": graph IR read error";
        return false;
    }
    p.finish();
    ++out.filesRead;
    return true;
}

bool readGraphIrFolder(const std::string& graphsDir, IrDataflow& out, std::string& error) {
    std::error_code ec;
    std::vector<std::pair<std::int64_t, std::filesystem::path>> files;
    for (std::filesystem::directory_iterator it(graphsDir, ec), end; !ec && it != end; it.increment(ec)) {
        const std::int64_t g = graphIrGraphId(it->path().filename().string());
        if (g >= 0 && it->is_regular_file(ec)) files.emplace_back(g, it->path());
    }
    std::sort(files.begin(), files.end());
    bool ok = true;
    for (const auto& [g, f] : files) {
        std::string e;
        if (!readGraphIrDataflow(f.string(), std::uint32_t(g), out, e)) {
            if (ok) error = e;
            ok = false;
        }
    }
    out.finish();
    if (files.empty()) {
        error = graphsDir + ": no graph IR (ms_output_trace_code_graph_N.ir)";
        return false;
    }
    return ok;
}

void IrDataflow::finish() {
    const auto byFrom = [](const IrEdge& a, const IrEdge& b) {
        return std::tie(a.from, a.fromSlot, a.to, a.toSlot) < std::tie(b.from, b.fromSlot, b.to, b.toSlot);
    };
    for (auto* list : {&edges, &controlEdges}) {
        std::sort(list->begin(), list->end(), byFrom);
        list->erase(std::unique(list->begin(), list->end()), list->end());
    }
    std::sort(sources.begin(), sources.end(), [](const IrSourceInput& a, const IrSourceInput& b) {
        return std::tie(a.to, a.toSlot, a.label) < std::tie(b.to, b.toSlot, b.label);
    });
    sources.erase(std::unique(sources.begin(), sources.end(),
                              [](const IrSourceInput& a, const IrSourceInput& b) {
                                  return a.to == b.to && a.toSlot == b.toSlot && a.label == b.label;
                              }),
                  sources.end());
    const std::size_t n = kernels.size();
    m_outBegin.assign(n + 1, 0);
    m_inBegin.assign(n + 1, 0);
    for (const IrEdge& e : edges) {
        ++m_outBegin[e.from + 1];
        ++m_inBegin[e.to + 1];
    }
    for (std::size_t i = 0; i < n; ++i) {
        m_outBegin[i + 1] += m_outBegin[i];
        m_inBegin[i + 1] += m_inBegin[i];
    }
    m_inOrder.assign(edges.size(), 0);
    std::vector<std::uint32_t> fill(m_inBegin.begin(), m_inBegin.end() - 1);
    for (std::uint32_t i = 0; i < edges.size(); ++i) m_inOrder[fill[edges[i].to]++] = i;
    m_byGraph.clear();
}

std::int64_t IrDataflow::find(std::uint32_t graph, std::string_view dumpName) const {
    auto it = m_byGraph.find(graph);
    if (it == m_byGraph.end()) {
        // Built on the first look-up of a graph: its name forms cost more than the edges.
        GraphNames g;
        std::vector<std::string> names;
        for (std::uint32_t k = 0; k < kernels.size(); ++k)
            if (kernels[k].graph == graph) {
                names.push_back(kernels[k].name);
                g.kernel.push_back(k);
            }
        g.table.assign(std::move(names));
        it = m_byGraph.emplace(graph, std::move(g)).first;
    }
    const std::int64_t pos = it->second.table.find(dumpName);
    return pos < 0 ? -1 : std::int64_t(it->second.kernel[std::size_t(pos)]);
}

std::vector<std::uint32_t> IrDataflow::outEdges(std::uint32_t k) const {
    std::vector<std::uint32_t> r;
    if (k + 1 >= m_outBegin.size()) return r;
    for (std::uint32_t i = m_outBegin[k]; i < m_outBegin[k + 1]; ++i) r.push_back(i);
    return r;
}

std::vector<std::uint32_t> IrDataflow::inEdges(std::uint32_t k) const {
    std::vector<std::uint32_t> r;
    if (k + 1 >= m_inBegin.size()) return r;
    for (std::uint32_t i = m_inBegin[k]; i < m_inBegin[k + 1]; ++i) r.push_back(m_inOrder[i]);
    std::sort(r.begin(), r.end(), [&](std::uint32_t a, std::uint32_t b) {
        return std::tie(edges[a].toSlot, edges[a].from) < std::tie(edges[b].toSlot, edges[b].from);
    });
    return r;
}

std::vector<const IrSourceInput*> IrDataflow::sourcesOf(std::uint32_t k) const {
    std::vector<const IrSourceInput*> r;
    auto it = std::lower_bound(sources.begin(), sources.end(), k,
                               [](const IrSourceInput& s, std::uint32_t v) { return s.to < v; });
    for (; it != sources.end() && it->to == k; ++it) r.push_back(&*it);
    return r;
}

std::vector<IrEdge> IrDataflow::path(std::uint32_t from, std::uint32_t to, std::size_t maxHops,
                                     std::size_t maxVisited) const {
    if (from >= kernels.size() || to >= kernels.size() || from == to) return {};
    // Breadth first: the shortest path, each kernel reached once (through the edge that reached it).
    std::unordered_map<std::uint32_t, std::pair<std::uint32_t, std::uint32_t>> via;  // kernel -> (edge, depth)
    std::deque<std::uint32_t> queue{from};
    via[from] = {0xffffffffu, 0};
    while (!queue.empty() && via.size() < maxVisited) {
        const std::uint32_t k = queue.front();
        queue.pop_front();
        const std::uint32_t depth = via[k].second;
        if (depth >= maxHops) continue;
        for (std::uint32_t i = m_outBegin[k]; i < m_outBegin[k + 1]; ++i) {
            const std::uint32_t next = edges[i].to;
            if (via.count(next)) continue;
            via[next] = {i, depth + 1};
            if (next == to) {
                std::vector<IrEdge> p;
                for (std::uint32_t cur = to; cur != from;) {
                    const IrEdge& e = edges[via[cur].first];
                    p.push_back(e);
                    cur = e.from;
                }
                std::reverse(p.begin(), p.end());
                return p;
            }
            queue.push_back(next);
        }
    }
    return {};
}

}  // namespace dl
