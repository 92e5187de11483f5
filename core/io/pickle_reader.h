#pragma once
// A minimal, safe pickle reader: it builds a tree of values and never runs anything. GLOBAL and
// REDUCE become inert nodes ("call torch._utils._rebuild_tensor_v2 with these arguments") for the
// caller to interpret, persistent ids stay as their tuples. Covers protocols 0-5 as written by
// torch.save (protocol 2) and Python's pickle for plain data; unknown opcodes fail with a reason.
#include <cstddef>
#include <cstdint>
#include <deque>
#include <string>
#include <vector>

namespace dl {

struct PickleValue;
// Nodes are owned by their PickleTree; pointers can form cycles (a list appended to itself) safely.
using PickleRef = PickleValue*;

struct PickleValue {
    enum class Kind : std::uint8_t {
        None,
        Bool,
        Int,
        Float,
        String,
        Bytes,
        Tuple,
        List,
        Dict,
        Global,
        PersistentId,
        Reduce,
        Object
    };
    Kind kind = Kind::None;
    std::int64_t i = 0;            // Bool, Int
    double f = 0;                  // Float
    std::string s;                 // String, Bytes; Global: "module.name"
    std::vector<PickleRef> items;  // Tuple, List; Dict: key, value, key, ...; PersistentId: {pid};
                                   // Reduce/Object: {callable, args tuple[, state]}

    bool isGlobal(const char* name) const { return kind == Kind::Global && s == name; }
};

struct PickleTree {
    std::deque<PickleValue> nodes;  // a deque: nodes keep their addresses as more are added
    const PickleValue* root = nullptr;
};

// Reads one pickle (up to STOP) from data. false with a reason (offset and opcode) when the stream
// is malformed, truncated, too deep or uses an opcode outside the supported set.
bool unpickle(const std::uint8_t* data, std::size_t size, PickleTree& out, std::string& error);

}  // namespace dl
