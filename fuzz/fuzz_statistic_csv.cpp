// libFuzzer target: statistic.csv, mapping.csv and execution-order text parsing.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/formats/mindspore/execution_order.h"
#include "core/formats/mindspore/mapping_csv.h"
#include "core/formats/mindspore/statistic_csv.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    std::string_view text(reinterpret_cast<const char*>(data), size);
    dl::StatisticCsvResult r;
    std::string err;
    if (dl::parseStatisticCsv(text, r, err)) {
        for (const auto& row : r.rows) {
            // Figures marked known are finite: nan/inf must have gone to the evidence bits.
            const auto& s = row.stats;
            if (s.has(dl::stat::Max) && !std::isfinite(s.max)) __builtin_trap();
            if (s.has(dl::stat::Min) && !std::isfinite(s.min)) __builtin_trap();
            if (s.has(dl::stat::MaxAbs) && !(s.maxAbs >= 0)) __builtin_trap();
            if (row.line == 0) __builtin_trap();
        }
    } else if (err.empty()) {
        __builtin_trap();
    }
    dl::MappingTable m;
    std::vector<std::uint32_t> bad;
    m.parse(text, bad);
    std::vector<std::string> names;
    dl::parseExecutionOrderCsv(text, names, err);
    std::vector<std::uint32_t> its;
    dl::parseGlobalExecutionOrderCsv(text, its, bad, err);
    return 0;
}
