// statistic.csv parsing throughput on a synthetic ~100 MB file (2.2 layout: 20 columns, and 2.3+
// default layout with trailing comma), plus the number-parsing choice it rests on:
// std::from_chars (libstdc++ 12) vs fast_float, when fast_float's header is installed.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <fstream>
#include <iterator>

#include <fcntl.h>
#include <unistd.h>

#include <charconv>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "core/formats/mindspore/statistic_csv.h"

#if __has_include(<fast_float/fast_float.h>)
#include <fast_float/fast_float.h>
#define DUMPLENS_HAVE_FAST_FLOAT 1
#endif

namespace {

std::string makeCsv(std::size_t targetBytes, bool ms23) {
    std::mt19937_64 rng(42);
    std::uniform_real_distribution<double> val(-70000.0, 70000.0);
    std::string s = ms23 ? "Op Type,Op Name,Task ID,Stream ID,Timestamp,IO,Slot,Data Size,Data Type,Shape,"
                           "Max Value,Min Value,L2Norm Value\n"
                         : "Op Type,Op Name,Task ID,Stream ID,Timestamp,IO,Slot,Data Size,Data Type,Shape,"
                           "Max Value,Min Value,Avg Value,Count,Negative Zero Count,Positive Zero Count,NaN Count,"
                           "Negative Inf Count,Positive Inf Count,Zero Count\n";
    s.reserve(targetBytes + 512);
    char buf[64];
    for (std::uint64_t i = 0; s.size() < targetBytes; ++i) {
        s += "MatMul,";
        s += ms23 ? "Default_network-WithLossCell__backbone-Baichuan_layers_" + std::to_string(i % 40) + "_MatMul-op" +
                std::to_string(i)
                  : "MatMul-op" + std::to_string(i);
        s += ",0,";
        s += std::to_string(i % 8);
        s += ",17339054468";
        s += std::to_string(10000 + i % 90000);
        s += (i & 1) ? ",input," : ",output,";
        s += std::to_string(i % 3);
        s += ",8388608,float16,\"(4096,1024)\"";
        for (int k = 0; k < 3; ++k) {
            auto r = std::to_chars(buf, buf + sizeof buf, val(rng), std::chars_format::general, 6);
            s += ',';
            s.append(buf, r.ptr);
        }
        if (ms23)
            s += ",\n";
        else
            s += ",4194304,2097000,2097000,0,0,0,304\n";
    }
    return s;
}

void parseBench(benchmark::State& state, bool ms23) {
    const std::string csv = makeCsv(std::size_t(state.range(0)) << 20, ms23);
    std::size_t rows = 0;
    for (auto _ : state) {
        std::vector<std::string> cols;
        std::vector<dl::StatisticCsvWarning> warnings;
        std::string err;
        rows = 0;
        double sink = 0;
        dl::parseStatisticCsv(
            csv,
            [&](dl::StatisticRow& r) {
                ++rows;
                sink += r.stats.max;
            },
            cols, warnings, err);
        benchmark::DoNotOptimize(sink);
    }
    state.SetBytesProcessed(std::int64_t(state.iterations() * csv.size()));
    state.counters["rows"] = double(rows);
}

void BM_StatisticCsv_Ms22(benchmark::State& s) { parseBench(s, false); }
void BM_StatisticCsv_Ms23(benchmark::State& s) { parseBench(s, true); }
BENCHMARK(BM_StatisticCsv_Ms22)->Arg(100)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_StatisticCsv_Ms23)->Arg(100)->Unit(benchmark::kMillisecond);

// The statistic.csv files of a real dump (DUMPLENS_STAT_DUMP=/tmp/dumplens-bench/stat_1000000,
// written by bench/make_statistic_dump.py): parsing them from memory, against read() of the same
// bytes from the page cache. Pin one core (taskset -c 0) for a per-core figure.
std::vector<std::string> dumpCsvPaths() {
    std::vector<std::string> paths;
    const char* dir = std::getenv("DUMPLENS_STAT_DUMP");
    if (!dir) return paths;
    for (const auto& e : std::filesystem::recursive_directory_iterator(dir))
        if (e.is_regular_file() && e.path().filename() == "statistic.csv") paths.push_back(e.path().string());
    std::sort(paths.begin(), paths.end());
    return paths;
}

