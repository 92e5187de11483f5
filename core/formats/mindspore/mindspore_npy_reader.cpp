// MindSpore .npy tensor files (docs/formats.md 1.4, 1.5): one tensor per file, its op, ids, io and
// slot in the name, also msaccucmp's converted .npy (shape instead of format in the name).
#include "core/index/tensor_file_reader.h"

namespace dl {
namespace {

class MindSporeNpyReader final : public TensorFileReader {
public:
    using TensorFileReader::TensorFileReader;

    bool addFile(const ScannedFile& f, const DumpFileName& name) override {
        if (name.kind != DumpFileKind::MindSporeNpy && name.kind != DumpFileKind::ConvertedNpy) return false;
        s.addTensorFile(f, name, DumpFormat::MindSporeNpy, this);
        return true;
    }
    StatsJobResult run(const StatsJob& job, std::vector<std::uint8_t>& scratch) const override {
        return runTensorFileJob(job, TensorHeader::Npy, scratch);
    }
};

}  // namespace

// Its rank's format: what the shard's readers recorded (ShardContext::rankFormats, fillRankInfo).
extern const FormatReader kMindSporeNpyReader{
    DumpFormat::MindSporeNpy, "MindSpore npy", false,
    [](ShardContext& s) -> std::unique_ptr<ShardReader> { return std::make_unique<MindSporeNpyReader>(s); }};

}  // namespace dl
