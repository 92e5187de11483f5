// What the graph IR's nodes stand for, resolved once the whole file is read (a subgraph may be
// called before it is printed): closures and their call sites, each node's value, and the edges
// and source inputs FileParser::finish() writes. Apart from the line parser, which only records.
#include <algorithm>

#include "core/formats/mindspore/graph_ir_parser.h"

namespace dl::graph_ir_detail {

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

}  // namespace dl::graph_ir_detail
