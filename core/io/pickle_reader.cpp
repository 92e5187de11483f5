#include "core/io/pickle_reader.h"

#include <cstdio>
#include <cstring>
#include <unordered_map>

namespace dl {

namespace {

using Kind = PickleValue::Kind;
constexpr std::size_t kMaxStack = 1u << 20;
// Memory is bounded whatever the input: a tensor's pickle holds a few dozen values, while a 64 MiB
// stream of 1-byte opcodes could otherwise make 64 M nodes (~80 bytes each) or memo entries.
constexpr std::size_t kMaxNodes = 1u << 18;  // ~20 MiB of nodes
constexpr std::size_t kMaxRefs = 1u << 20;   // container items and memo entries (8 MiB of pointers)

class Machine {
public:
    Machine(const std::uint8_t* d, std::size_t n, std::deque<PickleValue>& nodes) : m_d(d), m_n(n), m_nodes(nodes) {}

    bool run(const PickleValue*& out, std::string& error) {
        while (m_p < m_n) {
            const std::size_t at = m_p;
            const std::uint8_t op = m_d[m_p++];
            if (op == '.') {  // STOP
                if (m_stack.empty()) return fail(at, op, "empty stack at STOP", error);
                out = m_stack.back();
                return true;
            }
            if (!step(op)) return fail(at, op, m_why.empty() ? "malformed or unsupported" : m_why, error);
            if (m_stack.size() > kMaxStack || m_marks.size() > kMaxStack) return fail(at, op, "stack too deep", error);
            if (m_nodes.size() > kMaxNodes || m_refs > kMaxRefs || m_memo.size() > kMaxRefs)
                return fail(at, op,
                            "more than " + std::to_string(kMaxNodes) + " values or " + std::to_string(kMaxRefs) +
                                " references (not a tensor's pickle)",
                            error);
        }
        error = "pickle ends without STOP (truncated)";
        return false;
    }

private:
    PickleRef make(Kind k) {
        m_nodes.emplace_back();
        m_nodes.back().kind = k;
        return &m_nodes.back();
    }
    PickleRef makeInt(std::int64_t i, Kind k = Kind::Int) {
        PickleRef v = make(k);
        v->i = i;
        return v;
    }
    bool fail(std::size_t at, std::uint8_t op, const std::string& why, std::string& error) {
        char hex[8];
        std::snprintf(hex, sizeof hex, "0x%02x", op);
        error = "pickle opcode " + std::string(hex) + " at byte " + std::to_string(at) + ": " + why;
        return false;
    }
    bool need(std::size_t n) { return m_n - m_p >= n; }
    std::uint64_t le(int n) {
        std::uint64_t v = 0;
        for (int i = n - 1; i >= 0; --i) v = (v << 8) | m_d[m_p + std::size_t(i)];
        m_p += std::size_t(n);
        return v;
    }
    bool line(std::string& s) {  // text up to '\n' (protocol 0 GLOBAL)
        const void* nl = std::memchr(m_d + m_p, '\n', m_n - m_p);
        if (!nl) return false;
        const std::size_t end = std::size_t(static_cast<const std::uint8_t*>(nl) - m_d);
        s.assign(reinterpret_cast<const char*>(m_d + m_p), end - m_p);
        m_p = end + 1;
        return true;
    }
    bool push(PickleRef v) {
        m_stack.push_back(v);
        return true;
    }
    bool pop(PickleRef& v) {
        if (m_stack.empty() || (!m_marks.empty() && m_marks.back() == m_stack.size())) return false;
        v = m_stack.back();
        m_stack.pop_back();
        return true;
    }
    // Items above the last MARK, removed from the stack.
    bool popMark(std::vector<PickleRef>& items) {
        if (m_marks.empty()) return false;
        const std::size_t m = m_marks.back();
        m_marks.pop_back();
        if (m > m_stack.size()) return false;
        items.assign(m_stack.begin() + std::ptrdiff_t(m), m_stack.end());
        m_refs += items.size();
        m_stack.resize(m);
        return true;
    }
    bool text(std::size_t n, Kind k) {
        if (!need(n)) return false;
        auto v = make(k);
        v->s.assign(reinterpret_cast<const char*>(m_d + m_p), n);
        m_p += n;
        return push(v);
    }
    bool tupleOf(std::size_t n) {
        if (m_stack.size() < n) return false;
        if (!m_marks.empty() && m_stack.size() - n < m_marks.back()) return false;
        auto t = make(Kind::Tuple);
        t->items.assign(m_stack.end() - std::ptrdiff_t(n), m_stack.end());
        m_refs += n;
        m_stack.resize(m_stack.size() - n);
        return push(t);
    }
    bool extendTop(std::vector<PickleRef>&& items, bool dict) {
        if (m_stack.empty()) return false;
        PickleValue& target = *m_stack.back();
        if (target.kind != (dict ? Kind::Dict : Kind::List)) {
            if (!(dict && (target.kind == Kind::Object || target.kind == Kind::Reduce))) return false;
            return true;  // items set on an object (an OrderedDict being filled): kept out of the tree
        }
        if (dict && items.size() % 2) return false;
        target.items.insert(target.items.end(), items.begin(), items.end());
        m_refs += items.size();
        return true;
    }
    bool memoPut(std::uint64_t key) {
        if (m_stack.empty()) return false;
        m_memo[key] = m_stack.back();
        return true;
    }
    bool memoGet(std::uint64_t key) {
        auto it = m_memo.find(key);
        if (it == m_memo.end()) {
            m_why = "memo key " + std::to_string(key) + " not set";
            return false;
        }
        return push(it->second);
    }
    bool global(std::string module, std::string name) {
        auto g = make(Kind::Global);
        g->s = std::move(module) + "." + std::move(name);
        return push(g);
    }
    bool call(Kind k) {  // REDUCE / NEWOBJ: callable (class) and argument tuple
        PickleRef args, fn;
        if (!pop(args) || !pop(fn)) return false;
        auto r = make(k);
        r->items = {fn, args};
        return push(r);
    }

