#include "core/formats/mindspore/dump_metadata.h"
#include "core/io/json_number.h"
#include "core/util/read_file.h"

#include <algorithm>
#include <charconv>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

namespace dl {
namespace {

using nlohmann::json;

bool parseDoc(std::string_view text, json& doc, const char* what, std::string& error) {
    doc = json::parse(text.begin(), text.end(), nullptr, false);
    if (doc.is_discarded()) {
        error = std::string(what) + ": not valid JSON";
        return false;
    }
    if (!doc.is_object()) {
        error = std::string(what) + ": top level is not an object";
        return false;
    }
    return true;
}

std::string asText(const json& v) {
    if (v.is_string()) return v.get<std::string>();
    if (v.is_null()) return {};
    return v.dump();
}

struct Fields {
    const json& obj;
    const char* section;
    std::string& error;

    const json* find(const char* key) const {
        auto it = obj.find(key);
        return it == obj.end() ? nullptr : &*it;
    }
    bool integer(const char* key, int& dst) const {
        const json* v = find(key);
        if (!v) return true;
        std::uint64_t u = 0;
        if (!jsonUnsigned(*v, u) || u > 1000000) return bad(key, "an unsigned number");
        dst = int(u);
        return true;
    }
    bool text(const char* key, std::string& dst) const {
        const json* v = find(key);
        if (!v) return true;
        if (!v->is_string() && !v->is_number_unsigned() && !v->is_number_integer()) return bad(key, "a string");
        dst = asText(*v);
        return true;
    }
    bool boolean(const char* key, std::optional<bool>& dst) const {
        const json* v = find(key);
        if (!v) return true;
        if (v->is_boolean())
            dst = v->get<bool>();
        else if (v->is_number_integer())
            dst = v->get<std::int64_t>() != 0;
        else
            return bad(key, "a boolean");
        return true;
    }
    bool strings(const char* key, std::vector<std::string>& dst) const {
        const json* v = find(key);
        if (!v) return true;
        if (!v->is_array()) return bad(key, "a list");
        for (const json& e : *v) {
            if (!e.is_string()) return bad(key, "a list of strings");
            dst.push_back(e.get<std::string>());
        }
        return true;
    }
    bool bad(const char* key, const char* want) const {
        error = std::string("dump config: ") + section + "." + key + " is not " + want;
        return false;
    }
};

bool readCommon(const json& c, DumpConfig& out, std::string& error) {
    Fields f{c, "common_dump_settings", error};
    if (!f.integer("dump_mode", out.dumpMode) || !f.text("path", out.path) || !f.text("net_name", out.netName) ||
        !f.text("iteration", out.iteration) || !f.text("saved_data", out.savedData) ||
        !f.integer("input_output", out.inputOutput) || !f.integer("op_debug_mode", out.opDebugMode) ||
        !f.text("file_format", out.fileFormat) || !f.strings("statistic_category", out.statisticCategory) ||
        !f.strings("kernels", out.kernels))
        return false;
    if (const json* v = f.find("support_device")) {
        if (!v->is_array()) return f.bad("support_device", "a list");
        for (const json& e : *v) {
            std::uint64_t d = 0;
            if (!jsonUnsigned(e, d) || d > 0xffffffffu) return f.bad("support_device", "a list of device ids");
            out.supportDevice.push_back(std::uint32_t(d));
        }
    }
    if (out.savedData.empty()) out.savedData = "tensor";
    return true;
}

bool addRank(const json& rankId, RankTableEntry e, std::vector<RankTableEntry>& out, std::string& error) {
    std::uint64_t r = 0;
    if (!jsonUnsigned(rankId, r) || r > 0xffffffffu) {
        error = "rank table: rank_id '" + asText(rankId) + "' is not a number";
        return false;
    }
    e.rank = std::uint32_t(r);
    out.push_back(std::move(e));
    return true;
}

std::string field(const json& o, const char* key) {
    auto it = o.find(key);
    return it == o.end() ? std::string() : asText(*it);
}

bool serverList(const json& list, std::vector<RankTableEntry>& out, std::string& error) {
    for (const json& server : list) {
        if (!server.is_object()) continue;
        std::string host = field(server, "host_nic_ip");
        if (host.empty()) host = field(server, "host_ip");
        auto devs = server.find("device");
        if (devs == server.end() || !devs->is_array()) continue;
        for (const json& d : *devs) {
            if (!d.is_object() || !d.contains("rank_id")) continue;
            RankTableEntry e{0, field(server, "server_id"), host, field(d, "device_id"), field(d, "device_ip"), {}};
            if (!addRank(d["rank_id"], std::move(e), out, error)) return false;
        }
    }
    return true;
}

bool groupList(const json& list, std::vector<RankTableEntry>& out, std::string& error) {
    for (const json& g : list) {
        if (!g.is_object()) continue;
        auto inst = g.find("instance_list");
        if (inst == g.end() || !inst->is_array()) continue;
        for (const json& i : *inst) {
            if (!i.is_object() || !i.contains("rank_id")) continue;
            RankTableEntry e{0, field(i, "server_id"), {}, {}, {}, field(g, "group_name")};
            if (auto devs = i.find("devices");
                devs != i.end() && devs->is_array() && !devs->empty() && devs->front().is_object()) {
                e.deviceId = field(devs->front(), "device_id");
                e.deviceIp = field(devs->front(), "device_ip");
            }
            if (!addRank(i["rank_id"], std::move(e), out, error)) return false;
        }
    }
    return true;
}

}  // namespace

bool parseMsRunConfig(std::string_view text, MsRunConfig& out, std::string& error) {
    out = MsRunConfig{};
    json doc;
    if (!parseDoc(text, doc, "config.json", error)) return false;
    out.deviceTarget = field(doc, "device_target");
    out.msVersion = field(doc, "ms_version");
    if (out.deviceTarget.empty() && out.msVersion.empty()) {
        error = "config.json: neither device_target nor ms_version";
        return false;
    }
    return true;
}

bool parseDumpConfig(std::string_view text, DumpConfig& out, std::string& error) {
    out = DumpConfig{};
    json doc;
    if (!parseDoc(text, doc, "dump config", error)) return false;
    auto common = doc.find("common_dump_settings");
    if (common == doc.end() || !common->is_object()) {
        error = "dump config: no common_dump_settings object";
        return false;
    }
    if (!readCommon(*common, out, error)) return false;
    if (auto e2e = doc.find("e2e_dump_settings"); e2e != doc.end() && e2e->is_object()) {
        out.hasE2eSection = true;
        Fields f{*e2e, "e2e_dump_settings", error};
        if (!f.boolean("enable", out.e2eEnable) || !f.boolean("trans_flag", out.transFlag) ||
            !f.text("stat_calc_mode", out.statCalcMode))
            return false;
    }
    if (auto as = doc.find("async_dump_settings"); as != doc.end() && as->is_object()) {
        out.hasAsyncSection = true;
        Fields f{*as, "async_dump_settings", error};
        int mode = -1;
        if (!f.boolean("enable", out.asyncEnable) || !f.integer("op_debug_mode", mode)) return false;
        if (out.opDebugMode < 0) out.opDebugMode = mode;  // <=1.2 kept it here
    }
    return true;
}

bool parseRankTable(std::string_view text, std::vector<RankTableEntry>& out, std::string& error) {
    out.clear();
    json doc;
    if (!parseDoc(text, doc, "rank table", error)) return false;
    auto servers = doc.find("server_list");
    auto groups = doc.find("group_list");
    const bool hasServers = servers != doc.end() && servers->is_array();
    const bool hasGroups = groups != doc.end() && groups->is_array();
    if (!hasServers && !hasGroups) {
        error = "rank table: neither server_list nor group_list";
        return false;
    }
    if (hasServers && !serverList(*servers, out, error)) return false;
    if (out.empty() && hasGroups && !groupList(*groups, out, error)) return false;
    std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.rank < b.rank; });
    return true;
}

bool readSmallTextFile(const std::string& path, std::string& text, std::string& error, std::size_t maxBytes) {
    return readFileText(path, text, error, maxBytes);
}

}  // namespace dl
