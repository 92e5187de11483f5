// Each index warning says itself whether content was lost (IndexWarning::severity, set where it is
// written): on a dump with files made unreadable in several ways and files read in full with notes
// (an unknown column, a duplicate row, a folder reached twice), the analysis counts exactly the
// files made unreadable, its text says "K file(s) could not be read" with that K, and the
// severities come back unchanged from the cache.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/analysis/analysis_json.h"
#include "core/analysis/overflow_analyzer.h"
#include "core/demo/demo_dumps.h"
#include "core/index/dump_indexer.h"
#include "tests/core/temp_dir.h"

namespace fs = std::filesystem;
using namespace dl;

namespace {

std::vector<std::string> lines(const std::string& text) {
    std::vector<std::string> out;
    std::istringstream in(text);
    for (std::string l; std::getline(in, l);) out.push_back(l);
    return out;
}

// A small clean run (statistic.csv next to the npy files), then damage and notes made by hand.
struct Dump {
    dltest::TempDir dir{"dumplens_severity_"};
    std::set<std::string> unreadable;  // files made unreadable, relative to the root
    std::set<std::string> noted;       // files read in full that the index should note
    Dump() {
        demo::DemoOptions o;
        o.layout = demo::DemoLayout::Ms24KernelByKernel;
        o.scenario = demo::DemoScenario::Clean;
        o.iterations = 1;
        demo::DemoVariantInfo info;
        std::string error;
        if (!demo::writeDemoVariant(dir.path.string(), o, info, error)) throw std::runtime_error(error);
        std::vector<std::string> npys, csvs;
        for (const auto& e : fs::recursive_directory_iterator(dir.path)) {
            const std::string rel = fs::relative(e.path(), dir.path).string();
            if (e.path().extension() == ".npy") npys.push_back(rel);
            if (e.path().filename() == "statistic.csv") csvs.push_back(rel);
        }
        std::sort(npys.begin(), npys.end());
        std::sort(csvs.begin(), csvs.end());
        if (npys.empty() || csvs.size() < 2)
            throw std::runtime_error("the demo wrote no npy or fewer than 2 statistic.csv");
        const fs::path root = dir.path;
        // Unreadable: a truncated npy, a malformed statistic.csv row (a field too many), a broken Opdebug
        // record, a broken symbolic link, a .bin whose name follows no dump grammar.
        fs::resize_file(root / npys.front(), 20);
        unreadable.insert(npys.front());
        {
            std::vector<std::string> l = lines(dltest::readText(root / csvs[0]));
            const std::string bad = l.at(1) + ",not-a-field";
            l.insert(l.begin() + 2, bad);
            std::ofstream out(root / csvs[0], std::ios::binary | std::ios::trunc);
            for (const std::string& x : l) out << x << "\n";
            unreadable.insert(csvs[0]);
        }
        const fs::path rankDir = fs::path(csvs[0]).parent_path();
        const std::string opdebug = (rankDir / "Opdebug.Node_OpDebug.99.0.1700000000000001.output.0.json").string();
        dltest::writeFile(root / opdebug, "{\"AI Core\": {broken");
        unreadable.insert(opdebug);
        const std::string link = (rankDir / "gone.npy").string();
        fs::create_symlink(root / "nowhere.npy", root / link);
        unreadable.insert(link);
        const std::string junk = (rankDir / "not_a_dump_name.bin").string();
        dltest::writeFile(root / junk, std::string(64, '\0'));
        unreadable.insert(junk);
        // Notes: the other statistic.csv gets an unknown column and a duplicate row; a link makes
        // the scanner reach one folder twice.
        {
            std::vector<std::string> l = lines(dltest::readText(root / csvs[1]));
            for (std::size_t i = 0; i < l.size(); ++i) {  // the header must lead with Op Type; rows end in ','
                if (!l[i].empty() && l[i].back() == ',') l[i].pop_back();
                l[i] += i == 0 ? ",Extra Column" : ",7";
            }
            l.insert(l.begin() + 2, l.at(1));
            std::ofstream out(root / csvs[1], std::ios::binary | std::ios::trunc);
            for (const std::string& x : l) out << x << "\n";
            noted.insert(csvs[1]);
        }
        fs::create_directory(root / "spare");
        fs::create_directory_symlink(root / "spare", root / "spare_link");
    }
};

IndexOptions noCache() {
    IndexOptions o;
    o.useCache = false;
    return o;
}

// Distinct paths of the warnings with severity `s`.
std::set<std::string> pathsOf(const DumpIndex& idx, WarningSeverity s) {
    std::set<std::string> out;
    for (const IndexWarning& w : idx.warnings)
        if (w.severity == s) out.insert(w.path);
    return out;
}

}  // namespace

TEST(WarningSeverity, CountsExactlyTheFilesMadeUnreadable) {
    const Dump d;
    DumpIndex idx;
    IndexReport rep;
    std::string error;
    ASSERT_TRUE(indexDump(d.dir.path.string(), noCache(), idx, rep, error)) << error;
    // Every file made unreadable has an unreadable warning, and nothing else has one.
    EXPECT_EQ(pathsOf(idx, WarningSeverity::Unreadable), d.unreadable);
    // The notes are there, on files and folders read in full: an unknown column, the duplicate
    // row, the folder reached a second time through the link.
    std::size_t column = 0, duplicate = 0, revisited = 0;
    for (const IndexWarning& w : idx.warnings) {
        if (w.severity != WarningSeverity::Note) continue;
        column += d.noted.count(w.path) && w.reason.find("ignored unknown column 'Extra Column'") != std::string::npos;
        duplicate += d.noted.count(w.path) && w.reason.find("duplicate row") != std::string::npos;
        revisited += w.reason.find("folder already visited") != std::string::npos;
    }
    EXPECT_EQ(column, 1u);
    EXPECT_EQ(duplicate, 1u);
    EXPECT_EQ(revisited, 1u);

    const AnalysisResult r = analyze(idx);
    EXPECT_EQ(r.unreadableFiles, d.unreadable.size());
    const std::string text = toText(idx, r);
    EXPECT_NE(text.find("\n" + std::to_string(d.unreadable.size()) + " file(s) could not be read:\n"),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("Verdict: clean among"), std::string::npos) << text;
    for (const std::string& n : d.noted) {
        const std::size_t tail = text.rfind("file(s) could not be read:");
        EXPECT_EQ(text.find(n + ": ", tail), std::string::npos) << n << " listed as unreadable";
    }
}

TEST(WarningSeverity, SeveritiesComeBackFromTheCache) {
    const Dump d;
    dltest::TempDir cache("dumplens_severity_cache_");
    IndexOptions o;
    o.cacheDir = cache.path.string();
    DumpIndex first, second;
    IndexReport r1, r2;
    std::string error;
    ASSERT_TRUE(indexDump(d.dir.path.string(), o, first, r1, error)) << error;
    ASSERT_TRUE(indexDump(d.dir.path.string(), o, second, r2, error)) << error;
    ASSERT_GT(r2.shardsFromCache, 0u);
    ASSERT_EQ(second.warnings.size(), first.warnings.size());
    for (std::size_t i = 0; i < first.warnings.size(); ++i) {
        EXPECT_EQ(second.warnings[i].path, first.warnings[i].path);
        EXPECT_EQ(second.warnings[i].severity, first.warnings[i].severity) << first.warnings[i].reason;
    }
    EXPECT_EQ(pathsOf(second, WarningSeverity::Unreadable), d.unreadable);
    EXPECT_EQ(analyze(second).unreadableFiles, d.unreadable.size());
}
