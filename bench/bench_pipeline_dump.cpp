// Writes a simulated pipeline run (core/demo/pipeline_scenario.h) as a statistics-only MindSpore
// 2.4 dump for the chain benchmarks of docs/PERFORMANCE.md ("The chain at production scale"),
// and its ground truth as JSON next to it (never inside the dump):
//
//   bench_pipeline_dump OUT_DIR [--pp 4] [--tp 2] [--dp 1] [--mb 203] [--layers 24] [--iterations 4]
//                       [--killed 3] [--schedule 1f1b|gpipe|interleaved] [--offset-us 200000] [--graph-ir 0|1]
//
// OUT_DIR/dump is the dump root, OUT_DIR/truth.json the origin, stages, chain and pair count.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "core/demo/pipeline_scenario.h"

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr,
                     "usage: %s OUT_DIR [--pp N] [--tp N] [--dp N] [--mb N] [--layers N] [--iterations N] "
                     "[--killed N] [--schedule 1f1b|gpipe|interleaved] [--offset-us N] [--graph-ir 0|1]\n",
                     argv[0]);
        return 2;
    }
    dl::demo::PipelineSpec spec;
    bool graphIr = false;
    spec.microBatches = 203;
    spec.layersPerStage = 24;
    spec.killedIteration = 3;
    std::int64_t offset = 200000;
    for (int i = 2; i + 1 < argc; i += 2) {
        const std::string k = argv[i], v = argv[i + 1];
        if (k == "--pp")
            spec.pipelineStages = std::atoi(v.c_str());
        else if (k == "--tp")
            spec.tensorParallel = std::atoi(v.c_str());
        else if (k == "--dp")
            spec.dataParallel = std::atoi(v.c_str());
        else if (k == "--mb")
            spec.microBatches = std::atoi(v.c_str());
        else if (k == "--layers")
            spec.layersPerStage = std::atoi(v.c_str());
        else if (k == "--iterations")
            spec.iterations = std::atoi(v.c_str());
        else if (k == "--killed")
            spec.killedIteration = std::atoi(v.c_str());
        else if (k == "--offset-us")
            offset = std::atoll(v.c_str());
        else if (k == "--graph-ir")
            graphIr = v == "1";
        else if (k == "--schedule")
            spec.schedule = v == "gpipe" ? dl::demo::PipelineSchedule::GPipe
                : v == "interleaved"     ? dl::demo::PipelineSchedule::Interleaved
                                         : dl::demo::PipelineSchedule::OneFOneB;
        else {
            std::fprintf(stderr, "unknown option %s\n", k.c_str());
            return 2;
        }
    }
    spec.originStage = std::min(2, spec.pipelineStages - 1);
    spec.originLane = spec.tensorParallel - 1;
    const std::string out = argv[1], root = out + "/dump";
    std::error_code ec;
    if (std::filesystem::exists(root, ec)) {
        std::fprintf(stderr, "%s exists: not overwriting\n", root.c_str());
        return 1;
    }
    dl::demo::ClusterScenarioOptions o;
    o.stagesInRankTable = false;
    o.graphIr = graphIr;  // rank_N/graphs/*.ir: the chain's same-rank hops along its data edges
    o.rankClockOffsetUs =
        dl::demo::pipelineClockOffsets(spec.pipelineStages * spec.tensorParallel * spec.dataParallel, offset);
    dl::demo::ClusterScenarioTruth truth;
    std::string error;
    const auto t0 = std::chrono::steady_clock::now();
    if (!dl::demo::writePipelineRun(root, spec, o, truth, error)) {
        std::fprintf(stderr, "%s\n", error.c_str());
        return 1;
    }
    std::size_t rows = 0;
    for (const auto& r : truth.tensorsPerRankIteration)
        for (std::size_t n : r) rows += n;
    nlohmann::json j = {
        {"ranks", truth.ranks},
        {"stages", truth.pipelineStages},
        {"micro_batches", truth.microBatches},
        {"rows", rows},
        {"pairs", truth.pairs.size()},
        {"stage_of_rank", truth.stageOfRank},
        {"clock_offsets_us", truth.rankClockOffsetUs},
        {"origin",
         {{"rank", truth.origin.rank}, {"iteration", truth.origin.iteration}, {"op", truth.origin.fullName}}}};
    nlohmann::json chain = nlohmann::json::array();
    for (const auto& s : truth.chain)
        chain.push_back({{"ranks", s.ranks},
                         {"first_reached", s.firstReached},
                         {"via", dl::demo::clusterViaName(s.via)},
                         {"iteration", s.iteration},
                         {"op", s.fullName}});
    j["chain"] = chain;
    std::ofstream(out + "/truth.json") << j.dump(1) << "\n";
    std::printf("%zu rows, %zu pairs, %d ranks, written in %.1f s\n", rows, truth.pairs.size(), truth.ranks,
                std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    return 0;
}
