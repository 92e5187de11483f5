// IncrementalIndex builds a shard folder by iteration folder (incremental_index.h): the merged
// index must hold what indexDump gives for the same files, record for record, whatever the order
// and the batches the files come in. Checked on the real MindSpore runs (three versions), the demo
// dumps (async, overflow-only with Opdebug records, kernel-by-kernel statistic.csv) and the
// sample corpus (GPU sync dumps, msprobe, stray files), fed sorted and in reverse in uneven batches.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "core/demo/pipeline_scenario.h"
#include "core/formats/mindspore/execution_order.h"
#include "core/index/dump_indexer.h"
#include "core/index/dump_scanner.h"
#include "core/io/npy_writer.h"
#include "core/watch/incremental_index.h"
#include "tests/core/shared_demo.h"
#include "tests/core/temp_dir.h"

namespace {

namespace fs = std::filesystem;

// One line per op in index order, with its tensors; its position among the ops of its (rank,
// iteration, graph), not execPos itself (plain .npy numbers it across folders).
struct Canonical {
    std::vector<std::string> ops;
    std::multiset<std::string> warnings;
    std::vector<std::string> ranks;
    std::string meta;
};

std::string bits(double d) { return std::to_string(std::bit_cast<std::uint64_t>(d)); }

Canonical canonical(const dl::DumpIndex& idx) {
    Canonical c;
    std::map<std::tuple<std::uint32_t, std::uint32_t, std::uint32_t>, int> position;
    for (const dl::OpRecord& o : idx.ops) {
        std::string s = std::to_string(o.rank) + "|" + std::to_string(o.iteration) + "|" + std::to_string(o.graph) +
            "|#" + std::to_string(position[{o.rank, o.iteration, o.graph}]++) + "|" + idx.strings.str(o.net) + "|" +
            idx.strings.str(o.type) + "|" + idx.strings.str(o.name) + "|" + idx.strings.str(o.scope) + "|" +
            std::to_string(o.taskId) + "|" + std::to_string(o.streamId) + "|" + std::to_string(o.startUs) + "|" +
            std::to_string(o.endUs) + "|" + idx.strings.str(o.tensorNames);
        if (o.overflow >= 0) s += "|overflow:" + idx.strings.str(idx.overflows[std::size_t(o.overflow)].file);
        for (std::uint32_t t = o.firstTensor; t < o.firstTensor + o.tensorCount; ++t) {
            const dl::TensorRecord& r = idx.tensors[t];
            const dl::TensorStats st = idx.stats(r);
            s += "\n  " + std::to_string(int(r.io)) + "." + std::to_string(r.slot) + " " +
                std::to_string(int(r.dtype)) + " f" + std::to_string(r.flags) + " " + idx.strings.str(r.format) + " [";
            for (std::int64_t d : idx.shape(r)) s += std::to_string(d) + ",";
            s += "] " + bits(st.min) + " " + bits(st.max) + " " + bits(st.mean) + " " + std::to_string(st.count) + " " +
                std::to_string(st.nanCount) + " " + std::to_string(st.posInfCount) + " " +
                std::to_string(st.negInfCount) + " " + std::to_string(r.timestampUs) + " " +
                (idx.side(r).file ? idx.strings.str(idx.side(r).file) : std::string("-"));
        }
        c.ops.push_back(std::move(s));
    }
    for (const dl::IndexWarning& w : idx.warnings)
        c.warnings.insert(w.path + "|" + w.reason + "|" + std::to_string(int(w.severity)));
    for (const dl::RankInfo& r : idx.ranks)
        c.ranks.push_back(std::to_string(r.rank) + "|" + r.folder + "|" + std::to_string(int(r.format)) + "|" +
                          r.orderSource + "|" + r.host + "|" + r.deviceId);
    c.meta = idx.meta.frameworkVersion + "|" + idx.meta.deviceTarget + "|" + idx.meta.dumpMode + "|" +
        std::to_string(idx.meta.opDebugMode);
    return c;
}

void expectSame(const Canonical& want, const Canonical& got) {
    ASSERT_EQ(got.ops.size(), want.ops.size());
    for (std::size_t i = 0; i < want.ops.size(); ++i) ASSERT_EQ(got.ops[i], want.ops[i]) << "op " << i;
    EXPECT_EQ(got.warnings, want.warnings);
    EXPECT_EQ(got.ranks, want.ranks);
    EXPECT_EQ(got.meta, want.meta);
}

// `index` of the folder: without a cache, or with the one in `cacheDir` (what it did in `report`).
dl::DumpIndex indexed(const fs::path& root, const std::string& cacheDir = {}, dl::IndexReport* report = nullptr) {
    dl::IndexOptions io;
    io.useCache = !cacheDir.empty();
    io.cacheDir = cacheDir;
    dl::DumpIndex index;
    dl::IndexReport local;
    std::string error;
    EXPECT_TRUE(dl::indexDump(root.string(), io, index, report ? *report : local, error)) << root << ": " << error;
    return index;
}

// Every file under `root` as the watcher hands it on, in rel order.
std::vector<dl::WatchedFile> filesOf(const fs::path& root) {
    std::vector<dl::WatchedFile> files;
    for (const dl::ScannedFile& f : dl::scanFolder(root.string()).files)
        files.push_back({f.rel, f.size, f.mtimeNs, f.stamp});
    return files;
}

// `files` handed to `idx` in batches of `batch`.
void feed(dl::IncrementalIndex& idx, const std::vector<dl::WatchedFile>& files, std::size_t batch) {
    for (std::size_t at = 0; at < files.size(); at += batch)
        idx.update(
            {files.begin() + std::ptrdiff_t(at), files.begin() + std::ptrdiff_t(std::min(files.size(), at + batch))},
            {});
}

// The shared demo dump with an Inf/NaN overflow, absolute.
fs::path infNanDemo() {
    dl::demo::DemoOptions options;
    options.mode = dl::demo::OverflowMode::InfNan;
    dl::demo::DemoVariantInfo info;
    return fs::absolute(dltest::sharedDemoVariant(options, info)).lexically_normal();
}

// The folder's files handed to an IncrementalIndex in batches of `batch`, in rel order or reversed.
dl::DumpIndex watched(const fs::path& root, bool reversed, std::size_t batch, std::size_t& units) {
    const std::string abs = fs::absolute(root).lexically_normal().string();
    std::vector<dl::WatchedFile> files = filesOf(abs);
    if (reversed) std::reverse(files.begin(), files.end());
    dl::IncrementalIndex idx(abs, "", 1);
    feed(idx, files, batch);
    EXPECT_EQ(idx.files(), files.size());
    units = idx.units();
    return idx.merged();
}

// Returns the units the sorted feed was built in.
std::size_t checkFolder(const fs::path& root) {
    SCOPED_TRACE(root.string());
    const Canonical want = canonical(indexed(fs::absolute(root).lexically_normal()));
    std::size_t sortedUnits = 0;
    for (const auto& [reversed, batch] : {std::pair{false, std::size_t(61)}, std::pair{true, std::size_t(97)}}) {
        SCOPED_TRACE(reversed ? "reversed" : "sorted");
        std::size_t units = 0;
        expectSame(want, canonical(watched(root, reversed, batch, units)));
        if (!reversed) sortedUnits = units;
    }
    return sortedUnits;
}

fs::path data(const char* rel) { return fs::path(DUMPLENS_TEST_DATA_DIR) / rel; }

TEST(IncrementalUnits, RealMindSporeRunsGiveTheRecordsOfIndex) {
    for (const char* version : {"2.0.0", "2.7.0", "2.10.0"})
        for (const char* net : {"forward_mul", "multigraph", "train_fixed", "train_sqrtgrad"})
            checkFolder(data("real/mindspore") / version / net);
}

TEST(IncrementalUnits, DemoDumpsGiveTheRecordsOfIndexBuiltFolderByFolder) {
    for (const auto& [name, options] : dl::demo::demoVariants()) {
        if (name == "bf16_fix" || name == "ms22_async_saturation") continue;  // the layout of ms22_async_infnan
        dl::demo::DemoVariantInfo info;
        const fs::path root = dltest::sharedDemoVariant(options, info);
        const std::size_t units = checkFolder(root);
        // Built by iteration folder indeed: one unit per rank_N/.../{iteration}/ folder holding files,
        // and one per rank folder for the rest (counted from the file list, not the index).
        std::set<std::string> iterationFolders, rankFolders;
        for (const dl::ScannedFile& f : dl::scanFolder(root).files) {
            rankFolders.insert(f.rel.substr(0, f.rel.find('/')));
            const std::string dir = f.rel.substr(0, f.rel.rfind('/'));
            const std::string last = dir.substr(dir.rfind('/') + 1);
            if (dir.find('/') != std::string::npos && !last.empty() &&
                std::all_of(last.begin(), last.end(), [](char ch) { return ch >= '0' && ch <= '9'; }))
                iterationFolders.insert(dir);
        }
        EXPECT_GT(units, rankFolders.size()) << name;
        EXPECT_EQ(units, iterationFolders.size() + rankFolders.size()) << name;
    }
}

// Statistics-only and tensor pipelines (PP2 x TP2, 1F1B, 4 micro-batches) with their execution
// order files: the shard's context, read by every iteration folder's build.
TEST(IncrementalUnits, PipelineRunsGiveTheRecordsOfIndex) {
    for (const bool tensors : {false, true}) {
        dltest::TempDir dir("dumplens_units_");
        dl::demo::PipelineSpec spec;
        spec.pipelineStages = 2;
        spec.tensorParallel = 2;
        spec.microBatches = 4;
        spec.iterations = 3;
        spec.originIteration = 1;
        spec.originStage = 1;
        spec.originLane = 1;
        dl::demo::ClusterScenarioOptions o;
        o.stagesInRankTable = false;
        o.writeTensors = tensors;
        o.executionOrder = true;
        dl::demo::ClusterScenarioTruth truth;
        std::string error;
        const fs::path root = dir.path / (tensors ? "tensors" : "statistics");
        ASSERT_TRUE(dl::demo::writePipelineRun(root.string(), spec, o, truth, error)) << error;
        checkFolder(root);
    }
}

TEST(IncrementalUnits, SampleCorpusGivesTheRecordsOfIndex) {
    for (const char* rel : {"samples/mindspore-tests/gpu_dumps/sync_trans_false",
                            "samples/mindspore-tests/gpu_dumps/sync_trans_true", "samples/msprobe", "samples/torch"})
        if (fs::exists(data(rel))) checkFolder(data(rel));
}

// Layouts where one build decides per rank from all its folders: MindSpore <= 1.2 sync dumps with
// kernels in several iteration folders and no timestamps (one "ordered by file name" note per rank,
// not per folder), plain np.save dumps in numeric folders (one modification-time order across
// folders), and a rank whose first folder holds statistics only (its format the strongest).
TEST(IncrementalUnits, PerRankDecisionsAreThoseOfOneBuild) {
    dltest::TempDir dir("dumplens_units_rank_");
    // <= 1.2: the sample's kernel folder copied into three more iterations.
    const fs::path sample = data("samples/mindspore-tests/gpu_dumps/sync_trans_false/alexnet");
    const fs::path legacy = dir.path / "legacy" / "alexnet";
    fs::create_directories(legacy);
    fs::copy(sample, legacy, fs::copy_options::recursive);
    for (const char* it : {"iteration_4", "iteration_5", "iteration_10"})
        fs::copy(legacy / "device_0/iteration_2", legacy / "device_0" / it, fs::copy_options::recursive);
    checkFolder(dir.path / "legacy");
    // np.save files in numeric folders, modification times interleaving two folders of one step.
    const fs::path npyRoot = dir.path / "npy";
    int k = 0;
    for (const char* part : {"fwd", "bwd"})
        for (const char* step : {"1", "2"})
            for (int i = 0; i < 3; ++i) {
                const fs::path f = npyRoot / part / step / ("t" + std::to_string(i) + ".npy");
                fs::create_directories(f.parent_path());
                std::ofstream(f, std::ios::binary)
                    << std::string("\x93NUMPY\x01\x00v\x00", 10)
                    << "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }" << std::string(117 - 57, ' ') << "\n"
                    << std::string("\x00\x00\x80\x3f", 4);
                fs::last_write_time(f,
                                    fs::file_time_type::clock::now() - std::chrono::hours(1) +
                                        std::chrono::seconds((i * 4 + k++ % 4) * 7));
            }
    {
        const dl::DumpIndex npy = indexed(fs::absolute(npyRoot));
        ASSERT_EQ(npy.ops.size(), 12u);
        ASSERT_EQ(npy.ranks.size(), 1u);
        EXPECT_EQ(npy.ranks[0].format, dl::DumpFormat::PlainNpy);
    }
    checkFolder(npyRoot);
    // Statistics only in the first iteration folder of the rank, tensors in the later ones.
    dl::demo::DemoOptions options;
    options.mode = dl::demo::OverflowMode::InfNan;
    dl::demo::DemoVariantInfo info;
    const fs::path demo = dltest::sharedDemoVariant(options, info);
    const fs::path mixed = dir.path / "mixed";
    fs::create_directories(mixed);
    fs::copy(demo / "rank_0", mixed / "rank_0", fs::copy_options::recursive);
    std::size_t removed = 0;
    for (const auto& e : fs::directory_iterator(mixed / "rank_0/Baichuan2/0/0"))
        if (e.path().extension() == ".npy") removed += fs::remove(e.path());
    ASSERT_GT(removed, 0u);
    std::ofstream(mixed / "rank_0/Baichuan2/0/0/statistic.csv")
        << "Op Type,Op Name,Task ID,Stream ID,Timestamp,IO,Slot,Data Size,Data Type,Shape,Max Value,Min Value\n"
        << "Add,Add-op1,1,0,1700000000000000,output,0,4,float16,\"(2)\",1.0,0.5\n";
    {
        const dl::DumpIndex m = indexed(fs::absolute(mixed));
        EXPECT_TRUE(std::any_of(m.ops.begin(), m.ops.end(), [&](const dl::OpRecord& o) {
            return m.strings.view(o.name) == "Add-op1" && o.iteration == 0;
        }));
        ASSERT_EQ(m.ranks.size(), 1u);
        EXPECT_EQ(m.ranks[0].format, dl::DumpFormat::MindSporeNpy);
    }
    checkFolder(mixed);
}

// Settled units written out of memory (IncrementalIndex::setSpill) answer as those kept in it:
// read back for merged(), restored when a late file lands in one, rebuilt from the dump when a
// spill file was damaged; the spill folder goes with the index.
TEST(IncrementalUnits, SpilledUnitsGiveTheSameIndexAndALateFileRestoresOne) {
    const fs::path root = infNanDemo();
    const Canonical want = canonical(indexed(root));
    std::vector<dl::WatchedFile> files = filesOf(root);
    // One file held back: it lands last, in a folder spilled long before.
    const auto late = std::find_if(files.begin(), files.end(), [](const dl::WatchedFile& f) {
        return f.rel.starts_with("rank_1/") && f.rel.ends_with(".npy");
    });
    ASSERT_NE(late, files.end());
    const dl::WatchedFile lateFile = *late;
    files.erase(late);
    dltest::TempDir spillRoot("dumplens_spill_");
    const std::string spillDir = (spillRoot.path / "spill").string();
    std::size_t spilledBefore = 0;
    {
        dl::IncrementalIndex idx(root.string(), "", 1);
        idx.setSpill(spillDir, 2);
        feed(idx, files, 200);
        for (int i = 0; i < 3; ++i) idx.update({}, {});  // batches pass: the last units settle too
        spilledBefore = idx.spilledUnits();
        EXPECT_GT(spilledBefore, idx.units() / 2);
        EXPECT_EQ(idx.files(), files.size());
        EXPECT_FALSE(fs::is_empty(spillDir));
        idx.update({lateFile}, {});
        EXPECT_EQ(idx.spilledUnits(), spilledBefore - 1);  // its folder read back
        EXPECT_EQ(idx.files(), files.size() + 1);
        EXPECT_EQ(idx.tensors(), [&] {
            std::size_t n = 0;
            for (const std::string& op : want.ops) n += std::size_t(std::count(op.begin(), op.end(), '\n'));
            return n;
        }());
        expectSame(want, canonical(idx.merged()));
        // A damaged spill is not trusted: its folder is listed and built again from the dump.
        for (int i = 0; i < 3; ++i) idx.update({}, {});
        fs::path victim;
        for (const auto& e : fs::directory_iterator(spillDir))
            if (e.path().extension() == ".dlunit") victim = e.path();
        ASSERT_FALSE(victim.empty());
        std::ofstream(victim, std::ios::binary | std::ios::trunc) << "not a spill";
        expectSame(want, canonical(idx.merged()));
        const std::vector<std::string> notes = idx.takeNotes();
        ASSERT_EQ(notes.size(), 1u);
        EXPECT_NE(notes[0].find("unreadable"), std::string::npos) << notes[0];
        // Every spill damaged, then every file handed on again unchanged (what a watcher's rescan
        // does): each unit is listed and built again from the dump, and written out again once settled.
        for (int i = 0; i < 3; ++i) idx.update({}, {});
        const std::size_t spilled = idx.spilledUnits();
        ASSERT_GT(spilled, 0u);
        for (const auto& e : fs::directory_iterator(spillDir))
            if (e.path().extension() == ".dlunit")
                std::ofstream(e.path(), std::ios::binary | std::ios::trunc) << "damaged";
        files.push_back(lateFile);
        idx.update(files, {});
        EXPECT_EQ(idx.takeNotes().size(), spilled);
        EXPECT_EQ(idx.files(), files.size());
        expectSame(want, canonical(idx.merged()));
        EXPECT_TRUE(idx.takeNotes().empty());  // rebuilt by the update, not by merged()
        for (int i = 0; i < 17; ++i) idx.update({}, {});
        EXPECT_EQ(idx.spilledUnits(), idx.units() - 4);  // every iteration folder settled (4 ranks' unit "" stay)
        expectSame(want, canonical(idx.merged()));
    }
    EXPECT_FALSE(fs::exists(spillDir));
}

// The rank's execution order orders every iteration folder's ops (file names without timestamps):
// each unit's build needs it, but it is parsed once per shard and reused while it keeps its size and
// stamp (a 100,000-kernel order or IR parsed per folder would cost each batch seconds). Shown by
// what a build reads: the file on disk is rewritten behind the watch's back (the watcher would hand
// it on with a new stamp; here it is not), and the next folder's ops still follow the order parsed
// first. Handed on, the rewritten file is parsed again and every folder is ordered by it.
TEST(IncrementalUnits, OrderFilesAreParsedOncePerShardAndAgainWhenChanged) {
    dltest::TempDir tmp;
    const fs::path root = fs::absolute(tmp.path).lexically_normal();
    const std::string scope = "Default/network-Net/layer-Cell/";
    const std::vector<std::string> kernels = {scope + "MatMul-op7", scope + "Add-op3", scope + "Mul-op5"};
    const auto orderCsv = [](std::vector<std::string> names) {
        std::string s = "NodeExecutionOrder-FullNameWithScope\n";
        for (const std::string& n : names) s += n + "\n";
        return s;
    };
    dltest::writeFile(root / "rank_0/execution_order/ms_execution_order_graph_0.csv", orderCsv(kernels));
    const auto writeIteration = [&](int it) {
        for (const std::string& k : kernels) {
            const std::string type = k.substr(k.rfind('/') + 1, k.find("-op") - k.rfind('/') - 1);
            const fs::path p = root / "rank_0/Net/0" / std::to_string(it) /
                (type + "." + dl::scopeToFileName(k, dl::ScopeNameForm::ScopedMs23) +
                 ".0.0.0.output.0.DefaultFormat.float16.npy");
            fs::create_directories(p.parent_path());
            std::string bytes, error;
            ASSERT_TRUE(dl::encodeFloats({1, 2}, dl::DType::Float16, bytes, error)) << error;
            ASSERT_TRUE(dl::writeNpyFile(p.string(), dl::DType::Float16, {2}, bytes, error)) << error;
        }
    };
    const auto handed = [&](const std::string& prefix) {
        std::vector<dl::WatchedFile> out = filesOf(root);
        std::erase_if(out, [&](const dl::WatchedFile& f) { return !f.rel.starts_with(prefix); });
        return out;
    };
    const auto opOrder = [](const dl::DumpIndex& idx, std::uint32_t iteration) {
        std::vector<std::string> names;
        for (const dl::OpRecord& o : idx.ops)
            if (o.iteration == iteration) names.push_back(idx.strings.str(o.scope));
        return names;
    };
    writeIteration(0);
    dl::IncrementalIndex idx(root.string(), "", 1);
    idx.update(handed("rank_0/"), {});
    ASSERT_EQ(opOrder(idx.merged(), 0), kernels);
    // Rewritten on disk, not handed on: a build that read it again would order iteration 1 by it.
    const std::vector<std::string> reversed(kernels.rbegin(), kernels.rend());
    dltest::writeFile(root / "rank_0/execution_order/ms_execution_order_graph_0.csv", orderCsv(reversed) + "\n");
    writeIteration(1);
    idx.update(handed("rank_0/Net/0/1/"), {});
    dl::DumpIndex merged = idx.merged();
    EXPECT_EQ(opOrder(merged, 1), kernels);
    EXPECT_EQ(merged.ranks.at(0).orderSource, "execution_order");
    // Handed on (new size and stamp): parsed again, and both folders follow it, as index gives.
    idx.update(handed("rank_0/execution_order/"), {});
    merged = idx.merged();
    EXPECT_EQ(opOrder(merged, 0), reversed);
    EXPECT_EQ(opOrder(merged, 1), reversed);
    expectSame(canonical(indexed(root)), canonical(merged));
}

// The cache a watch leaves beside the dump (writeCaches, its spilled units read back once each) is
// the one `index` would write: every shard of it is taken unchanged by the next index of the dump,
// and gives the same records.
TEST(IncrementalUnits, TheCacheAWatchLeavesIsTakenByIndex) {
    const fs::path root = infNanDemo();
    const Canonical want = canonical(indexed(root));
    dltest::TempDir tmp("dumplens_watch_cache_");
    const std::string cacheDir = (tmp.path / "cache").string();
    {
        dl::IncrementalIndex idx(root.string(), cacheDir, 1);
        idx.setSpill((tmp.path / "spill").string(), 1);
        feed(idx, filesOf(root), 300);
        for (int i = 0; i < 2; ++i) idx.update({}, {});
        ASSERT_GT(idx.spilledUnits(), 0u);
        EXPECT_TRUE(idx.writeCaches().empty());
    }
    dl::IndexReport report;
    const dl::DumpIndex index = indexed(root, cacheDir, &report);
    EXPECT_EQ(report.shardsIndexed, 0u);
    EXPECT_GT(report.shardsFromCache, 1u);
    expectSame(want, canonical(index));
}

}  // namespace
