// The serial part of distributed indexing: merging 1,000 shard files of a 1,000,000-tensor run
// (what `dumplens-cli merge` and MPI process 0 do), against just reading the same files.
#include <benchmark/benchmark.h>

#include <filesystem>
#include <string>
#include <vector>

#include "bench/synthetic_index.h"
#include "core/distributed/index_merge.h"
#include "core/index/index_file.h"
#include "core/index/index_serializer.h"

namespace fs = std::filesystem;
using namespace dl;

namespace {

constexpr std::size_t kShards = 1000, kTensorsPerShard = 1000;

const std::vector<std::string>& shardFiles() {
    static const std::vector<std::string> files = [] {
        // Per format version: files from an older build would not load.
        const std::string dir = "/tmp/dumplens_bench/shards_v" + std::to_string(kIndexFormatVersion);
        std::vector<std::string> out;
        fs::create_directories(dir);
        for (std::size_t s = 0; s < kShards; ++s) {
            const std::string path = dir + "/shard" + std::to_string(s) + ".dlx";
            if (!fs::exists(path)) {
                std::string error;
                saveIndexFile(path, syntheticIndex(kTensorsPerShard, 1, std::uint32_t(s)), error);
            }
            out.push_back(path);
        }
        return out;
    }();
    return files;
}

void BM_ReadShardFiles(benchmark::State& state) {
    std::size_t bytes = 0;
    for (auto _ : state) {
        for (const auto& f : shardFiles()) {
            std::vector<std::uint8_t> buf;
            std::string error;
            readWholeFile(f, buf, error);
            bytes += buf.size();
        }
    }
    state.SetBytesProcessed(std::int64_t(bytes));
}
BENCHMARK(BM_ReadShardFiles)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_MergeThousandShards(benchmark::State& state) {
    std::size_t tensors = 0;
    for (auto _ : state) {
        DumpIndex merged;
        std::string error;
        mergeIndexFiles(shardFiles(), merged, error);
        tensors = merged.tensors.size();
    }
    state.counters["tensors"] = double(tensors);
    state.counters["shards"] = double(kShards);
}
BENCHMARK(BM_MergeThousandShards)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(3);

}  // namespace

BENCHMARK_MAIN();
