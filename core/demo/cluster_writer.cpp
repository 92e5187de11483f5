#include "core/demo/cluster_writer.h"

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "core/demo/demo_file_names.h"
#include "core/formats/mindspore/statistic_csv_writer.h"
#include "core/io/npy_writer.h"

namespace dl::demo {

namespace fs = std::filesystem;

namespace {

const std::vector<std::string> kCategories = {
    "max", "min", "avg", "nan count", "negative inf count", "positive inf count", "l2norm"};
constexpr int kDevicesPerServer = 4;

class Writer {
public:
    Writer(const ClusterTrace& t, const ClusterWriteOptions& o) : m_t(t), m_o(o) {}

    bool text(const std::string& path, const std::string& body, std::string& error) {
        std::ofstream f(path, std::ios::binary | std::ios::trunc);
        f << body;
        if (!f) {
            error = "cannot write " + path;
            return false;
        }
        ++files;
        return true;
    }

    bool iteration(const std::string& dir, int rank, int it, std::string& error) {
        StatisticCsvWriter csv(StatCsvStyle::Ms23Plus, kCategories);
        if (!csv.valid(error)) return false;
        std::string stats = csv.header() + "\n", mapping;
        std::size_t rows = 0;
        for (const ClusterOp& op : m_t.ops) {
            if (op.rank != rank || op.iteration != it) continue;
            if (m_o.overflowOnly &&
                (!op.badOutput || op.kind == ClusterOpKind::Send || op.kind == ClusterOpKind::Receive ||
                 op.kind == ClusterOpKind::Collective))
                continue;
            const std::uint32_t stream = op.stream == StreamKind::Comm ? 1 : 0;
            std::size_t idx = 0;
            for (int isOut = 0; isOut < 2; ++isOut) {
                const auto& list = isOut ? op.outputs : op.inputs;
                for (std::size_t s = 0; s < list.size(); ++s, ++idx) {
                    const DemoTensor& tensor = *list[s];
                    const std::int64_t ts = m_o.timestamps ? op.tensorTimestampUs.at(idx) : 0;
                    const DType stored = storedType(tensor.dtype);
                    std::string payload;
                    if (!encodeFloats(tensor.v, stored, payload, error)) return false;
                    if (m_o.writeTensors) {
                        std::string name = op.type + "." + fileKernelName(op.fullName) + ".0." +
                            std::to_string(stream) + "." + std::to_string(ts) + "." + (isOut ? "output" : "input") +
                            "." + std::to_string(s) + ".DefaultFormat." + std::string(dtypeName(tensor.dtype)) + ".npy";
                        if (name.size() > 255) {  // NAME_MAX: MindSpore writes a numeric name + mapping.csv
                            const std::string mapped =
                                std::to_string(1000000007ull * (files + 1) % 9999999967ull) + ".npy";
                            mapping += mapped + "," + name + "\n";
                            name = mapped;
                        }
                        if (!writeNpyFile(dir + "/" + name, stored, tensor.shape, payload, error)) return false;
                        ++files;
                    }
                    StatCsvRow row{op.type,
                                   fileKernelName(op.fullName),
                                   0,
                                   stream,
                                   ts,
                                   isOut != 0,
                                   std::uint32_t(s),
                                   payload.size(),
                                   std::string(dtypeName(tensor.dtype)),
                                   tensor.shape};
                    stats += csv.row(row, tensor.v) + "\n";
                    ++rows;
                }
            }
        }
        if (m_o.overflowOnly && rows == 0) return true;  // nothing overflowed here: nothing dumped
        if (m_o.tornLastRow && it == m_t.iterations - 1 && rows > 0) {
            const std::size_t lineStart = stats.rfind('\n', stats.size() - 2) + 1;
            stats.resize(lineStart + (stats.size() - lineStart) / 2);
        }
        if (!text(dir + "/statistic.csv", stats, error)) return false;
        return mapping.empty() || text(dir + "/mapping.csv", mapping, error);
    }

