#include "core/formats/msprobe/msprobe_call_args.h"

#include <algorithm>
#include <charconv>

#include "core/formats/msprobe/msprobe_dump.h"

namespace dl {
namespace {

bool isIndex(std::string_view s, int& v) {
    const auto r = std::from_chars(s.data(), s.data() + s.size(), v);
    return !s.empty() && r.ec == std::errc() && r.ptr == s.data() + s.size();
}

// "<class 'float'>" -> "float"; tensor rows keep their dtype-free type.
std::string typeOf(const MsprobeArg& a) {
    if (a.tensor >= 0) return "torch.Tensor";
    const std::string& d = a.dtype;
    if (d.starts_with("<class '") && d.ends_with("'>")) return d.substr(8, d.size() - 10);
    return d;
}

}  // namespace

bool readMsprobeCallArgs(const std::string& path, std::string_view entryName, std::vector<MsprobeCallArg>& out,
                         std::string& error) {
    out.clear();
    MsprobeDump dump;
    if (!readMsprobeDumpJson(path, dump, error, true)) {
        error = path + ": " + error;
        return false;
    }
    const auto e = std::find_if(dump.entries.begin(), dump.entries.end(),
                                [&](const MsprobeEntry& x) { return x.name == entryName; });
    if (e == dump.entries.end()) {
        error = path + ": no entry " + std::string(entryName);
        return false;
    }
    // Rows are leaves: "input.1" is argument 1, "input.1.0" the first element of a list argument,
    // "input.other" the keyword argument other (msprobe names input_args and input_kwargs alike).
    for (const MsprobeArg& a : e->args) {
        if (a.state != MsprobeArgState::Input || !a.label.starts_with("input.")) continue;
        const std::string_view rest = std::string_view(a.label).substr(6);
        const auto dot = rest.find('.');
        const std::string_view head = rest.substr(0, dot);
        const bool element = dot != std::string_view::npos;
        int pos = -1;
        const bool positional = isIndex(head, pos);
        auto same = [&](const MsprobeCallArg& c) { return positional ? c.position == pos : c.keyword == head; };
        auto it = std::find_if(out.begin(), out.end(), same);
        if (it == out.end()) {
            MsprobeCallArg c;
            c.position = positional ? pos : -1;
            if (!positional) c.keyword = std::string(head);
            out.push_back(std::move(c));
            it = out.end() - 1;
        }
        MsprobeCallArg& c = *it;
        const MsprobeValue& v = a.stats[0];
        const bool number = a.tensor < 0 && (v.numeric() || v.kind == MsprobeValue::Kind::Bool);
        const double value = v.kind == MsprobeValue::Kind::Bool ? (v.text == "True" ? 1.0 : 0.0) : v.number;
        if (!element) {
            c.type = typeOf(a);
            if (a.tensor >= 0) {
                c.kind = MsprobeCallArg::Kind::Tensor;
                c.tensorSlot = e->tensors[std::size_t(a.tensor)].slot;
            } else if (number) {
                c.kind = MsprobeCallArg::Kind::Number;
                c.numbers = {value};
            } else {
                c.kind = a.dtype == "None" ? MsprobeCallArg::Kind::None : MsprobeCallArg::Kind::Other;
            }
        } else {
            // An element of a list or tuple: a list of numbers stays one; anything else in it
            // (a tensor, a nested list) makes the argument one the replay cannot use ("list", Other).
            const bool flat = rest.find('.', dot + 1) == std::string_view::npos;
            const bool fresh = c.kind == MsprobeCallArg::Kind::Other && c.type.empty();
            if (number && flat && (c.kind == MsprobeCallArg::Kind::List || fresh)) {
                c.kind = MsprobeCallArg::Kind::List;
                c.numbers.push_back(value);
            } else {
                c.kind = MsprobeCallArg::Kind::Other;
                c.numbers.clear();
            }
            c.type = "list";
        }
    }
    std::stable_sort(out.begin(), out.end(), [](const MsprobeCallArg& x, const MsprobeCallArg& y) {
        const bool px = x.position >= 0, py = y.position >= 0;
        if (px != py) return px;
        return px && x.position < y.position;
    });
    return true;
}

}  // namespace dl
