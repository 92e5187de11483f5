// Which ops communicate: the kind from an op's type, name or scope, and the peer rank and tag its
// name carries (findCommOps). Apart from the matching because it reads only names, once per string.
#include <cctype>
#include <string>

#include "core/analysis/comm_matcher.h"
#include "core/analysis/name_memo.h"
#include "core/util/text.h"

namespace dl {

const char* commKindName(CommKind k) {
    switch (k) {
        case CommKind::None:
            return "none";
        case CommKind::Send:
            return "Send";
        case CommKind::Receive:
            return "Receive";
        case CommKind::AllReduce:
            return "AllReduce";
        case CommKind::AllGather:
            return "AllGather";
        case CommKind::ReduceScatter:
            return "ReduceScatter";
        case CommKind::Broadcast:
            return "Broadcast";
        case CommKind::AllToAll:
            return "AllToAll";
        case CommKind::Reduce:
            return "Reduce";
    }
    return "none";
}

const char* pairEvidenceName(PairEvidence e) {
    switch (e) {
        case PairEvidence::Statistics:
            return "statistics";
        case PairEvidence::StatisticsLaneOrder:
            return "statistics_lane_order";
        case PairEvidence::ExplicitPeer:
            return "explicit_peer";
        case PairEvidence::Order:
            return "order";
        case PairEvidence::OrderStatisticsDiffer:
            return "order_statistics_differ";
        case PairEvidence::StageMap:
            return "stage_map";
        case PairEvidence::Ambiguous:
            return "ambiguous";
    }
    return "?";
}

namespace {

std::string lowerAlnum(std::string_view s) {
    std::string out;
    out.reserve(s.size());
    for (char c : s)
        if (std::isalnum(static_cast<unsigned char>(c))) out += char(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

CommKind kindOfToken(std::string_view token) {
    std::string t = lowerAlnum(token);
    if (t.rfind("hcom", 0) == 0) t.erase(0, 4);
    if (t.rfind("mint", 0) == 0) t.erase(0, 4);
    static const std::pair<const char*, CommKind> kTable[] = {
        {"send", CommKind::Send},
        {"isend", CommKind::Send},
        {"receive", CommKind::Receive},
        {"recv", CommKind::Receive},
        {"irecv", CommKind::Receive},
        {"allreduce", CommKind::AllReduce},
        {"allgather", CommKind::AllGather},
        {"allgatherv", CommKind::AllGather},
        {"allgatherintotensor", CommKind::AllGather},
        {"reducescatter", CommKind::ReduceScatter},
        {"reducescatterv", CommKind::ReduceScatter},
        {"reducescattertensor", CommKind::ReduceScatter},
        {"broadcast", CommKind::Broadcast},
        {"alltoall", CommKind::AllToAll},
        {"alltoallv", CommKind::AllToAll},
        {"reduce", CommKind::Reduce},
    };
    for (const auto& [name, kind] : kTable)
        if (t == name) return kind;
    return CommKind::None;
}

// Value of `key` followed by an optional separator and digits, -1 when absent.
int intAfter(std::string_view s, std::string_view key) {
    for (std::size_t pos = s.find(key); pos != std::string_view::npos; pos = s.find(key, pos + 1)) {
        std::size_t i = pos + key.size();
        while (i < s.size() && (s[i] == '=' || s[i] == ':' || s[i] == '_' || s[i] == '-')) ++i;
        if (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) {
            int v = 0;
            while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i])) && v < 1000000)
                v = v * 10 + (s[i++] - '0');
            return v;
        }
    }
    return -1;
}
}  // namespace

CommKind commKindOfType(std::string_view type) { return kindOfToken(type); }

CommKind commKindOfName(std::string_view name) {
    // MindSpore names: "AllReduce-op12"; msprobe: "Distributed.all_reduce.0.forward".
    std::string_view head = name.substr(0, name.find("-op"));
    if (head.find('/') == std::string_view::npos && head.find('.') == std::string_view::npos)
        if (const CommKind k = kindOfToken(head); k != CommKind::None) return k;
    for (std::string_view prefix : {"Distributed.", "MintDistributed."}) {
        if (name.rfind(prefix, 0) == 0) {
            std::string_view rest = name.substr(prefix.size());
            return kindOfToken(rest.substr(0, rest.find('.')));
        }
    }
    return CommKind::None;
}

CommKind p2pKindOfScope(std::string_view scope) {
    if (scope.find("P2POp isend") != std::string_view::npos) return CommKind::Send;
    if (scope.find("P2POp irecv") != std::string_view::npos) return CommKind::Receive;
    return CommKind::None;
}

CommKind classifyComm(std::string_view type, std::string_view name) {
    const CommKind k = commKindOfType(type);
    return k != CommKind::None ? k : commKindOfName(name);
}

bool isBackwardName(std::string_view s) {
    // MindSpore 2.3+ file names spell the scope's '/' as '_': "Gradients_Default_..._gradReceive_Send-op9".
    // The bprop of a pipeline Send is a Receive under "gradSend" and vice versa, wherever the
    // Gradients prefix was cut off.
    return s.find("Gradients/") != std::string_view::npos || s.find(".backward") != std::string_view::npos ||
        s.find("gradients/") != std::string_view::npos || s.starts_with("Gradients_") ||
        s.find("gradReceive") != std::string_view::npos || s.find("gradSend") != std::string_view::npos;
}

namespace {
// The peer rank per key ("dest_rank", "src_rank", "peer_rank", "peer") and "sr_tag" in one
// lower-cased string, and whether it names backward traffic.
struct NameFacts {
    int peer[4] = {-1, -1, -1, -1};
    int tag = -1;
    bool backward = false;
};
NameFacts factsOf(std::string_view s) {
    NameFacts f;
    const std::string text = lower(s);
    const std::string_view keys[4] = {"dest_rank", "src_rank", "peer_rank", "peer"};
    for (int k = 0; k < 4; ++k) f.peer[k] = intAfter(text, keys[k]);
    f.tag = intAfter(text, "sr_tag");
    f.backward = isBackwardName(s);
    return f;
}
}  // namespace

std::vector<CommOp> findCommOps(const DumpIndex& index) {
    std::vector<CommOp> out;
    // classifyComm per op lower-cased two strings for every op: answered once per type and name.
    NameMemo<CommKind> byType(index.strings), byName(index.strings), byScope(index.strings);
    // The peer / tag search per string too. A key never spans name and scope (no '|' in a key,
    // and '|' ends the digits after one), so searching "name|scope" is the name's answer, else
    // the scope's.
    NameMemo<NameFacts> facts(index.strings);
    for (std::uint32_t i = 0; i < index.ops.size(); ++i) {
        const OpRecord& op = index.ops[i];
        CommKind kind = byType.get(op.type, commKindOfType);
        if (kind == CommKind::None) kind = byName.get(op.name, commKindOfName);
        if (kind == CommKind::None && op.scope) kind = byScope.get(op.scope, p2pKindOfScope);
        if (kind == CommKind::None) continue;
        CommOp c;
        c.op = i;
        c.kind = kind;
        const NameFacts n = facts.get(op.name, factsOf), sc = facts.get(op.scope, factsOf);
        for (int k = 0; k < 4; ++k)
            if ((c.explicitPeer = n.peer[k] >= 0 ? n.peer[k] : sc.peer[k]) >= 0) break;
        c.tag = n.tag >= 0 ? n.tag : sc.tag;
        c.backward = n.backward || sc.backward;
        out.push_back(c);
    }
    return out;
}

}  // namespace dl
