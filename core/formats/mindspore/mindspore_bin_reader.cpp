// MindSpore <=1.2 synchronous dumps (docs/formats.md 1.3): headerless .bin tensor files whose
// name gives op, io, slot, shape, dtype and format.
#include <unordered_map>

#include "core/index/format_reader.h"
#include "core/index/shard_context.h"
#include "core/index/tensor_file_job.h"

namespace dl {
namespace {

class MindSporeBinReader final : public ShardReader {
public:
    using ShardReader::ShardReader;

    bool scanFile(const ScannedFile& f, const DumpFileName& name) override {
        if (name.kind != DumpFileKind::MindSporeBin) return false;
        if (const auto draft = s.addTensorFile(f, name, DumpFormat::MindSporeBin, *this)) m_names.emplace(*draft, name);
        return true;
    }
    // Workers only read m_names: it is complete before the first job runs.
    StatsJobResult run(const StatsJob& job, std::vector<std::uint8_t>&) const override {
        return runRawBinJob(job, m_names.at(job.draft));
    }

private:
    std::unordered_map<std::uint32_t, DumpFileName> m_names;  // by draft: the dtype and shape of its file
};

}  // namespace

// Its rank's format: what the shard's readers recorded (ShardContext::noteRankFormat, fillRankInfo).
extern const FormatReader kMindSporeBinReader{
    .format = DumpFormat::MindSporeBin, .name = "MindSpore <=1.2 bin", .open = openReader<MindSporeBinReader>};

}  // namespace dl
