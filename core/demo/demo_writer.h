#pragma once
// Writes a simulated run (DemoTrace) as a MindSpore dump root, byte-for-byte in the layout the
// options name (docs/formats.md 1.2, 1.4-1.7, 1.10, 1.12):
//   m_rank{r}/{net}/{graph}/{iter}/*.npy + statistic.csv (+ Opdebug...output.0.json when overflow-only)
//   m_rank{r}/execution_order/ms_execution_order_graph_{g}.csv, ms_global_execution_order_graph_{g}.csv
//   m_rank{r}/.dump_metadata/{data_dump.json, config.json, hccl.json}
// Never writes outside `root`.
#include <cstdint>
#include <string>
#include <vector>

#include "core/demo/demo_options.h"
#include "core/demo/demo_trace.h"

namespace dl::demo {

class DemoWriter {
public:
    DemoWriter(const DemoOptions& options, const DemoTrace& trace) : m_o(options), m_t(trace) {}
    bool write(const std::string& root, DemoVariantInfo& info, std::string& error);

    // The tensor file name of one op input/output (no directory).
    std::string tensorFileName(const DemoOp& op, bool output, std::size_t slot, std::int64_t ts) const;
    std::uint32_t streamId(const DemoOp& op) const;
    std::int64_t opTimestamp(const DemoOp& op) const;  // rank clock: base + true time + offset

private:
    bool writeIteration(const std::string& dir, int rank, int iteration, DemoVariantInfo& info, std::string& error);
    bool writeText(const std::string& path, const std::string& text, std::string& error);
    std::string dataDumpJson() const;
    std::string msVersion() const;

    const DemoOptions& m_o;
    const DemoTrace& m_t;
    std::vector<std::int64_t> m_lastTs = std::vector<std::int64_t>(16, 0);  // per rank (kernel-by-kernel)
    std::size_t m_files = 0;
    std::uint64_t m_bytes = 0;
};

}  // namespace dl::demo
