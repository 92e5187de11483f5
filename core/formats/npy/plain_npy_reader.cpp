// A user's own np.save dump (docs/formats.md 8.1): a folder of .npy files that follow no dump
// grammar, one op per file, ordered by modification time.
#include <algorithm>
#include <string>
#include <tuple>
#include <vector>

#include "core/index/format_reader.h"
#include "core/index/shard_context.h"
#include "core/index/tensor_file_job.h"

namespace dl {
namespace {

class PlainNpyReader final : public ShardReader {
public:
    using ShardReader::ShardReader;

    // Kept until the whole shard was seen: whether a folder holds dump-grammar files decides.
    bool scanFile(const ScannedFile& f, const DumpFileName& name) override {
        if (name.kind != DumpFileKind::Unknown || !f.rel.ends_with(".npy")) return false;
        m_stray.push_back(&f);
        return true;
    }
    void scanDone() override;
    StatsJobResult run(const StatsJob& job, std::vector<std::uint8_t>& scratch) const override {
        return runTensorFileJob(job, TensorHeader::Npy, scratch);
    }
    void finishOps(DumpIndex& out) override;
    void finishRanks(DumpIndex& out) override {
        for (RankInfo& r : out.ranks)
            if (r.format == DumpFormat::PlainNpy) r.orderSource = "modification_time";
    }

private:
    void add(const ScannedFile& f);
    std::vector<const ScannedFile*> m_stray;  // .npy names outside every dump grammar
};

void PlainNpyReader::scanDone() {
    // A folder of .npy files that follow no dump grammar is a user's own np.save dump (one op per
    // file); next to dump-grammar files such a name is a malformed dump file instead.
    for (const ScannedFile* f : m_stray) {
        if (s.holdsGrammarFiles(s.folderOf(f->rel))) {
            DumpFileName name;
            parseDumpFileName(f->rel.substr(f->rel.rfind('/') + 1), name);
            s.warn(f->rel, "tensor file name does not follow the dump grammar: " + name.reason,
                   WarningSeverity::Unreadable);
        } else {
            add(*f);
        }
    }
}

void PlainNpyReader::add(const ScannedFile& f) {
    const std::uint32_t folder = s.folderOf(f.rel);
    s.noteFormat(folder, DumpFormat::PlainNpy);
    s.keepFolderOrder();  // finishOps below sorts across folders, ties by op index
    std::string stem = f.rel.substr(f.rel.rfind('/') + 1);
    stem.resize(stem.size() - 4);
    // The modification time orders the ops (np.save calls in program order); the name breaks ties.
    const auto id = s.draftFor(folder, "npy", stem, 0, 0, f.mtimeNs / 1000, Io::Output, 0);
    Draft& d = s.drafts[id];
    d.hasFile = true;
    FileSide& fs = d.fileSide();
    fs.fileRel = f.rel;
    fs.fileSize = f.size;
    fs.stamp = f.stamp;
    if (!s.reuse(f, d)) s.queueDraftJob(id, f, DType::Unknown, *this);
}

// Plain .npy ops of all folders form one sequence: modification time, then name.
void PlainNpyReader::finishOps(DumpIndex& out) {
    const StrId npyType = out.strings.intern("npy");
    std::vector<std::uint32_t> ids;
    for (std::uint32_t i = 0; i < out.ops.size(); ++i)
        if (out.ops[i].type == npyType && out.ops[i].taskId == 0 && out.ops[i].streamId == 0) ids.push_back(i);
    std::sort(ids.begin(), ids.end(), [&](std::uint32_t a, std::uint32_t b) {
        const OpRecord &x = out.ops[a], &y = out.ops[b];
        return std::tuple(x.startUs, out.strings.view(x.name)) < std::tuple(y.startUs, out.strings.view(y.name));
    });
    for (std::uint32_t k = 0; k < ids.size(); ++k) out.ops[ids[k]].execPos = k;
}

}  // namespace

// A folder of plain .npy files names its rank's format (the tensors alone would say MindSpore npy).
extern const FormatReader kPlainNpyReader{
    .format = DumpFormat::PlainNpy, .name = "plain npy", .namesRankFormat = true, .open = openReader<PlainNpyReader>};

}  // namespace dl
