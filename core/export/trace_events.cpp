#include "core/export/trace_events.h"

#include <fmt/format.h>

#include <algorithm>
#include <iterator>
#include <optional>
#include <tuple>
#include <utility>
#include <vector>

#include "core/export/json_text.h"
#include "core/index/atomic_file.h"
#include "core/query/stat_figures.h"
#include "core/util/half.h"

namespace dl {

namespace {

// The timeline's rules (core/timeline/timeline_data.cpp), so the trace and the app agree: a
// timestamp axis when 90 % of the ops have one, and an inferred end capped at this many median gaps.
constexpr std::int64_t kIdleFactor = 4;
constexpr std::size_t kChunkBytes = std::size_t(1) << 20;
// Flows and slices share one category: chrome's DevTools binds a flow event to the slice with the
// same (ts, pid, tid, cat), Perfetto to the slice open on its thread at ts.
constexpr const char* kOpCategory = "op";
constexpr const char* kFlowName = "overflow chain";

bool timestampAxis(const DumpIndex& index) {
    std::size_t with = 0;
    for (const OpRecord& o : index.ops) with += o.startUs != 0;
    return !index.ops.empty() && with * 10 >= index.ops.size() * 9;
}

// Reserved colour names of the trace viewers (chrome://tracing), by state.
const char* colourOf(OpState s) {
    switch (s) {
        case OpState::Normal:
            return nullptr;
        case OpState::NearLimit:
            return "yellow";
        case OpState::Saturated:
            return "bad";
        case OpState::InfNan:
            return "terrible";
        case OpState::Origin:
            return "black";
    }
    return nullptr;
}

class Writer {
public:
    Writer(const TraceSink& sink, std::string& error) : m_sink(sink), m_error(error) {}
    template <class... A>
    void put(fmt::format_string<A...> f, A&&... a) {
        fmt::format_to(fmt::appender(m_buf), f, std::forward<A>(a)...);
    }
    void str(std::string_view s) { appendJsonString(m_buf, s); }
    void num(double v) { appendJsonNumber(m_buf, v); }
    void beginEvent() {
        if (!m_first) m_buf.push_back(',');
        m_first = false;
        m_buf.push_back('\n');
    }
    bool flush() {
        if (m_failed) return false;
        if (m_buf.size() == 0) return true;
        if (!m_sink(m_buf.data(), m_buf.size(), m_error)) m_failed = true;
        m_bytes += m_buf.size();
        m_buf.clear();
        return !m_failed;
    }
    bool flushWhenFull() { return m_buf.size() < kChunkBytes || flush(); }
    std::uint64_t bytes() const { return m_bytes + m_buf.size(); }

private:
    const TraceSink& m_sink;
    std::string& m_error;
    fmt::memory_buffer m_buf;
    std::uint64_t m_bytes = 0;
    bool m_failed = false, m_first = true;
};

// The chain as hops between ops: each step from the step it came from, as the timeline's arrows.
// A hop's flow id is its target step's index (unique: a step has one cause).
struct ChainMarks {
    struct Hop {
        std::uint32_t from = 0, to = 0, id = 0;
    };
    std::vector<Hop> byFrom, byTo;
    std::vector<std::pair<std::uint32_t, std::uint32_t>> stepOf;  // (op, its first step), by op

