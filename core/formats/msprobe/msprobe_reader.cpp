// msprobe dumps (docs/formats.md 3): a folder-level format. Every folder holding a dump.json is
// read whole by MsprobeShard before the per-file pass; its saved .npy / .pt tensors are jobs.
#include "core/formats/msprobe/msprobe_shard.h"
#include "core/index/format_reader.h"
#include "core/index/shard_context.h"
#include "core/index/tensor_file_job.h"

namespace dl {
namespace {

class MsprobeReader final : public ShardReader {
public:
    explicit MsprobeReader(ShardContext& shard) : s(shard) {}

    void collect(const std::vector<const ScannedFile*>& files, std::vector<char>& taken) override {
        const std::size_t first = s.jobs.size();
        m_shard.collect(s.rootAbs, files, s.out, s.jobs, s.out.warnings);
        for (std::size_t j = first; j < s.jobs.size(); ++j) s.jobs[j].reader = this;
        if (!m_shard.found()) return;
        s.formats.insert(DumpFormat::Msprobe);
        for (std::size_t i = 0; i < files.size(); ++i)
            if (m_shard.owns(files[i]->rel)) taken[i] = 1;
    }
    // The saved tensor's own header: .npy from MindSpore, torch.save .pt from PyTorch.
    StatsJobResult run(const StatsJob& job, std::vector<std::uint8_t>& scratch) const override {
        return runTensorFileJob(job, job.absPath.ends_with(".pt") ? TensorHeader::Torch : TensorHeader::Npy, scratch);
    }
    void apply(const StatsJob& job, StatsJobResult&& result) override { m_shard.apply(job, std::move(result)); }
    void finish(DumpIndex& out) override { m_shard.finish(out); }
    void addRanks(DumpIndex& out) override { m_shard.fillRankInfo(s.shardRel, out); }
    void finishRanks(DumpIndex& out) override {
        for (RankInfo& r : out.ranks)
            if (r.format == DumpFormat::Msprobe && r.orderSource.empty()) r.orderSource = "dump_json";
    }

private:
    ShardContext& s;
    MsprobeShard m_shard;
};

}  // namespace

// Its ranks are named by MsprobeShard::fillRankInfo (addRanks), not by its folders.
extern const FormatReader kMsprobeReader{
    DumpFormat::Msprobe, "msprobe", false,
    [](ShardContext& s) -> std::unique_ptr<ShardReader> { return std::make_unique<MsprobeReader>(s); }};

}  // namespace dl
