#include "core/demo/demo_writer.h"

#include "core/demo/graph_ir_writer.h"

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "core/demo/demo_file_names.h"
#include "core/formats/mindspore/statistic_csv_writer.h"
#include "core/io/npy_writer.h"

namespace dl::demo {

namespace fs = std::filesystem;

namespace {

bool isKbk(const DemoOptions& o) { return o.layout == DemoLayout::Ms24KernelByKernel; }

std::string hex(std::uint64_t v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
    return buf;
}

// A+M converts CANN's Opdebug record to compact JSON with sorted keys and lowercase hex.
std::string opdebugJson(const DemoOp& op, std::uint32_t stream) {
    using nlohmann::json;
    const std::uint64_t code = 0x124080000000ull + std::uint64_t(op.position) * 0x1000ull;
    json atomic = {{"model_id", 0},  {"para_base", "0x0"}, {"pc_start", "0x0"}, {"status", 0},
                   {"stream_id", 0}, {"task_id", 0},       {"task_type", 0}};
    json j = {{"AI Core",
               {{"block_idx", 0},
                {"kernel_code", hex(code)},
                {"model_id", 1},
                {"para_base", hex(0x124090000000ull + std::uint64_t(op.position) * 0x400ull)},
                {"pc_start", hex(code + 0x2000)},
                {"status", 32},
                {"stream_id", stream},
                {"task_id", op.taskId},
                {"task_type", 0}}},
              {"DHA Atomic Add", atomic},
              {"L2 Atomic Add", atomic}};
    return j.dump();
}

std::string hcclJson() {
    nlohmann::ordered_json servers = nlohmann::ordered_json::array();
    for (int s = 0; s < 2; ++s) {
        nlohmann::ordered_json devices = nlohmann::ordered_json::array();
        for (int d = 0; d < 2; ++d)
            devices.push_back({{"device_id", std::to_string(d)},
                               {"device_ip", "192.98." + std::to_string(10 + s) + "." + std::to_string(11 + d)},
                               {"rank_id", std::to_string(s * 2 + d)}});
        servers.push_back(
            {{"server_id", "192.168.10." + std::to_string(11 + s)}, {"device", devices}, {"host_nic_ip", "reserve"}});
    }
    nlohmann::ordered_json j = {
        {"version", "1.0"}, {"server_count", "2"}, {"server_list", servers}, {"status", "completed"}};
    return j.dump(2) + "\n";
}

}  // namespace

std::string DemoWriter::msVersion() const {
    if (!m_o.msVersion.empty()) return m_o.msVersion;
    return isKbk(m_o) ? "2.4.1" : "2.2.10";
}

std::uint32_t DemoWriter::streamId(const DemoOp& op) const {
    const bool comm = op.stream == StreamKind::Comm;
    if (isKbk(m_o)) return comm ? 1 : 0;  // MindSpore's logical stream ids
    return comm ? 3 : 2;                  // CANN stream ids of the sink-mode model
}

std::int64_t DemoWriter::opTimestamp(const DemoOp& op) const {
    const auto r = std::size_t(op.rank);
    const std::int64_t off = r < m_o.rankClockOffsetUs.size() ? m_o.rankClockOffsetUs[r] : 0;
    return m_o.baseTimestampUs + op.trueEndUs + off;
}

std::string DemoWriter::tensorFileName(const DemoOp& op, bool output, std::size_t slot, std::int64_t ts) const {
    const auto& t = output ? op.outputs.at(slot) : op.inputs.at(slot);
    const std::string io = output ? "output" : "input";
    if (isKbk(m_o))
        return op.type + "." + fileKernelName(op.fullName) + ".0." + std::to_string(streamId(op)) + "." +
            std::to_string(ts) + "." + io + "." + std::to_string(slot) + ".DefaultFormat." +
            std::string(dtypeName(t->dtype)) + ".npy";
    return op.type + "." + op.shortName + "." + std::to_string(op.taskId) + "." + std::to_string(streamId(op)) + "." +
        std::to_string(ts) + "." + io + "." + std::to_string(slot) + ".DefaultFormat.npy";
}

bool DemoWriter::writeText(const std::string& path, const std::string& text, std::string& error) {
    std::ofstream f(path, std::ios::binary | std::ios::trunc);
    f << text;
    if (!f) {
        error = "cannot write " + path;
        return false;
    }
    ++m_files;
    m_bytes += text.size();
    return true;
}

bool DemoWriter::writeIteration(const std::string& dir, int rank, int iteration, DemoVariantInfo& info,
                                std::string& error) {
    const bool kbk = isKbk(m_o);
    StatisticCsvWriter csv(kbk ? StatCsvStyle::Ms23Plus : StatCsvStyle::Ms16To22, m_o.statisticCategories);
    if (!csv.valid(error)) return false;
    std::string stats = csv.header() + "\n";
    std::uint32_t opdebugIndex = 0;
    std::string mapping;
    for (const DemoOp& op : m_t.ops) {
        if (op.rank != rank || op.iteration != iteration) continue;
        if (m_o.overflowOnly && !op.overflow) continue;
        const std::int64_t opTs = opTimestamp(op);
        std::size_t idx = 0;
        for (int out = 0; out < 2; ++out) {
            const auto& list = out ? op.outputs : op.inputs;
            for (std::size_t s = 0; s < list.size(); ++s, ++idx) {
                // A+M: one timestamp per op execution; kernel-by-kernel: a fresh one per tensor.
                std::int64_t ts = opTs;
                if (kbk) {
                    auto& last = m_lastTs[std::size_t(rank)];
                    last = ts = std::max(opTs + std::int64_t(idx), last + 1);
                }
                std::string name = tensorFileName(op, out != 0, s, ts);
                if (name.size() > 255) {  // NAME_MAX: MindSpore writes a numeric name + mapping.csv
                    const std::string mapped = std::to_string(1000000007ull * (m_files + 1) % 9999999967ull) + ".npy";
                    mapping += mapped + "," + name + "\n";
                    name = mapped;
                }
                const DType stored = storedType(list[s]->dtype);
                std::string payload;
                if (!encodeFloats(list[s]->v, stored, payload, error)) return false;
                if (!writeNpyFile(dir + "/" + name, stored, list[s]->shape, payload, error)) return false;
                ++m_files;
                m_bytes += payload.size() + 128;
                if (out && op.iteration == info.firstOverflowIteration && op.fullName == info.culpritFullName)
                    info.culpritOutputFiles.push_back("rank_" + std::to_string(rank) + "/" + m_o.netName + "/" +
                                                      std::to_string(m_o.graphId) + "/" + std::to_string(iteration) +
                                                      "/" + name);
                StatCsvRow row{op.type,
                               kbk ? fileKernelName(op.fullName) : op.shortName,
                               kbk ? 0u : op.taskId,
                               streamId(op),
                               ts,
                               out != 0,
                               std::uint32_t(s),
                               payload.size(),
                               std::string(dtypeName(list[s]->dtype)),
                               list[s]->shape};
                stats += csv.row(row, list[s]->v) + "\n";
            }
        }
        if (m_o.overflowOnly && !kbk) {
            // The record's file name carries the OpDebug task's own ids; the AI Core block names the op.
            const std::uint32_t task = m_t.maxComputeTaskId[std::size_t(rank)] + 1 + opdebugIndex++;
            const std::string name = "Opdebug.Node_OpDebug." + std::to_string(task) + "." +
                std::to_string(streamId(op)) + "." + std::to_string(opTs + 2) + ".output.0.json";
            if (!writeText(dir + "/" + name, opdebugJson(op, streamId(op)), error)) return false;
        }
    }
    if (m_o.writeStatistics && !m_o.overflowOnly && !writeText(dir + "/statistic.csv", stats, error)) return false;
    if (!mapping.empty() && !writeText(dir + "/mapping.csv", mapping, error)) return false;
    return true;
}

std::string DemoWriter::dataDumpJson() const {
    std::string s =
        "{\n    \"common_dump_settings\": {\n        \"dump_mode\": 0,\n"
        "        \"path\": \"/home/ma-user/work/dump/" +
        m_o.netName +
        "\",\n"
        "        \"net_name\": \"" +
        m_o.netName +
        "\",\n        \"iteration\": \"all\",\n"
        "        \"saved_data\": \"" +
        std::string(m_o.writeStatistics && !m_o.overflowOnly ? "full" : "tensor") +
        "\",\n        \"input_output\": 0,\n        \"kernels\": [],\n"
        "        \"support_device\": [0,1,2,3,4,5,6,7],\n"
        "        \"op_debug_mode\": " +
        std::string(m_o.overflowOnly ? "3" : "0");
    if (isKbk(m_o)) {
        s += ",\n        \"statistic_category\": [";
        for (std::size_t i = 0; i < m_o.statisticCategories.size(); ++i)
            s += (i ? ", \"" : "\"") + m_o.statisticCategories[i] + "\"";
        s += "]\n    },\n    \"e2e_dump_settings\": {\n        \"enable\": true,\n        \"trans_flag\": true,\n"
             "        \"stat_calc_mode\": \"host\"\n    }\n}\n";
    } else {
        s += ",\n        \"file_format\": \"npy\"\n    }\n}\n";
    }
    return s;
}

bool DemoWriter::write(const std::string& root, DemoVariantInfo& info, std::string& error) {
    // The culprit: the first overflowing op in causal (trace) order.
    for (const DemoOp& op : m_t.ops)
        if (op.overflow) {
            info.culpritType = op.type;
            info.culpritShortName = op.shortName;
            info.culpritFullName = op.fullName;
            info.culpritRank = op.rank;
            info.firstOverflowIteration = op.iteration;
            break;
        }
    info.decoyOpFullName = m_t.decoyFullName;
    info.decoyRank = m_t.decoyRank;
    info.decoyMaxAbs = m_t.decoyMaxAbs;
    info.lossPerIteration = m_t.lossPerIteration;
    std::error_code ec;
    const std::string g = std::to_string(m_o.graphId);
    for (int r = 0; r < m_t.ranks; ++r) {
        const std::string rankDir = root + "/rank_" + std::to_string(r);
        for (int it = 0; it < m_t.iterations; ++it) {
            const std::string dir = rankDir + "/" + m_o.netName + "/" + g + "/" + std::to_string(it);
            fs::create_directories(dir, ec);
            if (ec) {
                error = "cannot create " + dir + ": " + ec.message();
                return false;
            }
            if (!writeIteration(dir, r, it, info, error)) return false;
        }
        fs::create_directories(rankDir + "/execution_order", ec);
        fs::create_directories(rankDir + "/.dump_metadata", ec);
        if (ec) {
            error = "cannot create folders under " + rankDir + ": " + ec.message();
            return false;
        }
        std::string order = "NodeExecutionOrder-FullNameWithScope\n", global;
        for (const auto& name : m_t.execOrder[std::size_t(r)]) order += name + "\n";
        for (int it = 0; it < m_t.iterations; ++it) global += std::to_string(it) + "\n";
        const std::string eo = rankDir + "/execution_order/";
        const std::string md = rankDir + "/.dump_metadata/";
        nlohmann::json cfg = {{"device_target", "Ascend"}, {"ms_version", msVersion()}};
        if (!writeText(eo + "ms_execution_order_graph_" + g + ".csv", order, error) ||
            !writeText(eo + "ms_global_execution_order_graph_" + g + ".csv", global, error) ||
            !writeText(md + "data_dump.json", dataDumpJson(), error) ||
            !writeText(md + "config.json", cfg.dump(), error) || !writeText(md + "hccl.json", hcclJson(), error) ||
            !writeDemoGraphIr(rankDir, m_t, r, m_o.graphId, error))
            return false;
        ++m_files;
    }
    info.filesWritten = m_files;
    info.bytesWritten = m_bytes;
    return true;
}

}  // namespace dl::demo
