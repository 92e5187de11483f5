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
    using ShardReader::ShardReader;

    void scanShard(const std::vector<const ScannedFile*>& files, std::vector<char>& taken) override {
        std::vector<StatsJob> jobs;  // slots of m_shard's own
        m_shard.collect(s.rootAbs(), files, s.index(), jobs, s.index().warnings);
        for (StatsJob& job : jobs) {
            job.reader = this;
            s.queueJob(std::move(job));
        }
        if (!m_shard.found()) return;
        s.noteShardFormat(DumpFormat::Msprobe);
        for (std::size_t i = 0; i < files.size(); ++i)
            if (m_shard.owns(files[i]->rel)) taken[i] = 1;
    }
    // The saved tensor's own header: .npy from MindSpore, torch.save .pt from PyTorch.
    StatsJobResult run(const StatsJob& job, std::vector<std::uint8_t>& scratch) const override {
        return runTensorFileJob(job, job.absPath.ends_with(".pt") ? TensorHeader::Torch : TensorHeader::Npy, scratch);
    }
    void apply(const StatsJob& job, StatsJobResult&& result) override { m_shard.apply(job, std::move(result)); }
    void finishDrafts(DumpIndex& out) override { m_shard.finish(out); }
    void finishOps(DumpIndex& out) override { m_shard.fillRankInfo(s.shardRel(), out); }
    void finishRanks(DumpIndex& out) override {
        for (RankInfo& r : out.ranks)
            if (r.format == DumpFormat::Msprobe && r.orderSource.empty()) r.orderSource = "dump_json";
    }

private:
    MsprobeShard m_shard;
};

}  // namespace

// Its ranks are named by MsprobeShard::fillRankInfo (finishOps), not by its folders.
extern const FormatReader kMsprobeReader{
    .format = DumpFormat::Msprobe, .name = "msprobe", .open = openReader<MsprobeReader>};

}  // namespace dl