    std::string dataDumpJson() const {
        nlohmann::ordered_json common = {{"dump_mode", 0},
                                         {"path", "/home/ma-user/work/dump/" + m_o.netName},
                                         {"net_name", m_o.netName},
                                         {"iteration", "all"},
                                         {"saved_data", m_o.writeTensors ? "full" : "statistic"},
                                         {"input_output", 0},
                                         {"kernels", nlohmann::ordered_json::array()},
                                         {"support_device", supportDevices()},
                                         {"op_debug_mode", m_o.overflowOnly ? 3 : 0},
                                         {"statistic_category", kCategories}};
        nlohmann::ordered_json j = {
            {"common_dump_settings", common},
            {"e2e_dump_settings", {{"enable", true}, {"trans_flag", true}, {"stat_calc_mode", "host"}}}};
        return j.dump(4) + "\n";
    }

    nlohmann::ordered_json supportDevices() const {
        nlohmann::ordered_json d = nlohmann::ordered_json::array();
        for (int i = 0; i < std::min(m_t.ranks, 8); ++i) d.push_back(i);
        return d;
    }

    std::string hcclJson() const {
        nlohmann::ordered_json servers = nlohmann::ordered_json::array();
        for (int first = 0; first < m_t.ranks; first += kDevicesPerServer) {
            const int s = first / kDevicesPerServer;
            nlohmann::ordered_json devices = nlohmann::ordered_json::array();
            for (int r = first; r < std::min(m_t.ranks, first + kDevicesPerServer); ++r) {
                nlohmann::ordered_json d = {
                    {"device_id", std::to_string(r - first)},
                    {"device_ip", "192.98." + std::to_string(10 + s) + "." + std::to_string(11 + r - first)},
                    {"rank_id", std::to_string(r)}};
                if (m_o.stagesInRankTable) d["stage"] = std::to_string(m_t.stageOf(r));
                devices.push_back(d);
            }
            servers.push_back({{"server_id", "192.168.10." + std::to_string(11 + s)},
                               {"device", devices},
                               {"host_nic_ip", "reserve"}});
        }
        nlohmann::ordered_json j = {{"version", "1.0"},
                                    {"server_count", std::to_string(servers.size())},
                                    {"server_list", servers},
                                    {"status", "completed"}};
        return j.dump(2) + "\n";
    }

    std::size_t files = 0;

private:
    const ClusterTrace& m_t;
    const ClusterWriteOptions& m_o;
};

}  // namespace

bool writeClusterDump(const std::string& root, const ClusterTrace& trace, const ClusterWriteOptions& options,
                      std::size_t& filesWritten, std::string& error) {
    Writer w(trace, options);
    std::error_code ec;
    for (int r = 0; r < trace.ranks; ++r) {
        const std::string rankDir = root + "/rank_" + std::to_string(r);
        for (int it = 0; it < trace.iterations; ++it) {
            const std::string dir = rankDir + "/" + options.netName + "/0/" + std::to_string(it);
            fs::create_directories(dir, ec);
            if (ec) {
                error = "cannot create " + dir + ": " + ec.message();
                return false;
            }
            if (!w.iteration(dir, r, it, error)) return false;
        }
        const std::string eo = rankDir + "/execution_order/", md = rankDir + "/.dump_metadata/";
        if (options.executionOrder) fs::create_directories(eo, ec);
        if (!ec) fs::create_directories(md, ec);
        if (ec) {
            error = "cannot create folders under " + rankDir + ": " + ec.message();
            return false;
        }
        std::string order = "NodeExecutionOrder-FullNameWithScope\n", global;
        for (const auto& name : trace.execOrder.at(std::size_t(trace.stageOf(r)))) order += name + "\n";
        for (int it = 0; it < trace.iterations; ++it) global += std::to_string(it) + "\n";
        const nlohmann::json cfg = {{"device_target", "Ascend"}, {"ms_version", options.msVersion}};
        if ((options.executionOrder &&
             (!w.text(eo + "ms_execution_order_graph_0.csv", order, error) ||
              !w.text(eo + "ms_global_execution_order_graph_0.csv", global, error))) ||
            !w.text(md + "data_dump.json", w.dataDumpJson(), error) || !w.text(md + "config.json", cfg.dump(), error) ||
            !w.text(md + "hccl.json", w.hcclJson(), error))
            return false;
    }
    filesWritten = w.files;
    return true;
}

}  // namespace dl::demo
