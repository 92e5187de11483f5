// The <=1.2 GPU dumps MindSpore ships with its own tests must read back exactly what MindSpore's
// offline debugger read from them (golden/*_read_tensors.expected): node, slot, iteration, byte
// count, shape, and the bytes themselves where the golden file prints them in full.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/formats/mindspore/dump_file_name.h"
#include "core/index/dump_indexer.h"

namespace fs = std::filesystem;
using namespace dl;

namespace {

struct Golden {
    std::string node;
    int slot = -1, iteration = -1;
    std::uint64_t bytes = 0;
    std::vector<std::int64_t> shape;
    std::vector<std::uint8_t> data;  // empty when the golden file elides it with "..."
};

std::string after(const std::string& line) {
    std::string v = line.substr(line.find('=') + 1);
    v.erase(0, v.find_first_not_of(' '));
    return v;
}

std::vector<Golden> readGolden(const fs::path& p) {
    std::ifstream in(p);
    std::vector<Golden> out;
    std::string line, data;
    bool inData = false;
    auto flushData = [&] {
        if (data.find("...") == std::string::npos) {
            std::istringstream s(data.substr(data.find('[') + 1));
            int v;
            while (s >> v) out.back().data.push_back(std::uint8_t(v));
        }
        data.clear();
    };
    while (std::getline(in, line)) {
        if (line.starts_with("node name"))
            out.push_back({after(line)});
        else if (out.empty())
            continue;
        else if (line.starts_with("slot"))
            out.back().slot = std::stoi(after(line));
        else if (line.starts_with("iteration"))
            out.back().iteration = std::stoi(after(line));
        else if (line.starts_with("size in bytes"))
            out.back().bytes = std::stoull(after(line));
        else if (line.starts_with("shape")) {
            std::string v = after(line);
            std::replace(v.begin(), v.end(), ',', ' ');
            std::istringstream s(v.substr(1, v.size() - 2));
            std::int64_t d;
            while (s >> d) out.back().shape.push_back(d);
        } else if (line.starts_with("data (printed in uint8)")) {
            inData = true;
            data = line;
        } else if (inData) {
            data += " " + line;
        }
        if (inData && data.find(']') != std::string::npos) {
            inData = false;
            flushData();
        }
    }
    return out;
}

std::string lastComponent(const std::string& s) { return s.substr(s.rfind('/') + 1); }

void checkAgainstGolden(const std::string& dumpName, const std::string& goldenName) {
    const fs::path samples = fs::path(DUMPLENS_SAMPLES_DIR) / "mindspore-tests/gpu_dumps";
    const auto golden = readGolden(samples / "golden" / goldenName);
    ASSERT_EQ(golden.size(), 3u);
    DumpIndex idx;
    IndexReport report;
    IndexOptions o;
    o.useCache = false;
    std::string error;
    ASSERT_TRUE(indexDump((samples / dumpName).string(), o, idx, report, error)) << error;
    // These copies hold no execution_order/ or graphs/ folder and .bin names carry no timestamps:
    // the only warning says the op order is file-name order.
    ASSERT_EQ(idx.warnings.size(), 1u) << idx.warnings.back().path << ": " << idx.warnings.back().reason;
    EXPECT_NE(idx.warnings[0].reason.find("ordered by file name"), std::string::npos) << idx.warnings[0].reason;
    ASSERT_EQ(idx.ranks.size(), 1u);
    EXPECT_EQ(idx.ranks[0].orderSource, "file_name");
    for (const Golden& g : golden) {
        const TensorRecord* hit = nullptr;
        for (const auto& op : idx.ops) {
            // Parameters are named by their parameter name only; ops carry the full scope ("--" for "/").
            const std::string scope = binNameToScope(idx.strings.view(op.name));
            if (scope != g.node && lastComponent(g.node) != scope) continue;
            if (int(op.iteration) != g.iteration) continue;
            for (std::uint32_t k = 0; k < op.tensorCount; ++k) {
                const auto& t = idx.tensors[op.firstTensor + k];
                if (t.io == Io::Output && t.slot == g.slot) hit = &t;
            }
        }
        ASSERT_TRUE(hit) << g.node << " slot " << g.slot << " iteration " << g.iteration;
        EXPECT_EQ(idx.side(*hit).dataBytes, g.bytes) << g.node;
        EXPECT_EQ(idx.shape(*hit), g.shape) << g.node;
        if (g.data.empty()) continue;
        ASSERT_EQ(g.data.size(), g.bytes);
        std::ifstream f(fs::path(idx.root) / idx.strings.str(idx.side(*hit).file), std::ios::binary);
        std::vector<std::uint8_t> bytes((std::istreambuf_iterator<char>(f)), {});
        EXPECT_EQ(bytes, g.data) << g.node;
    }
    ASSERT_EQ(report.formats.size(), 1u);
    EXPECT_EQ(report.formats[0], "MindSpore <=1.2 bin");
}

}  // namespace

TEST(GpuDumpGolden, SyncTransFalse) {
    checkAgainstGolden("sync_trans_false", "sync_trans_false_read_tensors.expected");
}
TEST(GpuDumpGolden, SyncTransTrue) { checkAgainstGolden("sync_trans_true", "sync_trans_true_read_tensors.expected"); }

TEST(GpuDumpGolden, EveryFileIndexedWithItsIteration) {
    const fs::path root = fs::path(DUMPLENS_SAMPLES_DIR) / "mindspore-tests/gpu_dumps/sync_trans_false";
    DumpIndex idx;
    IndexReport report;
    IndexOptions o;
    o.useCache = false;
    std::string error;
    ASSERT_TRUE(indexDump(root.string(), o, idx, report, error)) << error;
    EXPECT_EQ(idx.tensors.size(), 9u);
    EXPECT_EQ(idx.iterations(), (std::vector<std::uint32_t>{2, 3}));
    for (const auto& t : idx.tensors) EXPECT_TRUE(t.flags & HasData);
}