    bool step(std::uint8_t op) {
        PickleRef a, b;
        std::vector<PickleRef> items;
        switch (op) {
            case 0x80:
                return need(1) && (m_p += 1, true);  // PROTO
            case 0x95:
                return need(8) && (m_p += 8, true);  // FRAME
            case '(':
                m_marks.push_back(m_stack.size());
                return true;  // MARK
            case 'N':
                return push(make(Kind::None));
            case 0x88:
                return push(makeInt(1, Kind::Bool));  // NEWTRUE
            case 0x89:
                return push(makeInt(0, Kind::Bool));  // NEWFALSE
            case 'J':
                return need(4) && push(makeInt(std::int32_t(le(4))));  // BININT
            case 'K':
                return need(1) && push(makeInt(std::int64_t(le(1))));  // BININT1
            case 'M':
                return need(2) && push(makeInt(std::int64_t(le(2))));  // BININT2
            case 0x8a: {                                               // LONG1
                if (!need(1)) return false;
                const std::size_t n = std::size_t(le(1));
                if (n > 8 || !need(n)) {
                    m_why = "integer wider than 64 bits";
                    return false;
                }
                std::uint64_t v = n ? le(int(n)) : 0;
                if (n && n < 8 && (v >> (8 * n - 1)) & 1) v |= ~std::uint64_t(0) << (8 * n);  // sign-extend
                return push(makeInt(std::int64_t(v)));
            }
            case 'G': {  // BINFLOAT (big-endian)
                if (!need(8)) return false;
                std::uint64_t bits = 0;
                for (int i = 0; i < 8; ++i) bits = (bits << 8) | m_d[m_p++];
                auto v = make(Kind::Float);
                std::memcpy(&v->f, &bits, 8);
                return push(v);
            }
            case 'X':
                return need(4) && text(std::size_t(le(4)), Kind::String);  // BINUNICODE
            case 0x8c:
                return need(1) && text(std::size_t(le(1)), Kind::String);  // SHORT_BINUNICODE
            case 0x8d:
                return need(8) && text(std::size_t(le(8)), Kind::String);  // BINUNICODE8
            case 'B':
                return need(4) && text(std::size_t(le(4)), Kind::Bytes);  // BINBYTES
            case 'C':
                return need(1) && text(std::size_t(le(1)), Kind::Bytes);  // SHORT_BINBYTES
            case 'T':
                return need(4) && text(std::size_t(le(4)), Kind::String);  // BINSTRING
            case 'U':
                return need(1) && text(std::size_t(le(1)), Kind::String);  // SHORT_BINSTRING
            case ')':
                return push(make(Kind::Tuple));  // EMPTY_TUPLE
            case 0x85:
                return tupleOf(1);
            case 0x86:
                return tupleOf(2);
            case 0x87:
                return tupleOf(3);
            case 't': {  // TUPLE
                if (!popMark(items)) return false;
                auto t = make(Kind::Tuple);
                t->items = std::move(items);
                return push(t);
            }
            case ']':
                return push(make(Kind::List));  // EMPTY_LIST
            case '}':
                return push(make(Kind::Dict));  // EMPTY_DICT
            case 'l':
            case 'd': {  // LIST / DICT from MARK
                if (!popMark(items) || (op == 'd' && items.size() % 2)) return false;
                auto v = make(op == 'l' ? Kind::List : Kind::Dict);
                v->items = std::move(items);
                return push(v);
            }
            case 'a':
                return pop(a) && extendTop({a}, false);  // APPEND
            case 'e':
                return popMark(items) && extendTop(std::move(items), false);  // APPENDS
            case 's':
                return pop(b) && pop(a) && extendTop({a, b}, true);  // SETITEM
            case 'u':
                return popMark(items) && extendTop(std::move(items), true);  // SETITEMS
            case 'q':
                return need(1) && memoPut(le(1));  // BINPUT
            case 'r':
                return need(4) && memoPut(le(4));  // LONG_BINPUT
            case 0x94:
                return memoPut(m_memo.size());  // MEMOIZE
            case 'h':
                return need(1) && memoGet(le(1));  // BINGET
            case 'j':
                return need(4) && memoGet(le(4));  // LONG_BINGET
            case 'c': {                            // GLOBAL "module\nname\n"
                std::string module, name;
                return line(module) && line(name) && global(std::move(module), std::move(name));
            }
            case 0x93: {  // STACK_GLOBAL
                if (!pop(b) || !pop(a) || a->kind != Kind::String || b->kind != Kind::String) return false;
                return global(a->s, b->s);
            }
            case 'Q': {  // BINPERSID
                if (!pop(a)) return false;
                auto v = make(Kind::PersistentId);
                v->items = {a};
                return push(v);
            }
            case 'R':
                return call(Kind::Reduce);  // REDUCE
            case 0x81:
                return call(Kind::Object);  // NEWOBJ
            case 'b': {                     // BUILD: state kept on an object
                if (!pop(a) || m_stack.empty()) return false;
                const Kind k = m_stack.back()->kind;
                if (k == Kind::Reduce || k == Kind::Object) m_stack.back()->items.push_back(a), ++m_refs;
                return true;
            }
            case '0':
                return pop(a);  // POP
            case '2':
                return !m_stack.empty() && push(m_stack.back());  // DUP
            default:
                m_why = "unsupported opcode";
                return false;
        }
    }

    const std::uint8_t* m_d;
    std::size_t m_n, m_p = 0;
    std::deque<PickleValue>& m_nodes;
    std::vector<PickleRef> m_stack;
    std::vector<std::size_t> m_marks;
    std::unordered_map<std::uint64_t, PickleRef> m_memo;
    std::string m_why;
    std::size_t m_refs = 0;  // pointers held by containers (APPEND of a DUPed list adds one per 2 bytes)
};

}  // namespace

bool unpickle(const std::uint8_t* data, std::size_t size, PickleTree& out, std::string& error) {
    out.nodes.clear();
    out.root = nullptr;
    if (!data || size == 0) {
        error = "empty pickle";
        return false;
    }
    Machine m(data, size, out.nodes);
    return m.run(out.root, error);
}

}  // namespace dl
