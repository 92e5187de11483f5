#pragma once
// Checks a trace written by core/export/trace_events against the Trace Event Format's rules (the
// JSON object form: "traceEvents"; per phase its required fields; flow events "s"/"f" paired by
// id, cat and name, each at the ts of a slice on its thread with the same cat, the binding rule of
// both Perfetto and chrome's DevTools) and against the dump it came from: every op with a time
// is one complete event on its rank's process and its stream's thread, its args hold the index's
// figures, the chain's hops are its flows, the origin carries the instant event. Everything is
// recomputed from the index and the analysis, not from the writer.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "core/analysis/analysis_result.h"
#include "core/model/dump_index.h"
#include "core/query/op_state.h"
#include "core/query/stat_figures.h"
#include "core/util/half.h"

namespace dltest {

using nlohmann::json;

// A figure as the trace writes it: a number, or "inf" / "-inf" / "nan" for what JSON cannot hold.
inline double traceFigure(const json& v) {
    if (v.is_number()) return v.get<double>();
    const std::string s = v.get<std::string>();
    if (s == "inf") return INFINITY;
    if (s == "-inf") return -INFINITY;
    EXPECT_EQ(s, "nan");
    return NAN;
}

inline bool sameFigure(double a, double b) { return (std::isnan(a) && std::isnan(b)) || a == b; }

struct TraceFacts {
    std::size_t slices = 0, flows = 0, instants = 0;
    std::map<std::uint32_t, std::size_t> sliceOfOp;  // op index -> position in traceEvents
    bool timestamps = true;
};

// `json` is the parsed trace; the rest is what it was written from.
inline TraceFacts checkTrace(const json& trace, const dl::DumpIndex& index, const dl::AnalysisResult& analysis,
                             const dl::OpStates& states, bool alignClocks = true) {
    TraceFacts f;
    EXPECT_TRUE(trace.is_object());
    const json& ev = trace.at("traceEvents");
    EXPECT_TRUE(ev.is_array());
    const json& other = trace.at("otherData");
    f.timestamps = other.at("time_base") == "timestamps";
    {  // The same axis rule as the timeline: timestamps when 90 % of the ops have one.
        std::size_t with = 0;
        for (const auto& o : index.ops) with += o.startUs != 0;
        EXPECT_EQ(f.timestamps, with * 10 >= index.ops.size() * 9);
    }

    // Ops by the key the args give (rank, iteration, graph, exec_pos, name): unique in an index.
    std::map<std::tuple<std::uint32_t, std::uint32_t, std::uint32_t, std::uint32_t, std::string>, std::uint32_t>
        opByKey;
    for (std::uint32_t i = 0; i < index.ops.size(); ++i) {
        const auto& o = index.ops[i];
        EXPECT_TRUE(
            opByKey.emplace(std::tuple{o.rank, o.iteration, o.graph, o.execPos, index.strings.str(o.name)}, i).second);
    }

    std::map<std::uint32_t, std::string> processName;                           // pid -> name
    std::map<std::pair<std::uint32_t, std::uint32_t>, std::string> threadName;  // (pid, tid) -> name
    std::vector<std::uint32_t> processOrder;
    std::map<std::uint32_t, std::uint32_t> rankOfPid;
    std::map<std::pair<std::uint32_t, std::uint32_t>, std::pair<double, double>> lastOnThread;  // ts, end
    std::map<std::tuple<std::uint32_t, std::uint32_t, double>, std::size_t> sliceAt;  // first X at (pid, tid, ts)
    struct Flow {
        std::size_t s = ~std::size_t(0), f = ~std::size_t(0);
        int starts = 0, ends = 0;
    };
    std::map<std::uint64_t, Flow> flows;
    std::map<std::uint32_t, std::uint32_t> positionOfRank;  // execution-order axis: next position per rank
    std::vector<std::uint32_t> opsInOrder;
    for (std::size_t k = 0; k < ev.size(); ++k) {
        const json& e = ev[k];
        SCOPED_TRACE(e.dump());
        // Every phase here: ph, name, pid, tid.
        EXPECT_TRUE(e.at("ph").is_string());
        EXPECT_TRUE(e.at("name").is_string());
        EXPECT_TRUE(e.at("pid").is_number_unsigned());
        EXPECT_TRUE(e.at("tid").is_number_unsigned());
        const std::string ph = e.at("ph");
        const auto pid = e.at("pid").get<std::uint32_t>(), tid = e.at("tid").get<std::uint32_t>();
        if (ph == "M") {
            const std::string name = e.at("name");
            const json& a = e.at("args");
            if (name == "process_name") {
                EXPECT_TRUE(processName.emplace(pid, a.at("name").get<std::string>()).second) << "one name per process";
                processOrder.push_back(pid);
            } else if (name == "thread_name") {
                EXPECT_TRUE(processName.count(pid)) << "thread named before its process";
                EXPECT_TRUE(threadName.emplace(std::pair{pid, tid}, a.at("name").get<std::string>()).second);
            } else {
                EXPECT_TRUE(name == "process_sort_index" || name == "thread_sort_index") << name;
                EXPECT_TRUE(a.at("sort_index").is_number_integer());
            }
            continue;
        }
        EXPECT_TRUE(e.at("ts").is_number());
        EXPECT_TRUE(e.at("cat").is_string());
        const double ts = e.at("ts").get<double>();
        EXPECT_TRUE(threadName.count({pid, tid})) << "an event on a thread without thread_name";
        if (ph == "X") {
            ++f.slices;
            EXPECT_EQ(e.at("cat"), "op");
            const double dur = e.at("dur").get<double>();
            EXPECT_GE(dur, 0);
            // Monotonic per thread, and no slice reaches into the next one (they would nest wrongly).
            auto [last, added] = lastOnThread.try_emplace({pid, tid}, std::pair{ts, ts + dur});
            if (!added) {
                EXPECT_GE(ts, last->second.first) << "ts goes back on its thread";
                EXPECT_GE(ts, last->second.second) << "overlaps the previous slice of its thread";
                last->second = {ts, ts + dur};
            }
            sliceAt.try_emplace({pid, tid, ts}, k);
            const json& a = e.at("args");
            const auto key = std::tuple{a.at("rank").get<std::uint32_t>(), a.at("iteration").get<std::uint32_t>(),
                                        a.at("graph").get<std::uint32_t>(), a.at("exec_pos").get<std::uint32_t>(),
                                        a.at("op").get<std::string>()};
            const auto found = opByKey.find(key);
            EXPECT_NE(found, opByKey.end());
            if (found == opByKey.end()) continue;
            const std::uint32_t i = found->second;
            const dl::OpRecord& o = index.ops[i];
            EXPECT_TRUE(f.sliceOfOp.emplace(i, k).second) << "op written twice";
            opsInOrder.push_back(i);
            EXPECT_EQ(e.at("name"), index.strings.str(o.name));
            EXPECT_EQ(a.at("type"), index.strings.str(o.type));
            EXPECT_EQ(a.at("stream").get<std::uint32_t>(), o.streamId);
            EXPECT_EQ(a.at("task").get<std::uint32_t>(), o.taskId);
            EXPECT_EQ(a.at("tensors").get<std::uint32_t>(), o.tensorCount);
            EXPECT_EQ(threadName.at({pid, tid}), "stream " + std::to_string(o.streamId));
            // One process per rank.
            EXPECT_EQ(rankOfPid.try_emplace(pid, o.rank).first->second, o.rank) << "two ranks in one process";
            EXPECT_NE(processName.at(pid).find("rank " + std::to_string(o.rank)), std::string::npos);
            const dl::OpState st = states.op.at(i);
            EXPECT_EQ(a.at("state"), dl::opStateName(st));
            EXPECT_EQ(a.at("overflow").get<bool>(), st >= dl::OpState::Saturated);
            EXPECT_EQ(e.contains("cname"), st != dl::OpState::Normal);
            if (st == dl::OpState::Origin) {
                EXPECT_EQ(e.at("cname"), "black");
            }
            // Time: the op's start on the reference clock, or its position in its rank's order.
            if (f.timestamps) {
                std::int64_t off = 0;
                if (alignClocks)
                    if (auto c = analysis.clockOffsetUs.find(o.rank); c != analysis.clockOffsetUs.end())
                        off = c->second;
                EXPECT_EQ(ts, double(o.startUs - off));
                EXPECT_EQ(a.at("dump_start_us").get<std::int64_t>(), o.startUs);
                if (o.endUs > o.startUs) {
                    EXPECT_LE(dur, double(o.endUs - o.startUs));
                }
                if (a.at("dur_source") == "dump") {
                    EXPECT_EQ(dur, double(o.endUs - o.startUs));
                }
            } else {
                EXPECT_EQ(dur, 1);
            }
            // The worst tensor: the op's worst state, and among those the largest max|x|.
            if (o.tensorCount == 0) {
                EXPECT_FALSE(a.contains("worst"));
                continue;
            }
            const json& w = a.at("worst");
            dl::OpState worstState = dl::OpState::Normal;
            for (std::uint32_t t = o.firstTensor; t < o.firstTensor + o.tensorCount; ++t)
                worstState = std::max(worstState, states.tensor.at(t));
            EXPECT_EQ(w.at("state"), dl::opStateName(worstState));
            std::optional<std::uint32_t> named;
            std::optional<double> largest;
            for (std::uint32_t t = o.firstTensor; t < o.firstTensor + o.tensorCount; ++t) {
                if (states.tensor[t] != worstState) continue;
                const auto& tr = index.tensors[t];
                if (index.tensorLabel(tr) == w.at("tensor").get<std::string>() &&
                    (tr.io == dl::Io::Input ? "input" : "output") == w.at("io").get<std::string>())
                    named = t;
                if (auto m = dl::statFigure(index.stats(tr), dl::StatFigure::MaxAbs))
                    if (!largest || dl::compareFigures(*m, *largest) > 0) largest = m;
            }
            EXPECT_TRUE(named) << "worst tensor not among the op's tensors of its state";
            if (!named) continue;
            const dl::TensorRecord& tr = index.tensors[*named];
            const dl::TensorStats s = index.stats(tr);
            EXPECT_EQ(w.at("dtype"), std::string(dl::dtypeName(tr.dtype)));
            EXPECT_EQ(w.at("shape").get<std::vector<std::int64_t>>(), index.originalShape(tr));
            if (largest) {
                EXPECT_TRUE(sameFigure(traceFigure(w.at("max_abs")), *largest));
            }
            const std::pair<const char*, dl::StatFigure> figs[] = {{"min", dl::StatFigure::Min},
                                                                   {"max", dl::StatFigure::Max},
                                                                   {"max_abs", dl::StatFigure::MaxAbs},
                                                                   {"mean", dl::StatFigure::Mean}};
            for (const auto& [name, fig] : figs) {
                const auto v = dl::statFigure(s, fig);
                EXPECT_EQ(w.contains(name), v.has_value()) << name;
                if (v && w.contains(name)) {
                    EXPECT_TRUE(sameFigure(traceFigure(w.at(name)), *v)) << name;
                }
            }
            if (auto m = dl::statFigure(s, dl::StatFigure::MaxAbs)) {
                EXPECT_TRUE(sameFigure(traceFigure(w.at("headroom")), *m / double(dl::kFp16Max)));
            }
            EXPECT_EQ(w.contains("nan_count"), s.has(dl::stat::NanCount));
            if (s.has(dl::stat::NanCount)) {
                EXPECT_EQ(w.at("nan_count").get<std::uint64_t>(), s.nanCount);
            }
        } else if (ph == "s" || ph == "f") {
            EXPECT_EQ(e.at("cat"), "op");
            EXPECT_TRUE(e.at("id").is_number_unsigned());
            Flow& fl = flows[e.at("id").get<std::uint64_t>()];
            if (ph == "s")
                ++fl.starts, fl.s = k;
            else {
                ++fl.ends, fl.f = k;
                EXPECT_EQ(e.at("bp"), "e");
            }
        } else if (ph == "i") {
            ++f.instants;
            EXPECT_EQ(e.at("s"), "t");
        } else {
            ADD_FAILURE() << "unexpected phase " << ph;
        }
    }
    // Processes sorted by rank, one per rank that has a slice.
    std::vector<std::uint32_t> ranksInOrder;
    for (std::uint32_t pid : processOrder)
        if (rankOfPid.count(pid)) ranksInOrder.push_back(rankOfPid.at(pid));
    EXPECT_TRUE(std::is_sorted(ranksInOrder.begin(), ranksInOrder.end()));
    EXPECT_EQ(std::set<std::uint32_t>(ranksInOrder.begin(), ranksInOrder.end()).size(), ranksInOrder.size());
    // Every op with a time is there once.
    std::size_t timed = 0;
    for (const auto& o : index.ops) timed += !f.timestamps || o.startUs != 0;
    EXPECT_EQ(f.slices, timed);
    EXPECT_EQ(other.at("ops_without_time").get<std::size_t>(), index.ops.size() - timed);
    if (!f.timestamps) {
        // Positions follow the index's order within each rank, 1 us apart.
        std::map<std::uint32_t, double> next;
        for (std::uint32_t i = 0; i < index.ops.size(); ++i) {
            const double ts = ev[f.sliceOfOp.at(i)].at("ts").get<double>();
            EXPECT_EQ(ts, next[index.ops[i].rank]);
            next[index.ops[i].rank] = ts + 1;
        }
    }
    // Flows: every start has its end, and both sit on a slice of their thread (same ts and cat).
    const auto opAt = [&](std::size_t k) -> std::optional<std::uint32_t> {
        const json& e = ev[k];
        auto s = sliceAt.find(
            {e.at("pid").get<std::uint32_t>(), e.at("tid").get<std::uint32_t>(), e.at("ts").get<double>()});
        if (s == sliceAt.end()) return std::nullopt;
        for (const auto& [op, pos] : f.sliceOfOp)
            if (pos == s->second) return op;
        return std::nullopt;
    };
    std::map<std::uint64_t, std::pair<std::uint32_t, std::uint32_t>> flowOps;
    for (const auto& [id, fl] : flows) {
        EXPECT_EQ(fl.starts, 1) << "flow " << id;
        EXPECT_EQ(fl.ends, 1) << "flow " << id;
        if (fl.starts != 1 || fl.ends != 1) continue;
        EXPECT_EQ(ev[fl.s].at("name"), ev[fl.f].at("name"));
        EXPECT_EQ(ev[fl.s].at("cat"), ev[fl.f].at("cat"));
        const auto from = opAt(fl.s), to = opAt(fl.f);
        EXPECT_TRUE(from && to) << "flow " << id << " not on a slice";
        if (from && to) flowOps[id] = {*from, *to};
        ++f.flows;
    }
    // The chain's hops are the flows: from the step each step came from, to the step.
    std::size_t hops = 0;
    for (std::size_t k = 0; k < analysis.chain.size(); ++k) {
        const dl::ChainStep& b = analysis.chain[k];
        if (b.causedBy < 0) continue;
        const std::uint32_t from = analysis.chain[std::size_t(b.causedBy)].at.op, to = b.at.op;
        if (from == to || !f.sliceOfOp.count(from) || !f.sliceOfOp.count(to)) continue;
        ++hops;
        const auto it = flowOps.find(k);
        EXPECT_NE(it, flowOps.end()) << "chain step " << k << " has no flow";
        if (it == flowOps.end()) continue;
        EXPECT_EQ(it->second.first, from) << "chain step " << k;
        EXPECT_EQ(it->second.second, to) << "chain step " << k;
    }
    EXPECT_EQ(f.flows, hops);
    // The origin: its slice and an instant event on its thread at its ts.
    const bool originShown = analysis.firstOverflow && f.sliceOfOp.count(analysis.firstOverflow->op);
    EXPECT_EQ(f.instants, originShown ? 1u : 0u);
    if (originShown) {
        const json& x = ev[f.sliceOfOp.at(analysis.firstOverflow->op)];
        bool found = false;
        for (const json& e : ev)
            if (e.at("ph") == "i")
                found = e.at("pid") == x.at("pid") && e.at("tid") == x.at("tid") && e.at("ts") == x.at("ts") &&
                    e.at("args").at("op") == x.at("name") && e.at("name") == "first overflow";
        EXPECT_TRUE(found) << "origin not marked";
        if (!analysis.chain.empty() && analysis.chain[0].at.op == analysis.firstOverflow->op) {
            EXPECT_EQ(x.at("args").at("chain_role"), "origin");
        }
        EXPECT_EQ(other.at("origin_op"), x.at("name"));
    }
    EXPECT_EQ(other.at("verdict"), analysis.overflow ? "overflow" : "clean");
    return f;
}

}  // namespace dltest
