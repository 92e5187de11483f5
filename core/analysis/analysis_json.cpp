#include "core/analysis/analysis_json.h"

#include <cmath>

#include "core/analysis/statistic_overflow.h"
#include "core/analysis/tensor_anomaly.h"
#include "core/index/run_framework.h"
#include "core/util/half.h"

namespace dl {

namespace {

using nlohmann::json;

json numberOrNull(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }
json stageJson(int s) { return s >= 0 ? json(s) : json(nullptr); }

std::string tensorName(const DumpIndex& idx, std::uint32_t t) {
    return t == kNoIndex || t >= idx.tensors.size() ? "output.0" : tensorLabel(idx, idx.tensors[t]);
}

json pointJson(const DumpIndex& idx, const OverflowPoint& p) {
    const OpRecord& o = idx.ops[p.op];
    json j = {{"rank", p.rank},
              {"stage", stageJson(p.stage)},
              {"iteration", p.iteration},
              {"op_type", idx.strings.str(o.type)},
              {"op_name", idx.strings.str(o.name)},
              {"tensor", tensorName(idx, p.tensor)},
              {"kind", anomalyKindName(p.kind)},
              {"timestamp_us", p.timestampUs},
              {"corrected_timestamp_us", p.correctedUs},
              {"op_index", p.op},
              {"tensor_index", p.tensor == kNoIndex ? json(nullptr) : json(p.tensor)}};
    if (o.scope) j["scope"] = idx.strings.str(o.scope);
    if (!p.opdebugStatus.empty()) j["opdebug_status"] = p.opdebugStatus;
    if (!p.peerRanks.empty()) j["tp_peer_ranks"] = p.peerRanks;
    return j;
}

// A dumped tensor's figures (null when not dumped).
json tensorFigures(const DumpIndex& idx, std::uint32_t t) {
    if (t == kNoIndex || t >= idx.tensors.size()) return nullptr;
    const TensorRecord& r = idx.tensors[t];
    const TensorStats st = idx.stats(r);
    return {{"tensor", tensorLabel(idx, r)},      {"dtype", std::string(dtypeName(r.dtype))},
            {"max_abs", numberOrNull(st.maxAbs)}, {"min", numberOrNull(st.min)},
            {"max", numberOrNull(st.max)},        {"inf_count", st.infCount()},
            {"nan_count", st.nanCount},           {"anomaly", anomalyKindName(classifyTensor(idx, r).kind)}};
}

json opNameOrNull(const DumpIndex& idx, std::uint32_t op) {
    return op == kNoIndex || op >= idx.ops.size() ? json(nullptr) : json(idx.strings.str(idx.ops[op].name));
}

// The graph IR's data edges of a dataflow hop.
json pathJson(const DumpIndex& idx, const std::vector<DataflowEdge>& path) {
    json a = json::array();
    for (const DataflowEdge& e : path)
        a.push_back({{"producer", e.producer},
                     {"producer_op", opNameOrNull(idx, e.producerOp)},
                     {"output_slot", e.outputSlot},
                     {"consumer", e.consumer},
                     {"consumer_op", opNameOrNull(idx, e.consumerOp)},
                     {"input_slot", e.inputSlot}});
    return a;
}

// What linked a chain step to the step it came from.
json viaDetailJson(const DumpIndex& idx, const AnalysisResult& r, const ChainStep& s) {
    if (s.causedBy < 0) return nullptr;
    const ChainStep& from = r.chain[std::size_t(s.causedBy)];
    json d = {{"from_rank", from.at.rank}, {"from_op", idx.strings.str(idx.ops[from.at.op].name)}};
    if (s.linkOp != kNoIndex && s.linkOp < idx.ops.size()) {
        const OpRecord& l = idx.ops[s.linkOp];
        d["link_op"] = idx.strings.str(l.name);
        d["link_op_type"] = idx.strings.str(l.type);
        d["link_rank"] = l.rank;
        d["link_iteration"] = l.iteration;
    }
    if (s.via == ChainVia::SendReceive) {
        d["send_op"] = d.value("link_op", std::string());
        d["receive_op"] = idx.strings.str(idx.ops[s.at.op].name);
        d["tag"] = s.tag >= 0 ? json(s.tag) : json(nullptr);
        d["evidence"] = s.pairEvidence.empty() ? json(nullptr) : json(s.pairEvidence);
    }
    if (s.via == ChainVia::Collective) {
        d["type"] = d.value("link_op_type", std::string());
        d["group_ranks"] = s.groupRanks;
    }
    if (s.via == ChainVia::WeightUpdate) d["optimizer_in_dump"] = s.linkOp != kNoIndex;
    if (s.via == ChainVia::Dataflow) d["path"] = pathJson(idx, s.path);
    return d;
}

json replayJson(const ReplayResult& r) {
    json j = {{"op_type", r.opType},
              {"available", r.available},
              {"recommendation", r.recommendation},
              {"recommendation_from_replay", r.recommendationFromReplay},
              {"results", json::array()}};
    if (!r.available) j["unavailable_reason"] = r.unavailableReason;
    for (const ReplayPrecisionResult& p : r.results)
        j["results"].push_back({{"dtype", std::string(dtypeName(p.dtype))},
                                {"max_abs", numberOrNull(p.maxAbs)},
                                {"max_abs_unrounded", numberOrNull(p.maxAbsUnrounded)},
                                {"overflow", p.overflow},
                                {"inf_count", p.infCount},
                                {"nan_count", p.nanCount},
                                {"saturated_count", p.saturatedCount},
                                {"rel_err_vs_fp32", p.relErrVsFp32 >= 0 ? json(p.relErrVsFp32) : json(nullptr)}});
    if (r.available) {
        j["reproduces_overflow"] = r.reproducesOverflow;
        j["fp16_mode"] = r.saturatingFp16 ? "saturation" : "inf_nan";
        j["max_diff_vs_dump"] = r.maxDiffVsDump >= 0 ? json(r.maxDiffVsDump) : json(nullptr);
    }
    j["notes"] = r.notes;
    return j;
}

}  // namespace

json firstOverflowJson(const DumpIndex& idx, const AnalysisResult& r) {
    if (!r.firstOverflow) return nullptr;
    json fo = pointJson(idx, *r.firstOverflow);
    fo["value_made_by"] = r.valueMadeBy ? json{{"op_type", idx.strings.str(idx.ops[*r.valueMadeBy].type)},
                                               {"op_name", idx.strings.str(idx.ops[*r.valueMadeBy].name)},
                                               {"op_index", *r.valueMadeBy}}
                                        : json(nullptr);
    {
        // Each input of the origin with what produced it, by the graph IR (empty without one).
        json inputs = json::array();
        for (const OriginInput& in : r.originInputs)
            inputs.push_back({{"slot", in.slot},
                              {"source", in.source},
                              {"producer", in.producer},
                              {"producer_op", opNameOrNull(idx, in.producerOp)},
                              {"output_slot", in.source == "kernel" ? json(in.outputSlot) : json(nullptr)},
                              {"producer_figures", tensorFigures(idx, in.producerTensor)},
                              {"input_figures", tensorFigures(idx, in.tensor)}});
        fo["inputs"] = std::move(inputs);
    }
    return fo;
}

json chainJson(const DumpIndex& idx, const AnalysisResult& r) {
    json chain = json::array();
    for (const ChainStep& s : r.chain) {
        json step = pointJson(idx, s.at);
        step["role"] = chainRoleName(s.role);
        step["note"] = s.note;
        step["caused_by"] = s.causedBy < 0 ? json(nullptr) : json(s.causedBy);
        step["via"] = s.causedBy < 0 ? json(nullptr) : json(chainViaName(s.via));
        step["via_detail"] = viaDetailJson(idx, r, s);
        step["peer_ranks"] = s.at.peerRanks;
        // null where no message links the rank's clock to the reference clock: not comparable.
        step["aligned_us"] = r.chainOrderedByClock && s.clockAligned ? json(s.alignedUs) : json(nullptr);
        step["order_key"] = s.orderKey;
        chain.push_back(step);
    }
    return chain;
}

bool renumberIndices(json& j, const std::function<std::optional<std::uint64_t>(std::uint32_t)>& op,
                     const std::function<std::optional<std::uint64_t>(std::uint32_t)>& tensor) {
    if (j.is_array()) {
        for (json& e : j)
            if (!renumberIndices(e, op, tensor)) return false;
        return true;
    }
    if (!j.is_object()) return true;
    for (auto it = j.begin(); it != j.end(); ++it) {
        const bool isOp = it.key() == "op_index", isTensor = it.key() == "tensor_index";
        if ((isOp || isTensor) && it->is_number_unsigned()) {
            const std::optional<std::uint64_t> n = (isOp ? op : tensor)(it->get<std::uint32_t>());
            if (!n) return false;
            *it = *n;
        } else if (!renumberIndices(*it, op, tensor)) {
            return false;
        }
    }
    return true;
}

nlohmann::json toJson(const DumpIndex& idx, const AnalysisResult& r) {
    json j;
    j["schema"] = "dumplens.analysis/1";
    j["verdict"] = r.overflow ? "overflow" : r.noData ? "no_data" : "clean";
    // Finite values whose Mean/L2 overflowed in their own dtype: not an overflow, a lost statistic.
    const std::vector<std::uint32_t> statOverflows = findStatisticOverflows(idx);
    j["statistic_overflows"] = statOverflows.size();
    j["statistic_overflow_note"] =
        statOverflows.empty() ? json(nullptr) : json(statisticOverflowNote(idx, statOverflows));
    const RunFramework fw = runFramework(idx);
    const auto orNull = [](const std::string& v) { return v.empty() ? json(nullptr) : json(v); };
    j["framework"] = {{"name", orNull(fw.name)},
                      {"version", orNull(fw.version)},
                      {"msprobe_task", orNull(fw.msprobeTask)},
                      {"msprobe_level", orNull(fw.msprobeLevel)}};
    j["first_overflow"] = firstOverflowJson(idx, r);
    j["graph_ir"] = r.graphIrRead;
    j["chain"] = chainJson(idx, r);
    j["chain_order"] = r.chainOrderedByFlow ? "happens_before_then_pipeline_flow"
        : r.chainOrderedByClock             ? "happens_before_then_clock"
                                            : "happens_before_then_execution_order";
    j["replay"] = r.replay ? replayJson(*r.replay) : json(nullptr);
    // Every warning as {"path","reason"}: the files the index could not read, then the analysis'
    // own (path null).
    j["warnings"] = json::array();
    // "unreadable": data of that file was lost (counted in unreadable_files), else a note on how it was read.
    for (std::size_t i = 0; i < r.fileWarnings.size(); ++i)
        j["warnings"].push_back({{"path", r.fileWarnings[i].first},
                                 {"reason", r.fileWarnings[i].second},
                                 {"unreadable", i < r.fileWarningUnreadable.size() && r.fileWarningUnreadable[i]}});
    for (const std::string& w : r.warnings)
        j["warnings"].push_back({{"path", nullptr}, {"reason", w}, {"unreadable", false}});
    j["unreadable_files"] = r.unreadableFiles;
    j["separate_runs"] = r.separateRuns;  // the roots of separate runs in the folder; [] for one run
    j["evidence"] = r.evidence;
    json iters = json::array();
    for (const IterationStatus& s : r.iterations)
        iters.push_back({{"iteration", s.iteration},
                         {"overflow", s.overflow},
                         {"anomalous_ops", s.anomalousOps},
                         {"ranks", s.ranks}});
    j["persistence"] = {{"kind", persistenceName(r.persistence)},
                        {"first_iteration", r.firstBadIteration ? json(*r.firstBadIteration) : json(nullptr)},
                        {"iterations", iters}};
    json near = json::array();
    for (const NearLimitEntry& e : r.nearLimit) {
        const OpRecord& o = idx.ops[e.op];
        near.push_back({{"rank", o.rank},
                        {"iteration", o.iteration},
                        {"op_type", idx.strings.str(o.type)},
                        {"op_name", idx.strings.str(o.name)},
                        {"tensor", tensorName(idx, e.tensor)},
                        {"dtype", std::string(dtypeName(idx.tensors[e.tensor].dtype))},
                        {"max_abs", e.maxAbs},
                        // e.fp16MaxShare holds the share of 65504; "headroom" is the room left below it.
                        {"fp16_max_share", e.fp16MaxShare},
                        {"headroom", 1 - e.fp16MaxShare},
                        {"cast_to_fp16", e.castToFp16},
                        {"past_fp16_max", e.maxAbs > kFp16Max}});
    }
    j["near_limit"] = {{"threshold", r.nearLimitThreshold}, {"total", r.nearLimitTotal}, {"tensors", near}};
    json ranks = json::object();
    for (const auto& [rank, stage] : r.stages.stageOfRank) ranks[std::to_string(rank)] = stage;
    j["stages"] = {{"source", r.stages.source},       {"count", r.stages.stageCount},
                   {"confident", r.stages.confident}, {"ranks", ranks},
                   {"tp_groups", r.stages.tpGroups},  {"replicas", r.stages.replicas}};
    json clocks = json::object(), uncertainty = json::object();
    for (const auto& [rank, off] : r.clockOffsetUs) {
        clocks[std::to_string(rank)] = off;
        // null: the offset is a causality bound or the reference, not an estimate with an error.
        const auto u = r.clockUncertaintyUs.find(rank);
        uncertainty[std::to_string(rank)] = u == r.clockUncertaintyUs.end() ? json(nullptr) : json(u->second);
    }
    j["clock_offsets_us"] = clocks;
    j["clock_offset_uncertainty_us"] = uncertainty;
    json byEvidence = json::object();
    for (const auto& [ev, n] : r.pairsByEvidence) byEvidence[ev] = n;
    j["counts"] = {{"tensors", r.tensorsExamined},
                   {"anomalous_tensors", r.anomalousTensors},
                   {"anomalous_ops", r.anomalousOps},
                   {"comm_pairs", r.commPairs},
                   {"unmatched_receives", r.unmatchedReceives},
                   {"readable_tensors", r.readableTensors},
                   {"ambiguous_pairs", r.ambiguousPairs},
                   {"pairs_statistics_differ", r.pairsStatisticsDiffer},
                   {"pairs_by_evidence", byEvidence}};
    // Every Send/Receive pair with what tied it.
    json pairs = json::array();
    for (const AnalysisResult::Pair& p : r.pairs) {
        if (p.send >= idx.ops.size() || p.recv >= idx.ops.size()) continue;
        const OpRecord &s = idx.ops[p.send], &v = idx.ops[p.recv];
        pairs.push_back({{"iteration", s.iteration},
                         {"send_rank", s.rank},
                         {"send_op", idx.strings.str(s.name)},
                         {"receive_rank", v.rank},
                         {"receive_op", idx.strings.str(v.name)},
                         {"evidence", p.evidence}});
    }
    j["pairs"] = std::move(pairs);
    return j;
}

}  // namespace dl
