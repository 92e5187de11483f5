// msprobe dump.json: the walk over each entry's JSON (tensors, arguments, labels as msprobe's
// compare names them), the parallel per-entry parse, and stack.json / construct.json. Entry names
// are parsed in msprobe_entry_name.cpp, values printed in msprobe_value_text.cpp.
#include "core/formats/msprobe/msprobe_dump.h"

#include "core/formats/msprobe/msprobe_value_text.h"
#include "core/io/json_members.h"
#include "core/stats/statistic_overflow_bits.h"
#include "core/util/parallel_for.h"
#include "core/util/read_file.h"

#include <simdjson.h>
#include <tbb/blocked_range.h>
#include <tbb/enumerable_thread_specific.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <optional>

namespace dl {
namespace {

using msprobe::noneValue;
using msprobe::numberOf;
using msprobe::pythonShape;
using msprobe::pythonText;
using msprobe::pythonTypeName;
using msprobe::textValue;
using msprobe::valueOf;
using simdjson::dom::element;
using simdjson::dom::element_type;

void setRange(MsprobeTensor& t, bool hasMax, double mx, bool hasMin, double mn) {
    TensorStats& s = t.stats;
    if ((hasMax && std::isnan(mx)) || (hasMin && std::isnan(mn))) {
        s.nanCount = 1;
        s.known |= stat::NanCount;
    }
    if ((hasMax && mx == HUGE_VAL) || (hasMin && mn == HUGE_VAL)) {
        s.posInfCount = 1;
        s.known |= stat::PosInfCount;
    }
    if ((hasMax && mx == -HUGE_VAL) || (hasMin && mn == -HUGE_VAL)) {
        s.negInfCount = 1;
        s.known |= stat::NegInfCount;
    }
    // dump.json has no counts: Max/Min say only that at least one element is NaN or Inf.
    if (s.known & (stat::NanCount | stat::PosInfCount | stat::NegInfCount)) s.known |= stat::NonFiniteLowerBound;
    if (hasMax && std::isfinite(mx)) {
        s.max = mx;
        s.known |= stat::Max;
    }
    if (hasMin && std::isfinite(mn)) {
        s.min = mn;
        s.known |= stat::Min;
    }
    if (s.has(stat::Max | stat::Min)) {
        s.maxAbs = std::max(std::fabs(s.max), std::fabs(s.min));
        s.known |= stat::MaxAbs;
    }
}

// The category msprobe's compare puts before a top-level key's nesting (read_op's
// IO_NAME_MAPPING); keys it does not know keep their own name.
std::string_view categoryOf(std::string_view key) {
    if (key == "input_args" || key == "input_kwargs" || key == "input") return "input";
    return key;  // "output", "parameters", anything newer
}

class EntryWalker {
public:
    EntryWalker(MsprobeEntry& e, bool args) : m_e(e), m_args(args) {}
    MsprobeArgState state = MsprobeArgState::Input;  // of the top-level key being walked

