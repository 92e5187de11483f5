// Indexing speed: a folder of many small .npy files against just opening and reading them, and
// reopening a 1,000,000-tensor index from its cache file.
//   DUMPLENS_BENCH_FILES (default 100000) small files are generated once under /tmp/dumplens_bench.
#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "bench/synthetic_index.h"
#include "core/index/dump_indexer.h"
#include "core/index/dump_scanner.h"
#include "core/index/index_serializer.h"
#include "core/io/npy_writer.h"

namespace fs = std::filesystem;
using namespace dl;

namespace {

std::size_t fileCount() {
    const char* e = std::getenv("DUMPLENS_BENCH_FILES");
    return e ? std::size_t(std::atoll(e)) : 100000;
}

// rank_{r}/Net/0/{iteration}/ with 1000 tensors (fp16, 256 elements) per folder.
const std::string& smallFileDump() {
    static const std::string root = [] {
        const std::size_t n = fileCount();
        const std::string dir = "/tmp/dumplens_bench/npy_" + std::to_string(n);
        if (fs::exists(dir + "/complete")) return dir;
        fs::remove_all(dir);
        std::vector<float> values(256);
        for (std::size_t i = 0; i < values.size(); ++i) values[i] = float(i) * 0.37f - 40.0f;
        std::string payload, error;
        encodeFloats(values, DType::Float16, payload, error);
        const std::string bytes = makeNpyHeader("<f2", {16, 16}) + payload;
        for (std::size_t i = 0; i < n; ++i) {
            const std::size_t folder = i / 1000;
            const std::string d = dir + "/rank_" + std::to_string(folder % 4) + "/Net/0/" + std::to_string(folder / 4);
            if (i % 1000 == 0) fs::create_directories(d);
            const std::string name = "MatMul.MatMul-op" + std::to_string(i / 2) + ".1.2." +
                std::to_string(1700000000000000 + i) + (i % 2 ? ".output.0" : ".input.0") + ".DefaultFormat.npy";
            std::ofstream(d + "/" + name, std::ios::binary).write(bytes.data(), std::streamsize(bytes.size()));
        }
        std::ofstream(dir + "/complete") << "ok";
        return dir;
    }();
    return root;
}

void BM_OpenAndReadEveryFile(benchmark::State& state) {
    const auto scan = scanFolder(smallFileDump());
    std::vector<char> buf(1 << 16);
    std::uint64_t bytes = 0;
    for (auto _ : state) {
        for (const auto& f : scan.files) {
            const int fd = ::open((smallFileDump() + "/" + f.rel).c_str(), O_RDONLY);
            ssize_t n;
            while ((n = ::read(fd, buf.data(), buf.size())) > 0) bytes += std::uint64_t(n);
            ::close(fd);
        }
    }
    state.SetItemsProcessed(std::int64_t(state.iterations() * scan.files.size()));
    state.SetBytesProcessed(std::int64_t(bytes));
    state.counters["files"] = double(scan.files.size());
}
BENCHMARK(BM_OpenAndReadEveryFile)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_IndexSmallFiles(benchmark::State& state) {
    IndexOptions opt;
    opt.useCache = false;
    opt.threads = unsigned(state.range(0));
    std::size_t tensors = 0;
    for (auto _ : state) {
        DumpIndex idx;
        IndexReport rep;
        std::string error;
        indexDump(smallFileDump(), opt, idx, rep, error);
        tensors = idx.tensors.size();
    }
    state.SetItemsProcessed(std::int64_t(state.iterations() * tensors));
    state.counters["tensors"] = double(tensors);
}
BENCHMARK(BM_IndexSmallFiles)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_ReopenMillionTensorIndex(benchmark::State& state) {
    const std::string path = "/tmp/dumplens_bench/million.dlshard";
    static const auto sizes = [&] {
        const DumpIndex idx = syntheticIndex(1000000);
        std::string error;
        writeFileAtomically(path, serializeIndex(idx, {}, 1), error);
        std::size_t names = idx.strings.bytes();
        std::size_t fixed = idx.tensors.size() * sizeof(TensorRecord) + idx.ops.size() * sizeof(OpRecord) +
            idx.dims.size() * sizeof(std::int64_t) + idx.histBytes.size() + idx.wideStats.size() * sizeof(TensorStats);
        return std::pair(fixed, names);
    }();
    std::size_t tensors = 0;
    for (auto _ : state) {
        std::vector<std::uint8_t> bytes;
        std::string error;
        DumpIndex idx;
        FolderFingerprint fp;
        readWholeFile(path, bytes, error);
        deserializeIndex(bytes.data(), bytes.size(), idx, fp, error);
        tensors = idx.tensors.size();
    }
    state.counters["tensors"] = double(tensors);
    state.counters["bytes_per_tensor_beyond_names"] = double(sizes.first) / 1e6;
    state.counters["name_bytes_per_tensor"] = double(sizes.second) / 1e6;
    state.counters["cache_file_MB"] = double(fs::file_size(path)) / 1e6;
}
// Process CPU time: the decompression runs on TBB workers too.
BENCHMARK(BM_ReopenMillionTensorIndex)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->MeasureProcessCPUTime()
    ->Iterations(3);

}  // namespace

BENCHMARK_MAIN();
