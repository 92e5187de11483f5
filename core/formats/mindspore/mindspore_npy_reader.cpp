// MindSpore .npy tensor files (docs/formats.md 1.4, 1.5): one tensor per file, its op, ids, io and
// slot in the name, also msaccucmp's converted .npy (shape instead of format in the name).
#include "core/index/format_reader.h"
#include "core/index/shard_context.h"
#include "core/index/tensor_file_job.h"

namespace dl {
namespace {

class MindSporeNpyReader final : public ShardReader {
public:
    using ShardReader::ShardReader;

    bool scanFile(const ScannedFile& f, const DumpFileName& name) override {
        if (name.kind != DumpFileKind::MindSporeNpy && name.kind != DumpFileKind::ConvertedNpy) return false;
        s.addTensorFile(f, name, DumpFormat::MindSporeNpy, *this);
        return true;
    }
    StatsJobResult run(const StatsJob& job, std::vector<std::uint8_t>& scratch) const override {
        return runTensorFileJob(job, TensorHeader::Npy, scratch);
    }
};

}  // namespace

// Its rank's format: what the shard's readers recorded (ShardContext::noteRankFormat, fillRankInfo).
extern const FormatReader kMindSporeNpyReader{
    .format = DumpFormat::MindSporeNpy, .name = "MindSpore npy", .open = openReader<MindSporeNpyReader>};

}  // namespace dl