    // `path` is where the value sits in the entry, `label` the name msprobe gives it so far.
    void walk(element v, Io io, std::string& path, std::string& label) {
        switch (v.type()) {
            case element_type::ARRAY: {
                std::size_t i = 0;
                const simdjson::dom::array arr = v.get_array().value_unsafe();  // named: the result temporary dies
                for (element x : arr) {
                    const auto len = path.size(), labelLen = label.size();
                    path += '.';
                    path += std::to_string(i);
                    // op_item_parse: below a parameters_grad name a list adds no index.
                    if (m_e.kind != MsprobeEntryKind::ParamGrad) {
                        if (!label.empty()) label += '.';
                        label += std::to_string(i);
                    }
                    ++i;
                    walk(x, io, path, label);
                    path.resize(len);
                    label.resize(labelLen);
                }
                return;
            }
            case element_type::OBJECT: {
                simdjson::dom::object o = v.get_object().value_unsafe();
                element type, shape, dtype;
                if (!o["type"].get(type) && !o["shape"].get(shape) && !o["dtype"].get(dtype)) {
                    tensor(o, io, path, label);
                    return;
                }
                if (m_args && !o["type"].get(type) && type.is_string())
                    nonTensorArg(o, type.get_string().value_unsafe(), label);
                if (!o["type"].get(type) || !o["class_type"].get(type)) {
                    ++m_e.nonTensorArgs;
                    if (element inner; !o["tensor"].get(inner)) {  // P2POp: {"tensor", "op", "peer", "tag", ...}
                        const auto labelLen = label.size();
                        const std::size_t first = m_e.tensors.size();
                        label += label.empty() ? "tensor" : ".tensor";
                        walk(inner, io, path += ".tensor", label);
                        label.resize(labelLen);
                        std::string_view op;
                        std::int64_t peer = -1, tag = -1;
                        if (o["op"].get(op)) op = {};
                        if (o["peer"].get(peer)) peer = -1;
                        if (o["tag"].get(tag)) tag = -1;
                        for (std::size_t k = first; k < m_e.tensors.size(); ++k) {
                            m_e.tensors[k].p2pOp = std::string(op);
                            m_e.tensors[k].p2pPeer = peer >= 0 && peer < (1 << 24) ? int(peer) : -1;
                            m_e.tensors[k].p2pTag = tag >= 0 && tag < (1 << 24) ? int(tag) : -1;
                        }
                    }
                    return;
                }
                for (auto [key, x] : o) {
                    const auto len = path.size(), labelLen = label.size();
                    path += '.';
                    path.append(key);
                    if (!label.empty()) label += '.';
                    label.append(key);
                    walk(x, io, path, label);
                    path.resize(len);
                    label.resize(labelLen);
                }
                return;
            }
            default:
                ++m_e.nonTensorArgs;                        // null (unsupported object) or a bare value
                if (m_args && v.is_null()) nullArg(label);  // op_item_parse: a row of None; bare values give none
                return;
        }
    }

private:
    void tensor(simdjson::dom::object o, Io io, const std::string& path, const std::string& label) {
        MsprobeTensor t;
        t.io = io;
        t.slot = io == Io::Input ? m_inputs++ : m_outputs++;
        t.path = path;
        bool hasMax = false, hasMin = false, meanInf = false, l2Inf = false;
        double mx = 0, mn = 0, d = 0;
        for (auto [key, x] : o) {
            if (key == "dtype") {
                std::string_view s;
                if (!x.get(s)) {
                    t.dtypeRaw = std::string(s);
                    t.dtype = parseDTypeName(s).value_or(DType::Unknown);
                }
            } else if (key == "shape") {
                simdjson::dom::array a;
                if (!x.get(a))
                    for (element dim : a) {
                        std::int64_t n = 0;
                        if (!dim.get(n)) t.shape.push_back(n);
                    }
            } else if (key == "Max") {
                hasMax = numberOf(x, mx);
            } else if (key == "Min") {
                hasMin = numberOf(x, mn);
            } else if (key == "Mean") {
                if (numberOf(x, d) && std::isfinite(d)) {
                    t.stats.mean = d;
                    t.stats.known |= stat::Mean;
                } else if (std::isinf(d))
                    meanInf = true;
            } else if (key == "Norm") {
                if (numberOf(x, d) && std::isfinite(d)) {
                    t.stats.l2 = d;
                    t.stats.known |= stat::L2;
                } else if (std::isinf(d))
                    l2Inf = true;
            } else if (key == "md5") {
                std::string_view s;
                if (!x.get(s)) t.md5 = std::string(s);
            } else if (key == "data_name") {
                std::string_view s;
                if (!x.get(s)) t.dataName = std::string(s);
            }
        }
        t.label = savedLabel(t.dataName).value_or(label);
        setRange(t, hasMax, mx, hasMin, mn);
        // An inf Mean or Norm beside finite Max and Min: the reduction overflowed, not a value.
        if (t.stats.has(stat::Max | stat::Min) &&
            !(t.stats.known & (stat::NanCount | stat::PosInfCount | stat::NegInfCount))) {
            if (meanInf) t.stats.known |= stat::MeanOverflow;
            if (l2Inf) t.stats.known |= stat::L2Overflow;
        }
        if (m_args) tensorArg(o, t);
        std::uint64_t count = 1;
        for (auto n : t.shape) count *= std::uint64_t(std::max<std::int64_t>(n, 0));
        t.stats.count = count;
        t.stats.known |= stat::Count;
        m_e.tensors.push_back(std::move(t));
    }

