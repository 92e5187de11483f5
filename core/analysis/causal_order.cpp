#include "core/analysis/causal_order.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <queue>
#include <set>
#include <tuple>

namespace dl {

namespace {

// Bounds on d = off_b - off_a from the messages between two ranks: a Receive (or a collective
// member) on b ends after its Send (another member) on a started, so every a -> b message gives
// d <= t_end(b) - t_start(a). The tightest bound is the smallest; a mispaired message or a
// glitched timestamp can only make a bound too tight, so the smallest 2% are dropped first
// (a weaker bound stays true).
struct Bounds {
    std::vector<std::int64_t> ab;  // a -> b: upper bounds on d
    std::vector<std::int64_t> ba;  // b -> a: upper bounds on -d
};

std::int64_t robustMin(std::vector<std::int64_t>& v, std::size_t& dropped) {
    const std::size_t k = v.size() / 50;
    std::nth_element(v.begin(), v.begin() + long(k), v.end());
    dropped += k;
    return v[k];
}

// Solves the weighted least squares of off_b - off_a = d over one component (reference rank
// first, its offset 0): dense normal equations, small (ranks of one job). Returns offsets and
// the standard error of each (square root of the inverse's diagonal).
bool solveComponent(const std::vector<std::uint32_t>& ranks,
                    const std::vector<std::tuple<std::uint32_t, std::uint32_t, double, double>>& edges,
                    std::map<std::uint32_t, double>& off, std::map<std::uint32_t, double>& sigma) {
    const std::size_t n = ranks.size() - 1;  // unknowns: every rank but the reference
    std::map<std::uint32_t, std::size_t> at;
    for (std::size_t i = 1; i < ranks.size(); ++i) at[ranks[i]] = i - 1;
    std::vector<double> A(n * n, 0.0), b(n, 0.0), inv(n * n, 0.0);
    for (const auto& [a, c, d, w] : edges) {  // w (off_c - off_a - d)^2
        const auto ia = at.find(a), ic = at.find(c);
        const bool ha = ia != at.end(), hc = ic != at.end();
        if (ha) {
            A[ia->second * n + ia->second] += w;
            b[ia->second] -= w * d;
        }
        if (hc) {
            A[ic->second * n + ic->second] += w;
            b[ic->second] += w * d;
        }
        if (ha && hc) {
            A[ia->second * n + ic->second] -= w;
            A[ic->second * n + ia->second] -= w;
        }
    }
    for (std::size_t i = 0; i < n; ++i) inv[i * n + i] = 1.0;
    // Gauss-Jordan with partial pivoting on [A | b | I].
    for (std::size_t col = 0; col < n; ++col) {
        std::size_t p = col;
        for (std::size_t r = col + 1; r < n; ++r)
            if (std::fabs(A[r * n + col]) > std::fabs(A[p * n + col])) p = r;
        if (std::fabs(A[p * n + col]) < 1e-18) return false;
        if (p != col) {
            for (std::size_t k = 0; k < n; ++k) {
                std::swap(A[p * n + k], A[col * n + k]);
                std::swap(inv[p * n + k], inv[col * n + k]);
            }
            std::swap(b[p], b[col]);
        }
        const double piv = A[col * n + col];
        for (std::size_t k = 0; k < n; ++k) {
            A[col * n + k] /= piv;
            inv[col * n + k] /= piv;
        }
        b[col] /= piv;
        for (std::size_t r = 0; r < n; ++r) {
            if (r == col || A[r * n + col] == 0.0) continue;
            const double f = A[r * n + col];
            for (std::size_t k = 0; k < n; ++k) {
                A[r * n + k] -= f * A[col * n + k];
                inv[r * n + k] -= f * inv[col * n + k];
            }
            b[r] -= f * b[col];
        }
    }
    off[ranks[0]] = 0;
    sigma[ranks[0]] = 0;
    for (std::size_t i = 1; i < ranks.size(); ++i) {
        off[ranks[i]] = b[i - 1];
        sigma[ranks[i]] = std::sqrt(std::max(0.0, inv[(i - 1) * n + (i - 1)]));
    }
    return true;
}

// Per rank pair: d = off_high - off_low within [lower, upper]; both sides known gives an
// estimate (the middle) and its half-width; one side only bounds it.
struct Window {
    std::int64_t lower, upper;
    bool twoSided;
};
using Windows = std::map<std::pair<std::uint32_t, std::uint32_t>, Window>;

// What the windows prove about each estimate's error. The true difference of a rank pair lies in
// its window, the estimate's within the window or `excess` outside it, so they differ by at most
// width + excess; along a path from the reference the errors add. The bound of a rank is the
// cheapest such path (Dijkstra over the two-sided windows of its component).
std::map<std::uint32_t, double> worstCaseError(std::uint32_t root, const std::set<std::uint32_t>& comp,
                                               const Windows& windows, const std::map<std::uint32_t, double>& off) {
    std::map<std::uint32_t, std::vector<std::pair<std::uint32_t, double>>> adj;
    for (const auto& [ab, w] : windows) {
        if (!w.twoSided || !comp.count(ab.first) || !comp.count(ab.second)) continue;
        const double d = off.at(ab.second) - off.at(ab.first);
        const double lo = double(std::min(w.lower, w.upper)), hi = double(std::max(w.lower, w.upper));
        const double cost = (hi - lo) + std::max({0.0, d - hi, lo - d});
        adj[ab.first].push_back({ab.second, cost});
        adj[ab.second].push_back({ab.first, cost});
    }
    std::map<std::uint32_t, double> best{{root, 0.0}};
    std::priority_queue<std::pair<double, std::uint32_t>, std::vector<std::pair<double, std::uint32_t>>, std::greater<>>
        todo;
    todo.push({0.0, root});
    while (!todo.empty()) {
        const auto [cost, r] = todo.top();
        todo.pop();
        if (cost > best[r]) continue;
        for (const auto& [next, c] : adj[r])
            if (auto it = best.find(next); it == best.end() || cost + c < it->second) {
                best[next] = cost + c;
                todo.push({cost + c, next});
            }
    }
    return best;
}

}  // namespace

void estimateClockOffsets(AnalysisContext& ctx, std::vector<std::string>& notes) {
    std::map<std::pair<std::uint32_t, std::uint32_t>, Bounds> bounds;  // (low rank, high rank)
    std::set<std::uint32_t> ranks;
    for (std::size_t i = 0; i < ctx.index.ops.size(); ++i)
        if (i == 0 || ctx.index.ops[i].rank != ctx.index.ops[i - 1].rank) ranks.insert(ctx.index.ops[i].rank);
    std::size_t used = 0;
    auto constrain = [&](std::uint32_t from, std::uint32_t to) {  // `to` ended after `from` started
        const std::uint32_t a = ctx.index.ops[from].rank, b = ctx.index.ops[to].rank;
        const std::int64_t ts = ctx.rawTime(from);
        const std::int64_t te = ctx.index.ops[to].endUs ? ctx.index.ops[to].endUs : ctx.rawTime(to);
        if (!ts || !te || a == b) return;
        Bounds& bd = bounds[{std::min(a, b), std::max(a, b)}];
        (a < b ? bd.ab : bd.ba).push_back(te - ts);
        ++used;
    };
    for (const CommPair& p : ctx.match.pairs)
        if (p.confident) constrain(p.send, p.recv);
    for (const CollectiveGroup& g : ctx.match.groups) {
        if (g.ops.size() > 64) continue;  // a pair per member pair: large groups add little
        for (std::uint32_t a : g.ops)
            for (std::uint32_t b : g.ops)
                if (a != b) constrain(a, b);
    }
    Windows windows;
    std::size_t dropped = 0, contradictions = 0;
    for (auto& [ab, bd] : bounds) {
        Window w{std::numeric_limits<std::int64_t>::min(), std::numeric_limits<std::int64_t>::max(), false};
        if (!bd.ab.empty()) w.upper = robustMin(bd.ab, dropped);
        if (!bd.ba.empty()) w.lower = -robustMin(bd.ba, dropped);
        w.twoSided = !bd.ab.empty() && !bd.ba.empty();
        if (w.twoSided && w.lower > w.upper) ++contradictions;
        windows[ab] = w;
    }
    std::map<std::uint32_t, std::vector<std::pair<std::uint32_t, const Window*>>> adj;
    for (const auto& [ab, w] : windows) {
        adj[ab.first].push_back({ab.second, &w});
        adj[ab.second].push_back({ab.first, &w});
    }
    std::size_t estimated = 0;
    std::set<std::uint32_t> anchored;  // ranks whose offset is fixed relative to their component's reference
    for (std::uint32_t root : ranks) {
        if (ctx.clockOffsetUs.count(root)) continue;
        // The component of `root` over windows with both sides (an estimate exists).
        std::vector<std::uint32_t> comp{root};
        std::set<std::uint32_t> in{root};
        for (std::size_t i = 0; i < comp.size(); ++i)
            for (const auto& [other, w] : adj[comp[i]])
                if (w->twoSided && in.insert(other).second) comp.push_back(other);
        std::vector<std::tuple<std::uint32_t, std::uint32_t, double, double>> edges;
        for (const auto& [ab, w] : windows) {
            if (!w.twoSided || !in.count(ab.first)) continue;
            const double half = std::max(1.0, double(w.upper - w.lower) / 2);
            edges.push_back({ab.first, ab.second, double(w.lower + w.upper) / 2, 1.0 / (half * half)});
        }
        std::map<std::uint32_t, double> off, sigma;
        if (comp.size() > 1 && solveComponent(comp, edges, off, sigma)) {
            const std::map<std::uint32_t, double> bound = worstCaseError(root, in, windows, off);
            for (std::uint32_t r : comp) {
                ctx.clockOffsetUs[r] = std::llround(off[r]);
                // The least-squares standard error treats each window's half-width as random
                // noise, but a window's offset from the truth is a bias (half a message latency):
                // say the larger of it and the bound the windows themselves prove.
                ctx.clockUncertaintyUs[r] = std::llround(std::ceil(std::max(sigma[r], bound.at(r))));
                ctx.clockComponent[r] = root;
            }
            estimated += comp.size() - 1;
            anchored.insert(comp.begin(), comp.end());
        } else {
            ctx.clockOffsetUs[root] = 0;
            ctx.clockComponent[root] = root;
        }
    }
    // Ranks tied to the rest by one-sided bounds only: correct only what causality forces, and
    // say nothing of the uncertainty (the offset is a bound, not an estimate).
    for (;;) {
        bool changed = false;
        for (const auto& [ab, w] : windows) {
            if (w.twoSided) continue;
            const auto [lo, hi] = ab;
            if (anchored.count(lo) == anchored.count(hi)) continue;
            // d = off_hi - off_lo: an upper bound (lo -> hi traffic) or a lower one (hi -> lo).
            const std::int64_t d = w.upper != std::numeric_limits<std::int64_t>::max()
                ? std::min<std::int64_t>(0, w.upper)
                : std::max<std::int64_t>(0, w.lower);
            const std::uint32_t from = anchored.count(lo) ? lo : hi, to = from == lo ? hi : lo;
            ctx.clockOffsetUs[to] = ctx.clockOffsetUs[from] + (to == hi ? d : -d);
            ctx.clockComponent[to] = ctx.clockComponent[from];
            ctx.clockUncertaintyUs.erase(to);
            ctx.clockOneSided.insert(to);
            anchored.insert(to);
            changed = true;
        }
        if (changed) continue;
        // Two unlinked ranks joined one way only: the lower one is the reference.
        std::uint32_t pick = 0;
        bool found = false;
        for (const auto& [ab, w] : windows)
            if (!w.twoSided && !anchored.count(ab.first) && !anchored.count(ab.second)) {
                pick = ab.first;
                found = true;
                break;
            }
        if (!found) break;
        anchored.insert(pick);
    }
    // What the evidence allows: every window must hold the estimate (within its half-width).
    std::size_t violated = 0;
    for (const auto& [ab, w] : windows) {
        if (ctx.clockComponent[ab.first] != ctx.clockComponent[ab.second]) continue;
        const std::int64_t d = ctx.clockOffsetUs[ab.second] - ctx.clockOffsetUs[ab.first];
        const std::int64_t slack = ctx.clockUncertaintyUs.count(ab.first) && ctx.clockUncertaintyUs.count(ab.second)
            ? ctx.clockUncertaintyUs[ab.first] + ctx.clockUncertaintyUs[ab.second] + 1
            : 1;
        if ((w.upper != std::numeric_limits<std::int64_t>::max() && d > w.upper + slack) ||
            (w.lower != std::numeric_limits<std::int64_t>::min() && d < w.lower - slack))
            ++violated;
    }
    ctx.clocksAligned = used > 0;
    if (used == 0) {
        if (ranks.size() > 1)
            notes.push_back(
                "no timed Send/Receive pairs: clocks of different ranks are not compared "
                "by causality, cross-rank order is weak evidence");
        return;
    }
    std::string s = "clock offsets estimated from " + std::to_string(used) +
        " Send/Receive and collective constraints "
        "(weighted least squares over the windows each rank pair allows; " +
        std::to_string(dropped) + " tightest bound(s) dropped as possible outliers):";
    for (const auto& [r, off] : ctx.clockOffsetUs) {
        s += " rank " + std::to_string(r) + " " + std::to_string(off) + " us";
        if (auto u = ctx.clockUncertaintyUs.find(r); u != ctx.clockUncertaintyUs.end() && u->second > 0)
            s += " +/- " + std::to_string(u->second);
        else if (ctx.clockOneSided.count(r))
            s += " (a bound)";
        s += ";";
    }
    notes.push_back(s);
    (void)estimated;
    if (contradictions || violated)
        notes.push_back("Send/Receive timestamps contradict each other for " +
                        std::to_string(contradictions + violated) +
                        " rank pair(s): pairing or clock estimate is uncertain");
}

bool happensBefore(const AnalysisContext& ctx, std::uint32_t a, std::uint32_t b) {
    const OpRecord &oa = ctx.index.ops[a], &ob = ctx.index.ops[b];
    if (oa.iteration != ob.iteration) return oa.iteration < ob.iteration;
    if (oa.rank == ob.rank) return a < b;
    std::map<std::uint32_t, std::uint32_t> reach{{oa.rank, a}};  // rank -> first op index reached
    auto relax = [&](std::uint32_t target, bool& changed) {
        const std::uint32_t r = ctx.index.ops[target].rank;
        auto it = reach.find(r);
        if (it == reach.end() || target < it->second) {
            reach[r] = target;
            changed = true;
        }
    };
    for (std::size_t round = 0, limit = ctx.comm.size() + 1; round < limit; ++round) {
        bool changed = false;
        for (const CommOp& c : ctx.comm) {
            const OpRecord& o = ctx.index.ops[c.op];
            if (o.iteration != oa.iteration) continue;
            auto it = reach.find(o.rank);
            if (it == reach.end() || c.op < it->second) continue;
            if (c.kind == CommKind::Send && ctx.match.partner[c.op] >= 0)
                relax(std::uint32_t(ctx.match.partner[c.op]), changed);
            if (isCollective(c.kind) && ctx.match.group[c.op] >= 0)
                for (std::uint32_t m : ctx.match.groups[std::size_t(ctx.match.group[c.op])].ops) relax(m, changed);
        }
        if (!changed) break;
    }
    auto it = reach.find(ob.rank);
    return it != reach.end() && it->second <= b;
}

bool firstOf(const AnalysisContext& ctx, std::uint32_t a, std::uint32_t b, OrderEvidence& evidence) {
    const OpRecord &oa = ctx.index.ops[a], &ob = ctx.index.ops[b];
    evidence = OrderEvidence::Causal;
    if (oa.iteration != ob.iteration) return oa.iteration < ob.iteration;
    if (oa.rank == ob.rank) return a < b;
    if (happensBefore(ctx, a, b)) return true;
    if (happensBefore(ctx, b, a)) return false;
    const std::int64_t ta = ctx.correctedTime(a), tb = ctx.correctedTime(b);
    if (ta && tb && ctx.rawTime(a) && ctx.rawTime(b)) {
        evidence = OrderEvidence::Clock;
        return ta != tb ? ta < tb : oa.rank < ob.rank;
    }
    // Pipeline schedule: forward runs from the first stage, backward from the last.
    evidence = OrderEvidence::Heuristic;
    const int sa = ctx.stages.stageOf(oa.rank), sb = ctx.stages.stageOf(ob.rank);
    if (sa >= 0 && sb >= 0 && sa != sb) {
        const bool backward =
            isBackwardName(ctx.index.strings.view(oa.name)) || isBackwardName(ctx.index.strings.view(oa.scope));
        return backward ? sa > sb : sa < sb;
    }
    return oa.rank < ob.rank;
}

}  // namespace dl
