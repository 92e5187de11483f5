#pragma once
// The graph IR's dataflow of each rank of a dump (rank_N/graphs/*.ir, core/formats/mindspore/
// graph_ir_edges.h), read on first use, and the join of its kernels to the dump's ops: by the
// op's full scope (from the execution order) or its file name in any era's form.
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/analysis/analysis_result.h"
#include "core/formats/mindspore/graph_ir_edges.h"
#include "core/model/dump_index.h"

namespace dl {

// The graphs/ folder MindSpore writes for `rank`: <root>/<rank folder>/graphs.
std::string graphsFolderOf(const DumpIndex& index, std::uint32_t rank);

class RankDataflow {
public:
    explicit RankDataflow(const DumpIndex& index) : m_index(index) {}
    // nullptr when the rank has no graph IR, or it could not be read (error() says why).
    const IrDataflow* graphOf(std::uint32_t rank);
    const std::string& error(std::uint32_t rank);
    // The IR kernel of dump op `op`; -1 when its rank has no IR or the IR does not name the op.
    std::int64_t kernelOf(std::uint32_t op);
    // The dump op that ran kernel k on `rank` in `iteration`: the last execution before op index
    // `before` (a kernel a while loop runs again runs once per pass), else the first; kNoIndex when not dumped.
    std::uint32_t opOf(std::uint32_t rank, std::uint32_t iteration, std::uint32_t kernel,
                       std::uint32_t before = kNoIndex);
    // The dumped tensor of op `op` with this io and slot; kNoIndex when not dumped.
    std::uint32_t tensorOf(std::uint32_t op, Io io, std::uint16_t slot) const;

private:
    struct Rank {
        std::unique_ptr<IrDataflow> flow;
        std::string error;
        std::map<std::uint32_t, std::unordered_map<std::uint32_t, std::vector<std::uint32_t>>>
            opsOf;  // iteration -> kernel -> ops
    };
    Rank& rank(std::uint32_t r);
    const DumpIndex& m_index;
    std::map<std::uint32_t, Rank> m_ranks;
    std::unordered_map<std::uint32_t, std::int64_t> m_kernelOf;
};

// Marks every same-rank chain hop that a path of IR data edges explains as ChainVia::Dataflow with
// that path; a hop the IR has no path for keeps same_rank and its note says so. Fills the origin's
// inputs (originInputs) from the IR. Ranks without an IR are left as they were.
void explainByDataflow(const DumpIndex& index, RankDataflow& flow, AnalysisResult& res);

}  // namespace dl