    // gen_op_item: a saved tensor's full name is its data_name without the extension. Only names
    // that extend the entry's name are taken (anything else would not join with the entry).
    std::optional<std::string> savedLabel(std::string_view dataName) const {
        const std::string_view entry = m_e.name;
        if (dataName.size() <= entry.size() + 1 || !dataName.starts_with(entry) || dataName[entry.size()] != '.')
            return std::nullopt;
        const std::string_view rest = dataName.substr(entry.size() + 1);
        const auto dot = rest.rfind('.');
        if (dot == std::string_view::npos) return std::nullopt;
        return std::string(rest.substr(0, dot));
    }

    MsprobeArg& newArg(std::string label) {
        MsprobeArg& a = m_e.args.emplace_back();
        a.label = std::move(label);
        a.state = state;
        a.dataName = "-1";
        return a;
    }

    // The fields gen_op_item copies from the dump for every leaf.
    static void commonFields(simdjson::dom::object o, MsprobeArg& a) {
        for (auto [key, x] : o) {
            if (key == "requires_grad") {
                bool b = false;
                if (!x.get(b)) a.requiresGrad = b ? "True" : "False";
            } else if (key == "md5") {
                std::string_view s;
                if (!x.get(s)) a.md5 = std::string(s);
            } else if (key == "data_name") {
                std::string_view s;
                if (!x.get(s) && !s.empty()) a.dataName = std::string(s);
            }
        }
    }

    void tensorArg(simdjson::dom::object o, const MsprobeTensor& t) {
        MsprobeArg& a = newArg(t.label);
        a.tensor = std::int32_t(m_e.tensors.size());  // pushed right after this
        a.dtype = t.dtypeRaw;
        a.shape = pythonShape(t.shape);
        const char* keys[4] = {"Max", "Min", "Mean", "Norm"};
        for (int k = 0; k < 4; ++k) {
            element x;
            a.stats[k] = o[keys[k]].get(x) ? noneValue() : valueOf(x);
            // gen_op_item turns bools (Max of a bool tensor) into their text.
            if (a.stats[k].kind == MsprobeValue::Kind::Bool) a.stats[k].kind = MsprobeValue::Kind::Text;
        }
        commonFields(o, a);
    }

    void nonTensorArg(simdjson::dom::object o, std::string_view type, const std::string& label) {
        MsprobeArg& a = newArg(label);
        element value;
        const bool hasValue = !o["value"].get(value);
        const std::string valueText = hasValue ? pythonText(value) : std::string();
        const std::string_view last = std::string_view(label).substr(label.rfind('.') + 1);
        for (auto& s : a.stats) s = noneValue();
        auto allStats = [&](const MsprobeValue& v) {
            for (auto& s : a.stats) s = v;
        };
        a.dtype = std::string(type);
        a.shape = "[]";
        if (type == "torch.Size") {
            a.shape = hasValue ? valueText : "None";
        } else if (type == "slice") {
            simdjson::dom::array arr;
            a.shape = hasValue && !value.get(arr) ? "(" + std::to_string(arr.size()) + ",)" : "()";
        } else if (type == "ellipsis") {
            allStats(hasValue ? valueOf(value) : noneValue());
        } else if (last == "src" || last == "dst" || last == "group_src" || last == "group_dst") {
            allStats(textValue(hasValue ? valueText : "None"));
            a.md5 = hasValue ? valueText : "None";
        } else if (type == "torch.ProcessGroup") {
            element ranks;
            const std::string r = o["group_ranks"].get(ranks) ? "None" : pythonText(ranks);
            allStats(textValue(r));
            a.md5 = r;
        } else {
            a.dtype = std::string("<class '") + (hasValue ? pythonTypeName(value) : "NoneType") + "'>";
            allStats(hasValue ? valueOf(value) : noneValue());
        }
        const std::string fixedMd5 = a.md5;
        commonFields(o, a);
        if (a.md5.empty()) a.md5 = fixedMd5.empty() ? crc32Text(valueText) : fixedMd5;
        // A non-tensor's bool value stays a bool (not a number to diff).
    }

