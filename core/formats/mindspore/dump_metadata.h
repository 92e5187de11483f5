#pragma once
// The small JSON files beside a MindSpore dump (docs/formats.md 1.1, 1.10): .dump_metadata/config.json,
// the user's dump config (data_dump.json, also the file MINDSPORE_DUMP_CONFIG names) and hccl.json
// rank tables. All parsers are tolerant of missing keys and of numbers written as strings.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace dl {

struct MsRunConfig {           // .dump_metadata/config.json
    std::string deviceTarget;  // "Ascend", "GPU", "CPU"
    std::string msVersion;     // "2.2.0"
};
bool parseMsRunConfig(std::string_view text, MsRunConfig& out, std::string& error);

struct DumpConfig {     // data_dump.json
    int dumpMode = -1;  // 0 all, 1 kernels list, 2 set_dump marks; -1 absent
    std::string path;
    std::string netName;
    std::string iteration;                       // "all", "0|5-8"; <=1.2 unsigned numbers converted to text
    std::string savedData;                       // "tensor" (default when absent), "statistic", "full"
    int inputOutput = -1;                        // 0 both, 1 inputs, 2 outputs; -1 absent
    int opDebugMode = -1;                        // from common_dump_settings, else async_dump_settings; -1 absent
    std::string fileFormat;                      // "bin", "npy"; empty when absent
    std::vector<std::string> statisticCategory;  // 2.3+, as written
    std::vector<std::string> kernels;
    std::vector<std::uint32_t> supportDevice;
    std::optional<bool> e2eEnable;    // e2e_dump_settings.enable
    std::optional<bool> transFlag;    // e2e_dump_settings.trans_flag
    std::optional<bool> asyncEnable;  // async_dump_settings.enable (<=1.x)
    std::string statCalcMode;         // e2e_dump_settings.stat_calc_mode ("host"/"device"), 2.3+
    bool hasAsyncSection = false;
    bool hasE2eSection = false;

    // Sync/e2e when e2e_dump_settings.enable is true; otherwise async (the default from 1.3 on).
    bool isE2e() const { return e2eEnable.value_or(false); }
};
// Fails when the text is not JSON or has no common_dump_settings object; a key of the wrong type
// fails with a reason naming it.
bool parseDumpConfig(std::string_view text, DumpConfig& out, std::string& error);

struct RankTableEntry {
    std::uint32_t rank = 0;
    std::string server;    // server_id
    std::string hostIp;    // host_nic_ip / host_ip ("reserve" kept as written)
    std::string deviceId;  // as written ("0")
    std::string deviceIp;
    std::string group;  // group_name of the old group_list layout; empty otherwise
};
// Rank table v1.x (server_list[].device[]) and the older group_list[].instance_list[] layout.
// Entries sorted by rank. Fails when neither layout is present or a rank_id is not a number.
bool parseRankTable(std::string_view text, std::vector<RankTableEntry>& out, std::string& error);

// Reads a file into `text`; false with a reason on failure (shared by the three readers' callers).
bool readSmallTextFile(const std::string& path, std::string& text, std::string& error,
                       std::size_t maxBytes = 64u << 20);

}  // namespace dl