void BM_StatisticCsv_DumpFiles(benchmark::State& state) {
    std::vector<std::string> texts;
    std::size_t bytes = 0;
    for (const auto& p : dumpCsvPaths()) {
        std::ifstream f(p, std::ios::binary);
        texts.emplace_back(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
        bytes += texts.back().size();
    }
    if (texts.empty()) {
        state.SkipWithError("set DUMPLENS_STAT_DUMP to a dump folder");
        return;
    }
    std::size_t rows = 0;
    for (auto _ : state) {
        rows = 0;
        double sink = 0;
        for (const auto& t : texts) {
            std::vector<std::string> cols;
            std::vector<dl::StatisticCsvWarning> warnings;
            std::string err;
            dl::parseStatisticCsv(
                t,
                [&](dl::StatisticRow& r) {
                    ++rows;
                    sink += r.stats.max;
                },
                cols, warnings, err);
        }
        benchmark::DoNotOptimize(sink);
    }
    state.SetBytesProcessed(std::int64_t(state.iterations() * bytes));
    state.counters["rows"] = double(rows);
}
BENCHMARK(BM_StatisticCsv_DumpFiles)->Unit(benchmark::kMillisecond);

void BM_Read_DumpFiles(benchmark::State& state) {
    const auto paths = dumpCsvPaths();
    if (paths.empty()) {
        state.SkipWithError("set DUMPLENS_STAT_DUMP to a dump folder");
        return;
    }
    std::vector<char> buf(std::size_t(1) << 20);
    std::size_t bytes = 0;
    for (auto _ : state) {
        bytes = 0;
        for (const auto& p : paths) {
            const int fd = ::open(p.c_str(), O_RDONLY | O_CLOEXEC);
            for (ssize_t n; fd >= 0 && (n = ::read(fd, buf.data(), buf.size())) > 0;) bytes += std::size_t(n);
            if (fd >= 0) ::close(fd);
        }
        benchmark::DoNotOptimize(bytes);
    }
    state.SetBytesProcessed(std::int64_t(state.iterations() * bytes));
}
BENCHMARK(BM_Read_DumpFiles)->Unit(benchmark::kMillisecond);

std::vector<std::string> numberStrings() {
    std::mt19937_64 rng(7);
    std::uniform_real_distribution<double> val(-70000.0, 70000.0);
    std::vector<std::string> v;
    char buf[64];
    for (int i = 0; i < 1 << 16; ++i) {
        auto r = std::to_chars(buf, buf + sizeof buf, val(rng), std::chars_format::general, 6);
        v.emplace_back(buf, r.ptr);
    }
    return v;
}

void BM_Number_FromChars(benchmark::State& state) {
    const auto nums = numberStrings();
    for (auto _ : state) {
        double sum = 0;
        for (const auto& n : nums) {
            double d = 0;
            std::from_chars(n.data(), n.data() + n.size(), d);
            sum += d;
        }
        benchmark::DoNotOptimize(sum);
    }
    state.SetItemsProcessed(std::int64_t(state.iterations() * nums.size()));
}
BENCHMARK(BM_Number_FromChars);

#ifdef DUMPLENS_HAVE_FAST_FLOAT
void BM_Number_FastFloat(benchmark::State& state) {
    const auto nums = numberStrings();
    for (auto _ : state) {
        double sum = 0;
        for (const auto& n : nums) {
            double d = 0;
            fast_float::from_chars(n.data(), n.data() + n.size(), d);
            sum += d;
        }
        benchmark::DoNotOptimize(sum);
    }
    state.SetItemsProcessed(std::int64_t(state.iterations() * nums.size()));
}
BENCHMARK(BM_Number_FastFloat);
#endif

}  // namespace

BENCHMARK_MAIN();
