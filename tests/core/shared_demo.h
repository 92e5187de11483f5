#pragma once
// Demo dumps shared by every test process of one ctest run. Writing a variant (~4,500 files) costs
// ~2 s of CPU, almost all of it in the kernel creating files, and gtest_discover_tests runs each
// TEST in a process of its own, so a SetUpTestSuite alone still wrote the demo once per TEST.
//
// Under ctest, DUMPLENS_TEST_DEMO_CACHE names a folder in the build tree that the fixture test
// `demo_cache_reset` empties at the start of every run (so a changed demo writer is never
// tested from stale files). The first process to ask for a set of options writes it there under
// an flock, into a temporary folder renamed into place, with the writer's own account (info.json)
// beside it; the others read that back. Outside ctest (an executable run by hand) each process
// writes what it asks for once, into a temporary folder removed at exit.
//
// The returned folders are shared: tests must not write into them (copy, or write their own).
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <bit>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/demo/demo_dumps.h"
#include "tests/core/temp_dir.h"

namespace dltest {

namespace shared_demo_detail {

namespace fs = std::filesystem;
using dl::demo::DemoOptions;
using dl::demo::DemoSummary;
using dl::demo::DemoVariantInfo;

// Every option takes part in the key; a new field must be added here (the size check says so).
inline std::string optionsKey(const DemoOptions& o) {
    static_assert(sizeof(DemoOptions) == 160, "DemoOptions changed: add the new field to optionsKey");
    std::ostringstream s;
    s << int(o.layout) << '.' << int(o.mode) << '.' << int(o.scenario) << '.' << o.iterations << '.'
      << o.overflowIteration << '.' << o.decoyIteration << '.' << int(o.sqrtGradPrecision) << '.' << o.overflowOnly
      << '.' << o.writeStatistics << '.' << o.baseTimestampUs << '.' << o.graphId << '.' << o.netName << '.'
      << o.msVersion;
    for (auto v : o.rankClockOffsetUs) s << ",c" << v;
    for (const auto& c : o.statisticCategories) s << ",s" << c;
    return s.str();
}

// Floats travel as their bits: the losses of an INF/NAN run are not JSON numbers.
inline std::vector<std::uint32_t> floatBits(const std::vector<float>& v) {
    std::vector<std::uint32_t> out;
    for (float f : v) out.push_back(std::bit_cast<std::uint32_t>(f));
    return out;
}
inline std::vector<float> bitsFloat(const std::vector<std::uint32_t>& v) {
    std::vector<float> out;
    for (std::uint32_t b : v) out.push_back(std::bit_cast<float>(b));
    return out;
}

inline nlohmann::json toJson(const DemoVariantInfo& i) {
    static_assert(sizeof(DemoVariantInfo) == 208, "DemoVariantInfo changed: add the new field to toJson/fromJson");
    return {{"culpritType", i.culpritType},
            {"culpritShortName", i.culpritShortName},
            {"culpritFullName", i.culpritFullName},
            {"culpritRank", i.culpritRank},
            {"firstOverflowIteration", i.firstOverflowIteration},
            {"culpritOutputFiles", i.culpritOutputFiles},
            {"decoyOpFullName", i.decoyOpFullName},
            {"decoyRank", i.decoyRank},
            {"decoyMaxAbs", floatBits({i.decoyMaxAbs})},
            {"lossPerIteration", floatBits(i.lossPerIteration)},
            {"filesWritten", i.filesWritten},
            {"bytesWritten", i.bytesWritten}};
}

inline DemoVariantInfo infoFromJson(const nlohmann::json& j) {
    DemoVariantInfo i;
    j.at("culpritType").get_to(i.culpritType);
    j.at("culpritShortName").get_to(i.culpritShortName);
    j.at("culpritFullName").get_to(i.culpritFullName);
    j.at("culpritRank").get_to(i.culpritRank);
    j.at("firstOverflowIteration").get_to(i.firstOverflowIteration);
    j.at("culpritOutputFiles").get_to(i.culpritOutputFiles);
    j.at("decoyOpFullName").get_to(i.decoyOpFullName);
    j.at("decoyRank").get_to(i.decoyRank);
    i.decoyMaxAbs = bitsFloat(j.at("decoyMaxAbs").get<std::vector<std::uint32_t>>()).at(0);
    i.lossPerIteration = bitsFloat(j.at("lossPerIteration").get<std::vector<std::uint32_t>>());
    j.at("filesWritten").get_to(i.filesWritten);
    j.at("bytesWritten").get_to(i.bytesWritten);
    return i;
}

// The folder entries live in: the ctest run's cache, or this process's own temporary folder.
inline const fs::path& cacheRoot() {
    static const std::unique_ptr<TempDir> own =
        std::getenv("DUMPLENS_TEST_DEMO_CACHE") ? nullptr : std::make_unique<TempDir>("dumplens_demo_cache_");
    static const fs::path root = own ? own->path : fs::path(std::getenv("DUMPLENS_TEST_DEMO_CACHE"));
    return root;
}

// Holds an flock on `<root>/<key>.lock` for as long as it lives (one writer per entry at a time).
class EntryLock {
public:
    explicit EntryLock(const fs::path& lockFile) : m_fd(::open(lockFile.c_str(), O_CREAT | O_RDWR | O_CLOEXEC, 0644)) {
        if (m_fd < 0 || ::flock(m_fd, LOCK_EX) != 0) throw std::runtime_error("cannot lock " + lockFile.string());
    }
    ~EntryLock() { ::close(m_fd); }
    EntryLock(const EntryLock&) = delete;
    EntryLock& operator=(const EntryLock&) = delete;

private:
    int m_fd;
};

// `<root>/<hash>/dump` written by `write` (which fills the meta JSON) unless already there; the
// meta JSON is stored beside the dump, never inside it. Throws with the writer's reason on failure.
inline fs::path entry(
    const std::string& key, nlohmann::json& meta,
    const std::function<bool(const fs::path& dump, nlohmann::json& meta, std::string& error)>& write) {
    static std::mutex mutex;  // the flock is per open file, so threads of one process take this first
    std::lock_guard<std::mutex> guard(mutex);
    const fs::path& root = cacheRoot();
    fs::create_directories(root);
    std::ostringstream name;
    name << std::hex << std::hash<std::string>{}(key);
    const fs::path dir = root / name.str();
    EntryLock lock(root / (name.str() + ".lock"));
    if (!fs::exists(dir / "meta.json")) {
        const fs::path tmp = root / (name.str() + ".tmp" + std::to_string(::getpid()));
        fs::remove_all(tmp);
        fs::create_directories(tmp);
        std::string error;
        nlohmann::json written;
        if (!write(tmp / "dump", written, error)) {
            fs::remove_all(tmp);
            throw std::runtime_error("demo fixture: " + error);
        }
        written["key"] = key;
        std::ofstream(tmp / "meta.json") << written.dump();
        fs::remove_all(dir);
        fs::rename(tmp, dir);
    }
    std::ifstream in(dir / "meta.json");
    meta = nlohmann::json::parse(in);
    if (meta.at("key") != key) throw std::runtime_error("demo fixture: hash collision in " + dir.string());
    return dir / "dump";
}

}  // namespace shared_demo_detail

// A demo variant written with `options` (see writeDemoVariant), and the writer's account of it.
// `appMarker` adds the marker the app's loader checks before writing a bundled variant itself
// (ui/jobs/dump_loader.cpp), for GUI tests that link the variant into the app's demo folder.
inline std::string sharedDemoVariant(const dl::demo::DemoOptions& options, dl::demo::DemoVariantInfo& info,
                                     bool appMarker = false) {
    using namespace shared_demo_detail;
    nlohmann::json meta;
    const fs::path dump = entry("variant:" + optionsKey(options) + (appMarker ? ":marker" : ""), meta,
                                [&](const fs::path& d, nlohmann::json& m, std::string& error) {
                                    DemoVariantInfo written;
                                    if (!dl::demo::writeDemoVariant(d.string(), options, written, error)) return false;
                                    if (appMarker) std::ofstream(d / ".dumplens_demo_complete") << "ok\n";
                                    m["info"] = toJson(written);
                                    return true;
                                });
    info = infoFromJson(meta.at("info"));
    return dump.string();
}

// Every bundled variant under one folder, as `dumplens-cli demo` writes them (writeDemoDumps).
inline std::string sharedDemoDumps(dl::demo::DemoSummary& summary) {
    using namespace shared_demo_detail;
    nlohmann::json meta;
    const fs::path dump = entry("dumps", meta, [](const fs::path& d, nlohmann::json& m, std::string& error) {
        DemoSummary s;
        if (!dl::demo::writeDemoDumps(d.string(), s, error)) return false;
        m["variants"] = s.variants;
        m["culpritOpName"] = s.culpritOpName;
        m["firstOverflowIteration"] = s.firstOverflowIteration;
        m["notes"] = s.notes;
        return true;
    });
    static_assert(sizeof(DemoSummary) == 96, "DemoSummary changed: store the new field in sharedDemoDumps");
    summary = DemoSummary{};
    meta.at("variants").get_to(summary.variants);
    meta.at("culpritOpName").get_to(summary.culpritOpName);
    meta.at("firstOverflowIteration").get_to(summary.firstOverflowIteration);
    meta.at("notes").get_to(summary.notes);
    return dump.string();
}

}  // namespace dltest