    static std::vector<Hop>::const_iterator first(const std::vector<Hop>& v, std::uint32_t op, bool from) {
        return std::lower_bound(v.begin(), v.end(), op,
                                [from](const Hop& h, std::uint32_t x) { return (from ? h.from : h.to) < x; });
    }
};

ChainMarks chainMarks(const DumpIndex& index, const AnalysisResult* analysis, bool timestamps, std::size_t& notShown) {
    ChainMarks m;
    if (!analysis) return m;
    const auto shown = [&](std::uint32_t op) {
        return op < index.ops.size() && (!timestamps || index.ops[op].startUs != 0);
    };
    const auto& chain = analysis->chain;
    for (std::size_t k = 0; k < chain.size(); ++k) {
        const std::uint32_t op = chain[k].at.op;
        if (shown(op)) m.stepOf.emplace_back(op, std::uint32_t(k));
        const int c = chain[k].causedBy;
        if (c < 0 || std::size_t(c) >= chain.size()) continue;
        const std::uint32_t from = chain[std::size_t(c)].at.op;
        if (from == op) continue;  // the same op reached twice (another tensor of it): no arrow
        if (!shown(from) || !shown(op)) {
            ++notShown;
            continue;
        }
        m.byFrom.push_back({from, op, std::uint32_t(k)});
    }
    m.byTo = m.byFrom;
    std::stable_sort(m.byFrom.begin(), m.byFrom.end(), [](const auto& a, const auto& b) { return a.from < b.from; });
    std::stable_sort(m.byTo.begin(), m.byTo.end(), [](const auto& a, const auto& b) { return a.to < b.to; });
    std::stable_sort(m.stepOf.begin(), m.stepOf.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    return m;
}

// The tensor of an op a person looks at first: the worst state, then the largest max|x| (NaN above
// Inf, as the table sorts), then the first.
std::uint32_t worstTensor(const DumpIndex& index, const OpStates& states, const OpRecord& o) {
    std::uint32_t worst = kNoIndex;
    OpState worstState = OpState::Normal;
    std::optional<double> worstMax;
    for (std::uint32_t t = o.firstTensor; t < o.firstTensor + o.tensorCount && t < index.tensors.size(); ++t) {
        const OpState s = t < states.tensor.size() ? states.tensor[t] : OpState::Normal;
        const std::optional<double> mx = statFigure(index.stats(index.tensors[t]), StatFigure::MaxAbs);
        const bool better = worst == kNoIndex || s > worstState ||
            (s == worstState && mx && (!worstMax || compareFigures(*mx, *worstMax) > 0));
        if (!better) continue;
        worst = t;
        worstState = s;
        worstMax = mx;
    }
    return worst;
}

void writeWorst(Writer& w, const DumpIndex& index, const OpStates& states, std::uint32_t t) {
    const TensorRecord& r = index.tensors[t];
    const TensorStats s = index.stats(r);
    w.put(R"(,"worst":{{"tensor":)");
    w.str(index.tensorLabel(r));
    w.put(R"(,"io":"{}","slot":{},"dtype":)", r.io == Io::Input ? "input" : "output", r.slot);
    w.str(dtypeName(r.dtype));
    // The logical shape (a device layout's original one follows its stored one in dims).
    const bool device = r.flags & DeviceFormat;
    const std::size_t from = r.shapeOffset + (device ? r.ndim : 0), n = device ? index.side(r).origNdim : r.ndim;
    w.put(R"(,"shape":[)");
    for (std::size_t k = 0; k < n && from + k < index.dims.size(); ++k) {
        if (k) w.put(",");
        w.put("{}", index.dims[from + k]);
    }
    w.put(R"(],"state":"{}")", opStateName(t < states.tensor.size() ? states.tensor[t] : OpState::Normal));
    const std::pair<const char*, StatFigure> figures[] = {{"min", StatFigure::Min},
                                                          {"max", StatFigure::Max},
                                                          {"max_abs", StatFigure::MaxAbs},
                                                          {"mean", StatFigure::Mean}};
    for (const auto& [key, f] : figures)
        if (const auto v = statFigure(s, f)) {
            w.put(R"(,"{}":)", key);
            w.num(*v);
        }
    if (const auto v = statFigure(s, StatFigure::MaxAbs)) {
        w.put(R"(,"headroom":)");  // max|x| / 65504: 1 and above does not fit fp16
        w.num(*v / double(kFp16Max));
    }
    if (s.has(stat::NanCount)) w.put(R"(,"nan_count":{})", s.nanCount);
    if (s.has(stat::PosInfCount) || s.has(stat::NegInfCount)) w.put(R"(,"inf_count":{})", s.infCount());
    if (s.nonFiniteCountsAreLowerBounds()) w.put(R"(,"counts_are_lower_bounds":true)");
    w.put("}}");
}

struct Entry {
    std::uint32_t stream = 0, op = 0;
    std::int64_t start = 0;
};

struct Slice {
    std::int64_t dur = 0;
    const char* source = "";
};

// Durations of one stream's ops, sorted by start (see the header): never past the next op's start.
std::vector<Slice> durations(const DumpIndex& index, const Entry* e, std::size_t n, bool timestamps) {
    std::vector<Slice> out(n);
    if (!timestamps) {
        for (Slice& s : out) s = {1, "execution_order"};
        return out;
    }
    const auto inferred = [&](std::size_t k) { return index.ops[e[k].op].endUs <= index.ops[e[k].op].startUs; };
    const auto follows = [&](std::size_t k) {
        return k + 1 < n && index.ops[e[k].op].iteration == index.ops[e[k + 1].op].iteration;
    };
    std::vector<std::int64_t> gaps;
    for (std::size_t k = 0; k + 1 < n; ++k)
        if (inferred(k) && follows(k)) gaps.push_back(e[k + 1].start - e[k].start);
    std::int64_t median = 0;
    if (!gaps.empty()) {
        std::nth_element(gaps.begin(), gaps.begin() + std::ptrdiff_t(gaps.size() / 2), gaps.end());
        median = gaps[gaps.size() / 2];
    }
    const std::int64_t cap = std::max<std::int64_t>(1, kIdleFactor * median);
    for (std::size_t k = 0; k < n; ++k) {
        const OpRecord& o = index.ops[e[k].op];
        Slice& s = out[k];
        if (!inferred(k))
            s = {o.endUs - o.startUs, "dump"};
        else if (follows(k)) {
            const std::int64_t gap = e[k + 1].start - e[k].start;
            s = gap > cap ? Slice{cap, "idle_capped"} : Slice{gap, "next_op"};
        } else
            s = {median, "median_gap"};
        if (k + 1 < n && e[k].start + s.dur > e[k + 1].start) {
            s.dur = e[k + 1].start - e[k].start;
            if (!inferred(k)) s.source = "dump_clipped";
        }
    }
    return out;
}

}  // namespace

bool writeTraceEvents(const DumpIndex& index, const AnalysisResult* analysis, const OpStates& states,
                      const TraceExportOptions& opt, const TraceSink& sink, TraceExportSummary& sum,
                      std::string& error) {
    sum = TraceExportSummary{};
    const auto stopped = [&] {
        sum.cancelled = true;
        error = "trace export cancelled";
        return false;
    };
    if (opt.stop.stop_requested()) return stopped();
    sum.timestamps = timestampAxis(index);
    const ChainMarks chain = chainMarks(index, analysis, sum.timestamps, sum.hopsNotShown);
    const std::uint32_t originOp = analysis && analysis->firstOverflow ? analysis->firstOverflow->op : kNoIndex;
    Writer w(sink, error);
    w.put(R"({{"traceEvents":[)");
    std::uint32_t nextTid = 1;
    std::vector<Entry> entries;
    std::size_t done = 0;
    for (std::size_t b = 0; b < index.ops.size();) {
        // finalize() sorts ops by rank first: each rank is one run.
        const std::uint32_t rank = index.ops[b].rank;
        std::size_t e = b;
        while (e < index.ops.size() && index.ops[e].rank == rank) ++e;
        std::int64_t offset = 0;
        if (opt.alignClocks && analysis)
            if (auto c = analysis->clockOffsetUs.find(rank); c != analysis->clockOffsetUs.end()) offset = c->second;
        entries.clear();
        std::int64_t position = 0;
        for (std::size_t i = b; i < e; ++i) {
            const OpRecord& o = index.ops[i];
            if (sum.timestamps && o.startUs == 0) {
                ++sum.opsWithoutTime;
                continue;
            }
            entries.push_back({o.streamId, std::uint32_t(i), sum.timestamps ? o.startUs - offset : position++});
        }
        std::sort(entries.begin(), entries.end(), [](const Entry& x, const Entry& y) {
            return std::tie(x.stream, x.start, x.op) < std::tie(y.stream, y.start, y.op);
        });
        const std::uint32_t pid = rank + 1;  // pid 0 is the idle process to some viewers
        if (!entries.empty()) {
            const int stage = analysis ? analysis->stages.stageOf(rank) : -1;
            const std::string name =
                stage >= 0 ? fmt::format("rank {} (stage {})", rank, stage) : fmt::format("rank {}", rank);
            w.beginEvent();
            w.put(R"({{"ph":"M","name":"process_name","pid":{},"tid":{},"args":{{"name":)", pid, nextTid);
            w.str(name);
            w.put("}}}}");
            w.beginEvent();
            w.put(R"({{"ph":"M","name":"process_sort_index","pid":{},"tid":{},"args":{{"sort_index":{}}}}})", pid,
                  nextTid, rank);
            ++sum.processes;
        }
        for (std::size_t g = 0; g < entries.size();) {
            std::size_t h = g;
            while (h < entries.size() && entries[h].stream == entries[g].stream) ++h;
            const std::uint32_t tid = nextTid++;
            w.beginEvent();
            w.put(R"({{"ph":"M","name":"thread_name","pid":{},"tid":{},"args":{{"name":"stream {}"}}}})", pid, tid,
                  entries[g].stream);
            w.beginEvent();
            w.put(R"({{"ph":"M","name":"thread_sort_index","pid":{},"tid":{},"args":{{"sort_index":{}}}}})", pid, tid,
                  entries[g].stream);
            ++sum.threads;
            const std::vector<Slice> dur = durations(index, entries.data() + g, h - g, sum.timestamps);
            for (std::size_t k = g; k < h; ++k) {
                const std::uint32_t i = entries[k].op;
                const OpRecord& o = index.ops[i];
                const OpState state = i < states.op.size() ? states.op[i] : OpState::Normal;
                const std::int64_t ts = entries[k].start;
                const std::string_view name = index.strings.view(o.name);
                w.beginEvent();
                w.put(R"({{"ph":"X","cat":"{}","name":)", kOpCategory);
                w.str(name);
                w.put(R"(,"pid":{},"tid":{},"ts":{},"dur":{})", pid, tid, ts, dur[k - g].dur);
                if (const char* c = colourOf(state)) w.put(R"(,"cname":"{}")", c);
                w.put(R"(,"args":{{"op":)");
                w.str(name);
                w.put(R"(,"type":)");
                w.str(index.strings.view(o.type));
                if (o.scope) {
                    w.put(R"(,"scope":)");
                    w.str(index.strings.view(o.scope));
                }
                w.put(R"(,"rank":{},"iteration":{},"graph":{},"stream":{},"task":{},"exec_pos":{},"state":"{}",)"
                      R"("overflow":{},"tensors":{},"dur_source":"{}")",
                      o.rank, o.iteration, o.graph, o.streamId, o.taskId, o.execPos, opStateName(state),
                      state >= OpState::Saturated, o.tensorCount, dur[k - g].source);
                if (sum.timestamps) w.put(R"(,"dump_start_us":{},"clock_offset_us":{})", o.startUs, offset);
                if (o.overflow >= 0) w.put(R"(,"opdebug_record":true)");
                if (const std::uint32_t t = worstTensor(index, states, o); t != kNoIndex)
                    writeWorst(w, index, states, t);
                auto step = std::lower_bound(chain.stepOf.begin(), chain.stepOf.end(), std::pair{i, 0u});
                if (step != chain.stepOf.end() && step->first == i) {
                    const ChainStep& cs = analysis->chain[step->second];
                    w.put(R"(,"chain_step":{},"chain_role":"{}","chain_via":"{}")", step->second,
                          chainRoleName(cs.role), chainViaName(cs.via));
                }
                w.put("}}}}");
                ++sum.slices;
                // Flow events after their slice, at its ts: a viewer that reads in file order among
                // equal timestamps finds the slice open.
                for (auto it = ChainMarks::first(chain.byTo, i, false); it != chain.byTo.end() && it->to == i; ++it) {
                    w.beginEvent();
                    w.put(R"({{"ph":"f","bp":"e","id":{},"cat":"{}","name":"{}","pid":{},"tid":{},"ts":{}}})", it->id,
                          kOpCategory, kFlowName, pid, tid, ts);
                }
                for (auto it = ChainMarks::first(chain.byFrom, i, true); it != chain.byFrom.end() && it->from == i;
                     ++it) {
                    w.beginEvent();
                    w.put(R"({{"ph":"s","id":{},"cat":"{}","name":"{}","pid":{},"tid":{},"ts":{}}})", it->id,
                          kOpCategory, kFlowName, pid, tid, ts);
                    ++sum.flows;
                }
                if (i == originOp) {
                    const OverflowPoint& p = *analysis->firstOverflow;
                    w.beginEvent();
                    w.put(R"({{"ph":"i","s":"t","cat":"origin","name":"first overflow","pid":{},"tid":{},"ts":{},)"
                          R"("args":{{"op":)",
                          pid, tid, ts);
                    w.str(name);
                    w.put(R"(,"kind":"{}","rank":{},"iteration":{})", anomalyKindName(p.kind), p.rank, p.iteration);
                    if (p.tensor < index.tensors.size()) {
                        w.put(R"(,"tensor":)");
                        w.str(index.tensorLabel(index.tensors[p.tensor]));
                    }
                    w.put("}}}}");
                    sum.originMarked = true;
                }
                if (!w.flushWhenFull()) return false;
                if (++done % kWorkStride == 0) {
                    if (opt.progress) opt.progress(done, index.ops.size());
                    if (opt.stop.stop_requested()) return stopped();
                }
            }
            g = h;
        }
        b = e;
    }
    w.put("\n],\"displayTimeUnit\":\"ms\",\"otherData\":{{\"generator\":\"DumpLens {}\",\"dump\":", DUMPLENS_VERSION);
    w.str(index.root);
    w.put(R"(,"time_base":"{}","clock_aligned":{},"verdict":"{}")", sum.timestamps ? "timestamps" : "execution_order",
          sum.timestamps && opt.alignClocks && analysis && analysis->clocksAligned,
          !analysis                ? "not analysed"
              : analysis->noData   ? "no data"
              : analysis->overflow ? "overflow"
                                   : "clean");
    if (originOp < index.ops.size()) {
        w.put(R"(,"origin_op":)");
        w.str(index.strings.view(index.ops[originOp].name));
        w.put(R"(,"origin_rank":{},"origin_iteration":{})", index.ops[originOp].rank, index.ops[originOp].iteration);
    }
    w.put(R"(,"ops":{},"slices":{},"ops_without_time":{},"chain_flows":{},"chain_hops_not_shown":{}}}}})",
          index.ops.size(), sum.slices, sum.opsWithoutTime, sum.flows, sum.hopsNotShown);
    w.put("\n");
    if (opt.progress) opt.progress(index.ops.size(), index.ops.size());
    sum.bytes = w.bytes();
    return w.flush();
}

bool exportTraceFile(const std::string& path, const DumpIndex& index, const AnalysisResult* analysis,
                     const OpStates& states, const TraceExportOptions& options, TraceExportSummary& summary,
                     std::string& error) {
    AtomicFile file;
    if (!file.open(path, error)) return false;
    const TraceSink sink = [&file](const char* data, std::size_t n, std::string& e) { return file.write(data, n, e); };
    // Dropped without commit() on any failure: no half-written trace is left behind.
    return writeTraceEvents(index, analysis, states, options, sink, summary, error) && file.commit(error);
}

}  // namespace dl
