// A statistic.csv growing while the watch indexes it (MindSpore statistics mode keeps the file
// open and appends a row per tensor): IncrementalIndex reads each time only what was added.
// Checked against values the test wrote itself (not the parser's own reading) and against `index`
// of the finished file; the cost is checked through the bytes read, never the time.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "core/index/dump_indexer.h"
#include "core/index/dump_scanner.h"
#include "core/watch/incremental_index.h"
#include "tests/core/temp_dir.h"

namespace {

namespace fs = std::filesystem;

const std::string kRel = "rank_0/Net/0/0/statistic.csv";
const std::string kHeader =
    "Op Type,Op Name,Task ID,Stream ID,Timestamp,IO,Slot,Data Size,Data Type,Shape,Max Value,Min Value,L2Norm "
    "Value\n";

// What the test wrote for one row: the independent reading.
struct Written {
    std::string opName;
    int slot = 0;
    bool input = false;
    double max = 0, min = 0;
    bool inf = false;
    std::vector<std::int64_t> shape;
};

std::vector<Written> makeRows(int n) {
    std::vector<Written> rows;
    for (int k = 0; k < n; ++k) {
        Written w;
        w.opName = "Default/network/Add-op" + std::to_string(k / 2);
        w.input = k % 2 == 0;
        w.slot = 0;
        w.max = 10 + k;
        w.min = -(k % 7);
        w.inf = k == 137;
        w.shape = {std::int64_t(1 + k % 5), std::int64_t(2 + k % 3)};
        rows.push_back(w);
    }
    return rows;
}

std::string rowText(const Written& w, int k) {
    std::string shape = "\"(";
    for (std::size_t i = 0; i < w.shape.size(); ++i) shape += (i ? "," : "") + std::to_string(w.shape[i]);
    shape += ")\"";
    return "Add," + w.opName + ",0,0," + std::to_string(1733905446822806LL + 100 * (k / 2)) + "," +
        (w.input ? "input" : "output") + "," + std::to_string(w.slot) + ",12,float16," + shape + "," +
        (w.inf ? std::string("inf") : std::to_string(int(w.max))) + "," + std::to_string(int(w.min)) + ",5\n";
}

dl::WatchedFile watched(const fs::path& root, const std::string& rel) {
    const dl::ScanResult scan = dl::scanFolder(root.string());
    for (const dl::ScannedFile& f : scan.files)
        if (f.rel == rel) return {f.rel, f.size, f.mtimeNs, f.stamp};
    ADD_FAILURE() << rel << " not found";
    return {};
}

// One tensor as the index holds it, in a form two indexes can be compared by.
using TensorKey = std::tuple<std::string, int, int, double, double, bool, std::vector<std::int64_t>>;
std::vector<TensorKey> tensorsOf(const dl::DumpIndex& idx) {
    std::vector<TensorKey> out;
    for (const dl::TensorRecord& t : idx.tensors) {
        const dl::TensorStats s = idx.stats(t);
        std::vector<std::int64_t> shape(idx.dims.begin() + t.shapeOffset, idx.dims.begin() + t.shapeOffset + t.ndim);
        out.emplace_back(std::string(idx.strings.str(idx.ops[t.op].name)), int(t.io), int(t.slot),
                         s.has(dl::stat::Max) ? s.max : -1e300, s.has(dl::stat::Min) ? s.min : -1e300,
                         s.has(dl::stat::PosInfCount) && s.posInfCount > 0, shape);
    }
    std::sort(out.begin(), out.end());
    return out;
}

std::vector<TensorKey> expected(const std::vector<Written>& rows, std::size_t n) {
    std::vector<TensorKey> out;
    for (std::size_t k = 0; k < n; ++k) {
        const Written& w = rows[k];
        out.emplace_back(w.opName, int(w.input ? dl::Io::Input : dl::Io::Output), w.slot, w.inf ? -1e300 : w.max, w.min,
                         w.inf, w.shape);
    }
    std::sort(out.begin(), out.end());
    return out;
}

// Each test's dump: a folder in a temporary directory with the folders of its statistic.csv made.
class IncrementalStatisticCsv : public ::testing::Test {
protected:
    void SetUp() override { fs::create_directories((root / kRel).parent_path()); }
    dltest::TempDir tmp;
    const fs::path root = tmp.path / "dump";
};

TEST_F(IncrementalStatisticCsv, GrowingFileGivesTheRowsOfOneWholeReadReadingOnlyWhatWasAdded) {
    const std::vector<Written> rows = makeRows(300);
    std::string all = kHeader;
    std::vector<std::size_t> rowEnds;  // byte offset just past each row
    for (std::size_t k = 0; k < rows.size(); ++k) {
        all += rowText(rows[k], int(k));
        rowEnds.push_back(all.size());
    }
    std::size_t longestLine = kHeader.size();
    for (std::size_t k = 0; k < rows.size(); ++k)
        longestLine = std::max(longestLine, rowEnds[k] - (k ? rowEnds[k - 1] : kHeader.size()));

    dl::IncrementalIndex idx(fs::absolute(root).string(), "", 1);
    const int fd = ::open((root / kRel).c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    ASSERT_GE(fd, 0);
    // Appends of varying size: a row and a half, single rows, several rows; many end mid-line.
    std::size_t written = 0, step = 0, reads = 0;
    std::uint64_t lastRead = 0;
    while (written < all.size()) {
        const std::size_t sizes[] = {37, 150, 91, 400, 13, 260};
        const std::size_t n = std::min(all.size() - written, sizes[step++ % 6]);
        ASSERT_EQ(::write(fd, all.data() + written, n), ssize_t(n));
        written += n;
        idx.update({watched(root, kRel)}, {});
        ++reads;
        const std::uint64_t read = idx.tableBytesRead() - lastRead;
        lastRead = idx.tableBytesRead();
        // What was appended, plus at most the partial line left from the last read and the 64
        // bytes that tell an append from a rewrite: proportional to the append, not to the file.
        EXPECT_GE(read, n) << "append " << step;
        EXPECT_LE(read, n + longestLine + 64) << "append " << step;
        const std::size_t complete =
            std::size_t(std::upper_bound(rowEnds.begin(), rowEnds.end(), written) - rowEnds.begin());
        ASSERT_EQ(tensorsOf(idx.merged()), expected(rows, complete)) << "after " << written << " bytes";
    }
    ::close(fd);
    EXPECT_EQ(idx.tablesParsed(), reads);
    // Read once in all, plus the per-append overlap: a whole re-read each time would be ~reads/2 x.
    EXPECT_LE(idx.tableBytesRead(), all.size() + reads * (longestLine + 64));
    EXPECT_GT(std::uint64_t(reads) * all.size() / 4, idx.tableBytesRead());

    // `index` of the finished file reads it whole: the same tensors, warnings and ops.
    dl::DumpIndex whole;
    dl::IndexReport report;
    dl::IndexOptions o;
    o.useCache = false;
    o.threads = 1;
    std::string error;
    ASSERT_TRUE(dl::indexDump(root.string(), o, whole, report, error)) << error;
    const dl::DumpIndex watchedIndex = idx.merged();
    EXPECT_EQ(tensorsOf(watchedIndex), tensorsOf(whole));
    EXPECT_EQ(tensorsOf(whole), expected(rows, rows.size()));
    ASSERT_EQ(watchedIndex.ops.size(), whole.ops.size());
    for (std::size_t i = 0; i < whole.ops.size(); ++i) {
        EXPECT_EQ(watchedIndex.strings.str(watchedIndex.ops[i].name), whole.strings.str(whole.ops[i].name));
        EXPECT_EQ(watchedIndex.ops[i].tensorCount, whole.ops[i].tensorCount);
    }
    EXPECT_EQ(watchedIndex.warnings.size(), whole.warnings.size());
}

// Malformed rows say the same line numbers as a whole read, however the appends cut the file;
// a rewritten file (shorter, then different bytes) is read again from its start.
TEST_F(IncrementalStatisticCsv, WarningsKeepTheirLinesAndARewriteStartsOver) {
    const std::vector<Written> rows = makeRows(20);
    std::string all = kHeader;
    for (std::size_t k = 0; k < rows.size(); ++k) {
        all += rowText(rows[k], int(k));
        if (k == 6) all += "Add,broken,row\n";  // line 9
    }
    dl::IncrementalIndex idx(fs::absolute(root).string(), "", 1);
    for (std::size_t at = 0; at < all.size();) {
        const std::size_t n = std::min<std::size_t>(all.size() - at, 70);
        std::ofstream(root / kRel, std::ios::binary | std::ios::app) << all.substr(at, n);
        at += n;
        idx.update({watched(root, kRel)}, {});
    }
    const dl::DumpIndex grown = idx.merged();
    ASSERT_EQ(grown.warnings.size(), 1u);
    EXPECT_EQ(grown.warnings[0].reason, "line 9: has 3 fields, header has 13");
    EXPECT_EQ(tensorsOf(grown), expected(rows, rows.size()));

    // Rewritten with fewer rows, then with the same size but other values: read from the start.
    std::string shorter = kHeader;
    for (std::size_t k = 0; k < 5; ++k) shorter += rowText(rows[k], int(k));
    dltest::writeFile(root / kRel, shorter);
    idx.update({watched(root, kRel)}, {});
    EXPECT_EQ(tensorsOf(idx.merged()), expected(rows, 5));
    std::vector<Written> other = rows;
    for (auto& w : other) w.max += 1;  // same widths for these rows: 10+k -> 11+k
    std::string rewritten = kHeader;
    for (std::size_t k = 0; k < 5; ++k) rewritten += rowText(other[k], int(k));
    ASSERT_EQ(rewritten.size(), shorter.size());
    dltest::writeFile(root / kRel, rewritten);
    idx.update({watched(root, kRel)}, {});
    EXPECT_EQ(tensorsOf(idx.merged()), expected(other, 5));
    EXPECT_TRUE(idx.merged().warnings.empty());
}

}  // namespace