    void nullArg(const std::string& label) {
        MsprobeArg& a = newArg(label);
        a.dtype = a.shape = "None";
        for (auto& s : a.stats) s = noneValue();
    }

    MsprobeEntry& m_e;
    bool m_args = false;
    std::uint16_t m_inputs = 0, m_outputs = 0;
};

void readEntry(std::string_view name, element value, MsprobeEntry& e, bool withArgs) {
    e.name = std::string(name);
    parseMsprobeEntryName(name, e);
    EntryWalker w(e, withArgs);
    struct Sorted {  // msprobe's table order (reorder_op_name_list), stable within a state
        MsprobeEntry& e;
        ~Sorted() {
            std::stable_sort(e.args.begin(), e.args.end(),
                             [](const MsprobeArg& x, const MsprobeArg& y) { return x.state < y.state; });
        }
    } sorted{e};
    std::string path, label;
    simdjson::dom::object o;
    if (value.get(o)) {  // debug entries may be a bare tensor or value
        w.walk(value, Io::Output, path, label);
        return;
    }
    element type;
    if (!o["type"].get(type)) {  // debug level: the value itself is the tensor
        w.walk(value, Io::Output, path, label);
        return;
    }
    const bool bare = e.kind == MsprobeEntryKind::ParamGrad || e.kind == MsprobeEntryKind::Debug;
    for (auto [key, x] : o) {
        path.assign(key);
        // parameters_grad ({param: [tensor]}) and debug entries are named from their keys down.
        label.assign(bare ? key : categoryOf(key));
        if (key == "is_recompute") {
            bool b = false;
            if (!x.get(b)) e.isRecompute = b;
        } else if (key == "input_args" || key == "input_kwargs" || key == "parameters" || key == "input") {
            w.state = key == "parameters" ? MsprobeArgState::Parameters : MsprobeArgState::Input;
            w.walk(x, Io::Input, path, label);
        } else {  // "output", parameters_grad's {param: [tensor]}, anything newer
            w.state = e.kind == MsprobeEntryKind::ParamGrad ? MsprobeArgState::ParamGrad
                : e.kind == MsprobeEntryKind::Debug         ? MsprobeArgState::Input
                                                            : MsprobeArgState::Output;
            w.walk(x, Io::Output, path, label);
        }
        path.clear();
    }
}

std::string_view stringOr(element v, std::string_view fallback) {
    std::string_view s;
    return v.get(s) ? fallback : s;
}

bool parseDoc(simdjson::dom::parser& parser, std::string& text, element& doc, std::string& error) {
    neutralizeNonFiniteTokens(text.data(), text.size());
    if (auto err = parser.parse(text.data(), text.size()).get(doc)) {
        error = std::string("not valid JSON: ") + simdjson::error_message(err);
        return false;
    }
    return true;
}

}  // namespace

std::size_t neutralizeNonFiniteTokens(char* s, std::size_t n) {
    // Python's json.dump escapes control characters, so quotes are the only string delimiters;
    // the string state is advanced with memchr only up to each candidate token.
    char* p = s;
    char* const end = s + n;
    char* scanned = s;
    bool inString = false;
    std::size_t rewritten = 0;
    // Each token's next occurrence is searched again only once the scan has passed it: a file
    // with thousands of one token and none of the other stays linear.
    const auto find = [&](const char* token, std::size_t len) {
        return static_cast<char*>(memmem(p, std::size_t(end - p), token, len));
    };
    char* nan = find("NaN", 3);
    char* inf = find("Infinity", 8);
    while (p < end) {
        if (nan && nan < p) nan = find("NaN", 3);
        if (inf && inf < p) inf = find("Infinity", 8);
        char* hit = !nan ? inf : !inf ? nan : std::min(nan, inf);
        if (!hit) break;
        while (char* q = static_cast<char*>(std::memchr(scanned, '"', std::size_t(hit - scanned)))) {
            std::size_t slashes = 0;
            for (char* b = q - 1; b >= s && *b == '\\'; --b) ++slashes;
            if (slashes % 2 == 0) inString = !inString;
            scanned = q + 1;
        }
        scanned = hit;
        if (inString) {
            p = hit + 1;
            continue;
        }
        if (*hit == 'N') {
            std::memcpy(hit, "\"N\"", 3);
            p = hit + 3;
        } else if (hit > s && hit[-1] == '-') {
            std::memcpy(hit - 1, "\"-Infnty\"", 9);
            p = hit + 8;
        } else {
            std::memcpy(hit, "\"Infnty\"", 8);
            p = hit + 8;
        }
        scanned = p;
        ++rewritten;
    }
    return rewritten;
}

namespace {

void readTopField(std::string_view key, std::string_view value, MsprobeDump& out) {
    if (key == "task")
        out.task = std::string(value);
    else if (key == "level")
        out.level = std::string(value);
    else if (key == "framework")
        out.framework = std::string(value);
    else if (key == "dump_data_dir")
        out.dumpDataDir = std::string(value);
}

// Parses text[b, e) on its own. The bytes after e belong to the same buffer, so simdjson may read
// its padding there instead of copying the value, except near the end of the text.
simdjson::error_code parseSpan(simdjson::dom::parser& parser, const std::string& text, std::size_t b, std::size_t e,
                               element& out) {
    const bool copy = e + simdjson::SIMDJSON_PADDING > text.size();
    return parser.parse(text.data() + b, e - b, copy).get(out);
}

// The fast path: split the document into its members and every entry of "data", then parse each
// entry alone (in parallel, one small parser per thread). False when the text does not split
// cleanly or an entry does not parse; the caller then parses the whole document for the error.
bool parseByEntries(const std::string& text, MsprobeDump& out, bool withArgs) {
    std::vector<JsonMember> top, entries;
    std::size_t end = 0;
    if (!splitJsonObject(text, 0, top, end) || text.find_first_not_of(" \t\r\n", end) != std::string::npos)
        return false;
    const JsonMember* data = nullptr;
    simdjson::dom::parser parser;
    for (const JsonMember& m : top) {
        if (m.rawKey == "data") {
            data = &m;
            continue;
        }
        element v;
        std::string_view str;
        if (!parseSpan(parser, text, m.valueBegin, m.valueEnd, v) && !v.get(str)) readTopField(m.rawKey, str, out);
    }
    if (!data || !splitJsonObject(text, data->valueBegin, entries, end)) return false;
    out.entries.resize(entries.size());
    tbb::enumerable_thread_specific<simdjson::dom::parser> parsers;
    std::atomic<bool> ok{true};
    parallelFor(tbb::blocked_range<std::size_t>(0, entries.size(), 256), [&](const tbb::blocked_range<std::size_t>& r) {
        simdjson::dom::parser& local = parsers.local();
        std::string key;
        for (std::size_t i = r.begin(); i != r.end() && ok; ++i) {
            const JsonMember& m = entries[i];
            key.assign(m.rawKey);
            if (key.find('\\') != std::string::npos) {  // escaped name: let simdjson unescape it
                element k;
                std::string_view unescaped;
                if (local.parse("\"" + key + "\"").get(k) || k.get(unescaped)) {
                    ok = false;
                    return;
                }
                key.assign(unescaped);
            }
            element v;
            if (parseSpan(local, text, m.valueBegin, m.valueEnd, v)) {
                ok = false;
                return;
            }
            readEntry(key, v, out.entries[i], withArgs);
        }
    });
    return ok;
}

}  // namespace

bool parseMsprobeDumpJson(std::string& text, MsprobeDump& out, std::string& error, bool withArguments) {
    out = MsprobeDump();
    neutralizeNonFiniteTokens(text.data(), text.size());
    if (parseByEntries(text, out, withArguments)) return true;
    // Malformed somewhere: parse the whole document, which names the error (or, for a valid
    // document the splitter refused, reads it the slow way).
    out = MsprobeDump();
    simdjson::dom::parser parser;
    element doc;
    if (!parseDoc(parser, text, doc, error)) return false;
    simdjson::dom::object top, data;
    if (doc.get(top)) {
        error = "dump.json is not a JSON object";
        return false;
    }
    if (top["data"].get(data)) {
        error = "dump.json has no \"data\" object";
        return false;
    }
    for (auto [key, v] : top) readTopField(key, stringOr(v, ""), out);
    out.entries.reserve(data.size());
    for (auto [key, v] : data) {
        out.entries.emplace_back();
        readEntry(key, v, out.entries.back(), withArguments);
    }
    return true;
}

bool readMsprobeDumpJson(const std::string& path, MsprobeDump& out, std::string& error, bool withArguments) {
    std::string text;
    return readFileText(path, text, error) && parseMsprobeDumpJson(text, out, error, withArguments);
}

bool parseMsprobeStackFrames(std::string& text, std::unordered_map<std::string, std::vector<std::string>>& out,
                             std::string& error) {
    simdjson::dom::parser parser;
    element doc;
    if (!parseDoc(parser, text, doc, error)) return false;
    simdjson::dom::object top;
    if (doc.get(top)) {
        error = "stack.json is not a JSON object";
        return false;
    }
    auto framesOf = [](simdjson::dom::array frames) {
        std::vector<std::string> v;
        for (element f : frames) {
            std::string_view line;
            if (!f.get(line)) v.emplace_back(line);
        }
        return v;
    };
    for (auto [key, v] : top) {
        simdjson::dom::array a, names, frames;
        if (v.get(a)) continue;
        // New form: {"0": [[names...], [frames...]]}; old form: {"name": [frames...]}.
        if (a.size() == 2 && !a.at(0).get(names) && !a.at(1).get(frames)) {
            const std::vector<std::string> stack = framesOf(frames);
            for (element nm : names) {
                std::string_view s;
                if (!nm.get(s)) out[std::string(s)] = stack;
            }
        } else {
            out[std::string(key)] = framesOf(a);
        }
    }
    return true;
}

bool parseMsprobeStackJson(std::string& text, std::unordered_map<std::string, std::string>& out, std::string& error) {
    std::unordered_map<std::string, std::vector<std::string>> frames;
    if (!parseMsprobeStackFrames(text, frames, error)) return false;
    for (auto& [name, v] : frames) {
        std::string s;
        for (const std::string& f : v) s += (s.empty() ? "" : "\n") + f;
        out.insert_or_assign(name, std::move(s));
    }
    return true;
}

bool parseMsprobeConstructJson(std::string& text, std::unordered_map<std::string, std::string>& out,
                               std::string& error) {
    simdjson::dom::parser parser;
    element doc;
    if (!parseDoc(parser, text, doc, error)) return false;
    simdjson::dom::object top;
    if (doc.get(top)) {
        error = "construct.json is not a JSON object";
        return false;
    }
    for (auto [key, v] : top) {
        std::string_view parent;
        if (!v.get(parent) && !parent.empty()) out[std::string(key)] = std::string(parent);
    }
    return true;
}

}  // namespace dl
