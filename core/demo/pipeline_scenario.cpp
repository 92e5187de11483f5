#include "core/demo/pipeline_scenario.h"

#include <cmath>
#include <exception>
#include <memory>

#include "core/demo/cluster_truth.h"
#include "core/demo/cluster_writer.h"
#include "core/demo/demo_random.h"
#include "core/demo/graph_ir_writer.h"

namespace dl::demo {

namespace {

constexpr float kFp16Limit = 65504.f;

// |dm * up| at the origin grows almost linearly with the spike (the forward barely feels it: SiLU
// of the gate is near 0 there), so a probe run up to the origin iteration finds the spike for
// which it is 3x 65504: an overflow, while the down weight's gradient (far smaller) stays finite.
bool calibrate(PipelineSpec& spec, std::string& error) {
    PipelineSpec probe = spec;
    probe.iterations = spec.originIteration + 1;
    probe.killedIteration = -1;
    for (int round = 0; round < 1; ++round) {
        PipelineSim sim(probe);
        sim.run();
        if (!(sim.dgateProbe > 0) || !std::isfinite(sim.dgateProbe)) {
            error = "pipeline run: calibration probe found no dgate value";
            return false;
        }
        probe.upWeightSpike *= 3.f * kFp16Limit / sim.dgateProbe;
    }
    spec.upWeightSpike = probe.upWeightSpike;
    return true;
}

}  // namespace

std::vector<std::int64_t> pipelineClockOffsets(int ranks, std::int64_t maxUs) {
    Rng rng{4242};
    std::vector<std::int64_t> out;
    for (int r = 0; r < ranks; ++r) out.push_back(std::int64_t((rng.uniform() * 2 - 1) * double(maxUs)));
    return out;
}

bool writePipelineRun(const std::string& root, const PipelineSpec& given, const ClusterScenarioOptions& options,
                      ClusterScenarioTruth& truth, std::string& error) {
    try {
        PipelineSpec spec = given;
        const int ranks = spec.pipelineStages * spec.tensorParallel * spec.dataParallel;
        spec.baseTimestampUs = options.baseTimestampUs;
        if (!options.rankClockOffsetUs.empty()) spec.rankClockOffsetUs = options.rankClockOffsetUs;
        if (spec.rankClockOffsetUs.empty()) spec.rankClockOffsetUs = pipelineClockOffsets(ranks, 200000);
        if (!calibrate(spec, error)) return false;
        PipelineSim sim0(spec);
        sim0.run();
        // The probe's linear step can miss by a little: one more step from the real run if so.
        std::unique_ptr<PipelineSim> retry;
        if (sim0.dgateProbe < 1.5f * kFp16Limit || sim0.dgateProbe > 8.f * kFp16Limit) {
            spec.upWeightSpike *= 3.f * kFp16Limit / sim0.dgateProbe;
            retry = std::make_unique<PipelineSim>(spec);
            retry->run();
        }
        PipelineSim& sim = retry ? *retry : sim0;
        truth = ClusterScenarioTruth{};
        if (!deriveClusterTruth(sim.trace, truth, error)) return false;
        truth.rankClockOffsetUs = spec.rankClockOffsetUs;
        truth.dataParallel = spec.dataParallel;
        truth.microBatches = spec.microBatches;
        truth.killedIteration = spec.killedIteration;
        for (int rp = 0; rp < spec.dataParallel; ++rp)
            for (int st = 0; st < spec.pipelineStages; ++st) {
                truth.tpGroups.emplace_back();
                for (int ln = 0; ln < spec.tensorParallel; ++ln)
                    truth.tpGroups.back().push_back(sim.rankOf(rp, st, ln));
            }
        truth.replicaOfRank.assign(std::size_t(ranks), 0);
        for (int rp = 0; rp < spec.dataParallel; ++rp)
            for (int st = 0; st < spec.pipelineStages; ++st)
                for (int ln = 0; ln < spec.tensorParallel; ++ln)
                    truth.replicaOfRank[std::size_t(sim.rankOf(rp, st, ln))] = rp;
        for (const PipelinePair& p : sim.pairs) {
            const ClusterOp& s = sim.trace.ops[std::size_t(p.sendOp)];
            const ClusterOp& r = sim.trace.ops[std::size_t(p.recvOp)];
            truth.pairs.push_back({s.rank, r.rank, s.iteration, s.fullName, r.fullName, s.backward});
        }
        const int originRank = sim.rankOf(0, spec.originStage, spec.originLane);
        if (truth.spontaneousOverflows != 1 || truth.origin.opType != "Mul" || truth.origin.rank != originRank ||
            truth.origin.iteration != spec.originIteration ||
            truth.origin.fullName.find("/gradMul/") == std::string::npos) {
            error = "pipeline run: expected 1 overflow at the SwiGLU-backward Mul on rank " +
                std::to_string(originRank) + " in iteration " + std::to_string(spec.originIteration) + ", simulated " +
                std::to_string(truth.spontaneousOverflows) + " starting at " + truth.origin.fullName + " on rank " +
                std::to_string(truth.origin.rank) + " in iteration " + std::to_string(truth.origin.iteration);
            return false;
        }
        ClusterWriteOptions w;
        w.netName = options.netName;
        w.writeTensors = options.writeTensors;
        w.stagesInRankTable = options.stagesInRankTable;
        w.timestamps = options.timestamps;
        w.overflowOnly = options.overflowOnly;
        w.tornLastRow = spec.killedIteration >= 0;
        w.executionOrder = options.executionOrder;
        if (!writeClusterDump(root, sim.trace, w, truth.filesWritten, error)) return false;
        return !options.graphIr || writeGraphIrAndTruth(root, sim.trace, truth, error);
    } catch (const std::exception& e) {
        error = e.what();
        return false;
    }
}

}  // namespace dl::demo
