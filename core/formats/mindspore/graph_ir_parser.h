#pragma once
// Internal to the graph IR reader: the parsed nodes and values and the line parser of one file.
// graph_ir_syntax.cpp holds the text helpers (arguments, brackets, references, scope lines),
// graph_ir_values.cpp what the nodes stand for once the whole file is read (finish()), and
// graph_ir_edges.cpp the entry points and the IrDataflow queries.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "core/formats/mindspore/graph_ir_edges.h"
#include "core/util/text.h"

namespace dl::graph_ir_detail {

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

std::string_view stripPrefix(std::string_view p);
NodeKind kindOfPrimitive(std::string_view prim);
std::vector<std::string_view> splitArgs(std::string_view s);
std::size_t matching(std::string_view s, std::size_t open);
bool readNumber(std::string_view s, std::uint32_t& v);
bool readRef(std::string_view t, bool& isParam, std::uint32_t& n);
std::optional<std::uint32_t> indexConstant(std::string_view t);
std::optional<std::string_view> scopeOf(std::string_view line);
std::string_view typeOfScope(std::string_view scope);

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

}  // namespace dl::graph_ir_detail
