#include "core/formats/mindspore/dump_file_name.h"

#include <algorithm>
#include <charconv>
#include <limits>

namespace dl {
namespace {

using Tokens = std::vector<std::string_view>;

Tokens splitDots(std::string_view s) {
    Tokens out;
    std::size_t start = 0;
    for (;;) {
        std::size_t dot = s.find('.', start);
        out.push_back(s.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start));
        if (dot == std::string_view::npos) break;
        start = dot + 1;
    }
    return out;
}

bool allDigits(std::string_view s) {
    return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

template <class T>
bool parseUnsigned(std::string_view s, T& out) {
    if (!allDigits(s)) return false;
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
    return ec == std::errc() && p == s.data() + s.size();
}

bool parseIo(std::string_view s, Io& io) {
    if (s == "input") {
        io = Io::Input;
        return true;
    }
    if (s == "output") {
        io = Io::Output;
        return true;
    }
    return false;
}

std::string join(const Tokens& t, std::size_t from, std::size_t to) {  // [from, to)
    std::string s;
    for (std::size_t i = from; i < to; ++i) {
        if (i > from) s += '.';
        s += t[i];
    }
    return s;
}

bool fail(DumpFileName& out, std::string reason) {
    DumpFileName blank;
    blank.reason = std::move(reason);
    out = std::move(blank);
    return false;
}

// A scoped op name ("Default_..._Add-op3", "Add-op3") as opposed to a primitive type ("Add").
bool looksLikeOpName(std::string_view s) {
    if (s.starts_with("Default_") || s.starts_with("Gradients_") || s.starts_with("Default--")) return true;
    std::size_t p = s.rfind("-op");
    return p != std::string_view::npos && allDigits(s.substr(p + 3));
}

// Fills type, name and ids from the raw-name prefix `p` (tokens before io):
// 5-field {type}.{name...}.{task}.{stream}.{ts} or 4-field {type}.{name}.{task}.{ts}.
bool parseRawPrefix(const Tokens& p, DumpFileName& out, std::string& why) {
    const std::size_t n = p.size();
    if (n < 4) {
        why = "fewer than 4 name fields before the tensor suffix";
        return false;
    }
    const bool five = n >= 5 && allDigits(p[n - 3]);
    std::size_t nameEnd = five ? n - 3 : n - 2;
    if (!five && n != 4) {
        why = "task id field is not a number";
        return false;
    }
    std::uint64_t task = 0, stream = 0;
    if (!parseUnsigned(p[nameEnd], task) || task > std::numeric_limits<std::uint32_t>::max()) {
        why = "task id '" + std::string(p[nameEnd]) + "' is not a 32-bit number";
        return false;
    }
    if (five && (!parseUnsigned(p[n - 2], stream) || stream > std::numeric_limits<std::uint32_t>::max())) {
        why = "stream id '" + std::string(p[n - 2]) + "' is not a 32-bit number";
        return false;
    }
    std::uint64_t ts = 0;
    if (!parseUnsigned(p[n - 1], ts) || ts > std::uint64_t(std::numeric_limits<std::int64_t>::max())) {
        why = "timestamp '" + std::string(p[n - 1]) + "' is not a number";
        return false;
    }
    if (p[0].empty() || nameEnd <= 1) {
        why = "empty op type or op name";
        return false;
    }
    out.opType = std::string(p[0]);
    out.opName = join(p, 1, nameEnd);
    if (out.opName.empty()) {
        why = "empty op name";
        return false;
    }
    out.taskId = std::uint32_t(task);
    out.streamId = std::uint32_t(stream);
    out.timestampUs = std::int64_t(ts);
    out.hasIds = true;
    out.hasStream = five;
    return true;
}

// "32x256x13x13" (msaccucmp shape field) -> dims.
bool parseXShape(std::string_view s, std::vector<std::int64_t>& dims) {
    dims.clear();
    std::size_t start = 0;
    for (;;) {
        std::size_t x = s.find('x', start);
        std::string_view d = s.substr(start, x == std::string_view::npos ? std::string_view::npos : x - start);
        std::int64_t v = 0;
        if (!parseUnsigned(d, v)) return false;
        dims.push_back(v);
        if (x == std::string_view::npos) return true;
        start = x + 1;
    }
}

void setDtype(DumpFileName& out, std::string_view raw) {
    out.dtypeRaw = std::string(raw);
    out.dtype = raw.empty() ? DType::Unknown : parseDTypeName(raw).value_or(DType::Unknown);
}

// Tensor names ending in {io}.{slot}.{format}[.{dtype}] (with or without .npy), or msaccucmp's
// {io}.{slot}[.{shape}].npy. `t` are the dot tokens of the name without extension.
bool parseTensorName(const Tokens& t, bool npy, DumpFileName& out) {
    const std::size_t n = t.size();
    // Locate io from the right: -4 (with dtype), -3 (8-field or msaccucmp shape), -2 (msaccucmp bare).
    std::size_t ioPos = 0;
    for (std::size_t back : {4u, 3u, 2u}) {
        Io io;
        if (n > back && parseIo(t[n - back], io) && (npy || back == 4 || back == 3)) {
            ioPos = n - back;
            break;
        }
    }
    if (ioPos == 0) return fail(out, "no input/output field where the name grammar puts it");
    DumpFileName r;
    parseIo(t[ioPos], r.io);
    r.hasIo = true;
    if (!parseUnsigned(t[ioPos + 1], r.slot))
        return fail(out, "slot '" + std::string(t[ioPos + 1]) + "' is not a number");
    const std::size_t rest = n - ioPos - 2;  // fields after the slot
    Tokens prefix(t.begin(), t.begin() + std::ptrdiff_t(ioPos));
    std::string why;
    if (!parseRawPrefix(prefix, r, why)) return fail(out, why);
    r.kind = npy ? DumpFileKind::MindSporeNpy : DumpFileKind::NamedRaw;
    if (rest >= 1) {
        std::string_view f = t[ioPos + 2];
        if (rest == 1 && npy && allDigits(f.substr(0, 1)) && parseXShape(f, r.shape)) {
            r.hasShape = true;  // msaccucmp: the field after the slot is the shape, not a format
            r.kind = DumpFileKind::ConvertedNpy;
        } else {
            if (f.empty()) return fail(out, "empty format field");
            r.format = std::string(f);
        }
    } else {
        r.kind = DumpFileKind::ConvertedNpy;
    }
    // Only msaccucmp output of a <=1.2 raw file can lack the stream id; MindSpore always writes it.
    if (!r.hasStream && r.kind != DumpFileKind::ConvertedNpy) return fail(out, "no stream id before the timestamp");
    if (rest == 2) setDtype(r, t[ioPos + 3]);  // may be empty ("..npy"): dtype outside MindSpore's map
    if (r.opType == "Opdebug") r.kind = DumpFileKind::OpdebugNpy;
    out = std::move(r);
    return true;
}

bool parseOpdebug(const Tokens& t, bool json, DumpFileName& out) {
    // Opdebug.Node_OpDebug.{task}.{stream}.{ts}[.output.{slot}]
    const std::size_t want = json ? 7 : 5;
    if (t.size() != want)
        return fail(out, "Opdebug name has " + std::to_string(t.size()) + " fields, expected " + std::to_string(want));
    DumpFileName r;
    std::string why;
    if (!parseRawPrefix(Tokens(t.begin(), t.begin() + 5), r, why)) return fail(out, why);
    if (!r.hasStream) return fail(out, "Opdebug name without stream id");
    if (json) {
        if (!parseIo(t[5], r.io) || !parseUnsigned(t[6], r.slot))
            return fail(out, "Opdebug json name does not end in {io}.{slot}.json");
        r.hasIo = true;
    }
    r.kind = json ? DumpFileKind::OpdebugJson : DumpFileKind::OpdebugRaw;
    out = std::move(r);
    return true;
}

bool parseCannRaw(const Tokens& t, DumpFileName& out) {
    if (t.size() != 5 && t.size() != 4)
        return fail(
            out,
            "no extension and " + std::to_string(t.size()) + " dot fields (a CANN raw name has 5, or 4 before 1.3)");
    DumpFileName r;
    std::string why;
    if (!parseRawPrefix(t, r, why)) return fail(out, why);
    // aclnn (MindSpore 2.3 O0/O1 async) writes {op_name}.{op_type}...; undo the swap when evident.
    if (looksLikeOpName(r.opType) && !looksLikeOpName(r.opName)) {
        std::swap(r.opType, r.opName);
        r.typeNameSwapped = true;
    }
    r.kind = DumpFileKind::CannRaw;
    out = std::move(r);
    return true;
}

// Splits "{name}_{input|output}_{i}_shape_{dims...}_{DType}_{format}.bin" from the right.
bool parseBin(std::string_view stem, DumpFileName& out) {
    std::size_t sh = stem.rfind("_shape_");
    if (sh == std::string_view::npos) return fail(out, ".bin name without _shape_");
    std::string_view head = stem.substr(0, sh), tail = stem.substr(sh + 7);
    DumpFileName r;
    std::size_t u = head.rfind('_');
    if (u == std::string_view::npos || !parseUnsigned(head.substr(u + 1), r.slot))
        return fail(out, ".bin name: no slot before _shape_");
    head = head.substr(0, u);
    u = head.rfind('_');
    if (u == std::string_view::npos || !parseIo(head.substr(u + 1), r.io))
        return fail(out, ".bin name: no input/output before the slot");
    r.hasIo = true;
    r.opName = std::string(head.substr(0, u));
    if (r.opName.empty()) return fail(out, ".bin name: empty op name");
    // Dims are the leading all-digit tokens, then DType (no '_'), then the format (may hold '_').
    std::size_t pos = 0;
    std::string_view tok;
    for (;;) {
        std::size_t e = tail.find('_', pos);
        if (e == std::string_view::npos) return fail(out, ".bin name: missing dtype or format after the shape");
        tok = tail.substr(pos, e - pos);
        pos = e + 1;
        std::int64_t d = 0;
        if (!allDigits(tok)) break;
        if (!parseUnsigned(tok, d)) return fail(out, ".bin name: shape dim out of range");
        r.shape.push_back(d);
    }
    if (r.shape.empty()) return fail(out, ".bin name: no shape dims");
    if (r.shape.size() == 1 && r.shape[0] == 0) r.shape.clear();  // MindSpore writes scalars as shape_0
    r.hasShape = true;
    auto dt = parseDTypeName(tok);
    if (!dt) return fail(out, ".bin name: unknown dtype '" + std::string(tok) + "'");
    r.dtype = *dt;
    r.dtypeRaw = std::string(tok);
    r.format = std::string(tail.substr(pos));
    if (r.format.empty()) return fail(out, ".bin name: empty format");
    // Type from the short name "Conv2D-op308"; parameters ("conv2.bias") have no -opN suffix.
    std::string_view shortName = r.opName;
    if (std::size_t d = shortName.rfind("--"); d != std::string_view::npos) shortName = shortName.substr(d + 2);
    std::size_t op = shortName.rfind("-op");
    r.opType = (op != std::string_view::npos && op > 0 && allDigits(shortName.substr(op + 3)))
        ? std::string(shortName.substr(0, op))
        : std::string("Parameter");
    r.kind = DumpFileKind::MindSporeBin;
    out = std::move(r);
    return true;
}

}  // namespace

std::string_view dumpFileKindName(DumpFileKind k) {
    switch (k) {
        case DumpFileKind::Unknown:
            return "unknown";
        case DumpFileKind::MindSporeNpy:
            return "mindspore-npy";
        case DumpFileKind::ConvertedNpy:
            return "converted-npy";
        case DumpFileKind::NamedRaw:
            return "named-raw";
        case DumpFileKind::CannRaw:
            return "cann-raw";
        case DumpFileKind::OpdebugRaw:
            return "opdebug-raw";
        case DumpFileKind::OpdebugJson:
            return "opdebug-json";
        case DumpFileKind::OpdebugNpy:
            return "opdebug-npy";
        case DumpFileKind::MindSporeBin:
            return "mindspore-bin";
        case DumpFileKind::Mapped:
            return "mapped";
    }
    return "unknown";
}

bool parseDumpFileName(std::string_view name, DumpFileName& out) {
    if (name.empty()) return fail(out, "empty file name");
    if (name.find('/') != std::string_view::npos || name.find('\0') != std::string_view::npos)
        return fail(out, "not a bare file name");
    if (name.size() > 4096) return fail(out, "file name too long");
    std::string_view stem = name;
    std::string_view ext;
    for (std::string_view e : {".npy", ".json", ".bin"})
        if (name.size() > e.size() && name.ends_with(e)) {
            ext = e;
            stem = name.substr(0, name.size() - e.size());
        }
    if (ext == ".bin") return parseBin(stem, out);

    Tokens t = splitDots(stem);
    if (allDigits(t[0])) {  // long-name replacement (MindSpore 1.8+, CANN, msprobe)
        DumpFileName r;
        r.kind = DumpFileKind::Mapped;
        r.mappedKey = std::string(t[0]);
        out = std::move(r);
        return true;
    }
    if (t[0] == "Opdebug") {
        if (ext == ".json") return parseOpdebug(t, true, out);
        if (ext.empty()) return parseOpdebug(t, false, out);
    }
    if (ext == ".json") return fail(out, "json file that is not an Opdebug record (kernel args or config)");
    if (ext == ".npy") return parseTensorName(t, true, out);
    // No extension: a CANN raw name, or the full tensor grammar written raw (msprobe L2).
    if (t.size() > 5) {
        if (parseTensorName(t, false, out)) return true;
        return false;
    }
    return parseCannRaw(t, out);
}

std::string binNameToScope(std::string_view s) {
    std::string out;
    out.reserve(s.size());
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (s[i] == '-' && i + 1 < s.size() && s[i + 1] == '-') {
            out += '/';
            ++i;
        } else
            out += s[i];
    }
    return out;
}

}  // namespace dl
