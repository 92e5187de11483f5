// Level-of-detail pyramid, timeline building, viewport and the op filter (core, no Qt).
#include <gtest/gtest.h>

#include <random>

#include "core/query/op_filter.h"
#include "core/timeline/time_axis.h"
#include "core/timeline/timeline_data.h"
#include "core/timeline/timeline_lod.h"
#include "core/timeline/timeline_viewport.h"

using namespace dl;

namespace {

std::vector<TimelineItem> randomItems(std::size_t n, std::uint32_t seed) {
    std::mt19937 rng(seed);
    std::vector<TimelineItem> v(n);
    std::int64_t t = 0;
    for (std::size_t i = 0; i < n; ++i) {
        t += rng() % 50;
        v[i] = {t, t + 1 + std::int64_t(rng() % 30), std::uint32_t(i), OpState(rng() % 4)};
    }
    return v;
}

// A tiny two-rank index: rank 0 ops at t=100.., rank 1 at t=1000..; op 3 overflows.
DumpIndex tinyIndex(bool timestamps) {
    DumpIndex ix;
    const char* types[] = {"MatMul", "Add", "SqrtGrad", "Send"};
    for (std::uint32_t r = 0; r < 2; ++r)
        for (std::uint32_t k = 0; k < 4; ++k) {
            OpRecord o;
            o.rank = r;
            o.type = ix.strings.intern(types[k]);
            o.name = ix.strings.intern(std::string(types[k]) + "-op" + std::to_string(k));
            o.execPos = k;
            o.startUs = timestamps ? 100 + 1000 * r + 10 * k : 0;
            o.endUs = o.startUs + (timestamps ? 5 : 0);
            o.firstTensor = static_cast<std::uint32_t>(ix.tensors.size());
            o.tensorCount = 1;
            TensorRecord t;
            t.op = static_cast<std::uint32_t>(ix.ops.size());
            t.dtype = DType::Float16;
            TensorStats s;
            s.maxAbs = (r == 1 && k == 2) ? 65504 : (k == 1 ? 40000 : 3);
            s.satCount = (r == 1 && k == 2) ? 100 : 0;
            s.count = 1000;
            s.known =
                stat::MaxAbs | stat::SatCount | stat::Count | stat::NanCount | stat::PosInfCount | stat::NegInfCount;
            ix.setStats(t, s);
            ix.tensors.push_back(t);
            ix.ops.push_back(o);
        }
    return ix;
}

}  // namespace

TEST(TimelineLod, EveryLevelCoversAllItemsWithWorstState) {
    for (std::size_t n : {1u, 2u, 7u, 1000u, 50000u}) {
        auto items = randomItems(n, 7 + n);
        TimelineLod lod;
        lod.build(items, items.front().start, items.back().end);
        ASSERT_GE(lod.levels(), 1);
        EXPECT_EQ(lod.level(lod.levels() - 1).size(), 1u) << n;  // top is one bucket
        OpState worst = OpState::Normal;
        for (auto& it : items) worst = std::max(worst, it.state);
        for (int l = 0; l < lod.levels(); ++l) {
            std::uint64_t count = 0;
            for (const auto& b : lod.level(l)) {
                count += b.count;
                // The bucket's first item starts at its start; no item of it ends after its end.
                EXPECT_EQ(items[b.firstItem].start, b.start);
                for (std::uint32_t k = b.firstItem; k < b.firstItem + b.count; ++k) {
                    EXPECT_LE(items[k].end, b.end);
                    EXPECT_LE(items[k].state, b.worst);
                }
            }
            EXPECT_EQ(count, n) << "level " << l;
            if (l > 0) {
                EXPECT_LE(lod.level(l).size(), (lod.level(l - 1).size() + 1) / 2 + 1);
            }
        }
        EXPECT_EQ(lod.level(lod.levels() - 1).front().worst, worst);
    }
}

TEST(TimelineLod, LevelForPicksCoarsestNotWiderThanAPixel) {
    auto items = randomItems(100000, 3);
    TimelineLod lod;
    lod.build(items, items.front().start, items.back().end);
    EXPECT_EQ(lod.levelFor(lod.bucketWidth(0) * 0.5), -1);  // zoomed in: draw raw items
    EXPECT_EQ(lod.levelFor(lod.bucketWidth(0)), 0);
    EXPECT_EQ(lod.levelFor(lod.bucketWidth(3) * 1.5), 3);
    EXPECT_EQ(lod.levelFor(1e30), lod.levels() - 1);
}

TEST(TimelineLod, QueryReturnsBoundedBucketsCoveringTheWindow) {
    auto items = randomItems(200000, 11);
    const std::int64_t t0 = items.front().start, t1 = items.back().end;
    TimelineLod lod;
    lod.build(items, t0, t1);
    const double from = t0 + (t1 - t0) * 0.3, to = t0 + (t1 - t0) * 0.4;
    const double pixel = (to - from) / 1000.0;  // a 1000-pixel-wide view
    const int level = lod.levelFor(pixel);
    ASSERT_GE(level, 0);
    std::vector<LodBucket> out;
    lod.query(level, from, to, out);
    EXPECT_LE(out.size(), 2 * 1000u + 3u);  // buckets are between half a pixel and a pixel wide
    // Every item starting inside the window is in a returned bucket.
    std::uint64_t inWindow = 0, covered = 0;
    for (auto& it : items) inWindow += it.start >= from && it.start <= to;
    for (auto& b : out)
        for (std::uint32_t k = b.firstItem; k < b.firstItem + b.count; ++k)
            covered += items[k].start >= from && items[k].start <= to;
    EXPECT_EQ(covered, inWindow);
}

TEST(TimelineData, LanesPerRankStatesChainAndAlignment) {
    DumpIndex ix = tinyIndex(true);
    AnalysisResult a;
    a.firstOverflow = OverflowPoint{};
    a.firstOverflow->op = 6;  // rank 1 SqrtGrad
    a.stages.stageOfRank = {{0, 1}, {1, 0}};
    a.clockOffsetUs = {{0, 0}, {1, 900}};
    a.chain = {ChainStep{ChainRole::Origin, *a.firstOverflow, ""}, ChainStep{ChainRole::Send, {}, ""}};
    a.chain[1].at.op = 3;
    a.chain[1].causedBy = 0;  // one hop: the origin's Send
    // Near the limit is the analysis's list (one tensor per op here): the Adds at 40000 / 65504 > 0.5.
    a.nearLimitTensors = {1, 5};
    const OpStates st = computeOpStates(ix, &a);
    EXPECT_EQ(st.op[6], OpState::Origin);
    EXPECT_EQ(st.op[1], OpState::NearLimit);  // 40000 / 65504 > 0.5
    EXPECT_EQ(st.op[0], OpState::Normal);
    TimelineData d = buildTimeline(ix, &a, st, {});
    ASSERT_EQ(d.lanes.size(), 2u);
    EXPECT_EQ(d.base, TimeBase::Timestamps);
    EXPECT_EQ(d.lanes[0].rank, 1u);  // stage 0 first
    EXPECT_EQ(d.lanes[0].items.front().start, 1100 - 900);
    ASSERT_EQ(d.arrows.size(), 1u);
    std::size_t lane = 0, item = 0;
    ASSERT_TRUE(d.locate(6, lane, item));
    EXPECT_EQ(lane, 0u);
    EXPECT_EQ(d.lanes[lane].items[item].op, 6u);
    const TimelineItem* hit = d.itemAt(0, 1100 - 900 + 20 + 2, 1);
    ASSERT_NE(hit, nullptr);
    EXPECT_EQ(hit->op, 6u);
    TimelineOptions raw;
    raw.alignClocks = false;
    EXPECT_EQ(buildTimeline(ix, &a, st, raw).lanes[0].items.front().start, 1100);
}

TEST(TimelineData, ExecutionOrderWhenTimestampsAreMissing) {
    DumpIndex ix = tinyIndex(false);
    const OpStates st = computeOpStates(ix, nullptr);
    TimelineData d = buildTimeline(ix, nullptr, st, {});
    EXPECT_EQ(d.base, TimeBase::ExecutionOrder);
    ASSERT_EQ(d.lanes.size(), 2u);
    EXPECT_EQ(d.lanes[1].items[3].start, 3);
    EXPECT_EQ(d.opsShown, 8u);
    EXPECT_EQ(d.t0, 0);
    EXPECT_EQ(d.t1, 4);
}

TEST(OpFilter, TextRegexTypeRankStateAndSort) {
    DumpIndex ix = tinyIndex(true);
    const OpStates st = computeOpStates(ix, nullptr);
    QueryContext ctx{ix, st, nullptr};
    std::vector<std::uint32_t> rows;
    std::string err;
    OpFilter f;
    f.text = "sqrt";
    ASSERT_TRUE(filterRows(ctx, f, rows, err));
    EXPECT_EQ(rows, (std::vector<std::uint32_t>{2, 6}));
    f.text = "^(Add|Send)-";
    f.regex = true;
    ASSERT_TRUE(filterRows(ctx, f, rows, err));
    EXPECT_EQ(rows.size(), 4u);
    f.rank = 1;
    ASSERT_TRUE(filterRows(ctx, f, rows, err));
    EXPECT_EQ(rows, (std::vector<std::uint32_t>{5, 7}));
    f = {};
    f.text = "([";
    f.regex = true;
    EXPECT_FALSE(filterRows(ctx, f, rows, err));
    EXPECT_NE(err.find("invalid regular expression"), std::string::npos);
    f = {};
    f.stateMask = opStateBit(OpState::Saturated);
    ASSERT_TRUE(filterRows(ctx, f, rows, err));
    EXPECT_EQ(rows, (std::vector<std::uint32_t>{6}));
    f = {};
    f.type = "Add";
    ASSERT_TRUE(filterRows(ctx, f, rows, err));
    EXPECT_EQ(rows, (std::vector<std::uint32_t>{1, 5}));
    ASSERT_TRUE(filterRows(ctx, {}, rows, err));
    sortRows(ctx, rows, OpColumn::MaxAbs, true);
    EXPECT_EQ(rows.front(), 6u);
    EXPECT_EQ(rows[1], 1u);
    sortRows(ctx, rows, OpColumn::Op, false);
    EXPECT_EQ(ix.strings.str(ix.ops[rows.front()].name), "Add-op1");
    EXPECT_EQ(opTypes(ix), (std::vector<std::string>{"Add", "MatMul", "Send", "SqrtGrad"}));
}

TEST(TimelineViewport, ZoomPanClampUndo) {
    TimelineViewport v;
    v.setFullRange(0, 1000);
    v.zoomAt(500, 0.5);
    EXPECT_DOUBLE_EQ(v.from(), 250);
    EXPECT_DOUBLE_EQ(v.to(), 750);
    v.pan(-1000);  // clamps at the left edge
    EXPECT_DOUBLE_EQ(v.from(), 0);
    EXPECT_DOUBLE_EQ(v.span(), 500);
    v.zoomTo(100, 200);
    EXPECT_TRUE(v.canUndo());
    EXPECT_DOUBLE_EQ(v.from(), 100);
    EXPECT_TRUE(v.undo());
    EXPECT_DOUBLE_EQ(v.from(), 0);
    EXPECT_DOUBLE_EQ(v.to(), 500);
    EXPECT_FALSE(v.undo());
    v.zoomAt(0, 100);  // zooming out never passes the full range
    EXPECT_DOUBLE_EQ(v.span(), 1000);
    v.zoomTo(10, 10.1);  // never below the minimum span
    EXPECT_GE(v.span(), v.minSpan());
}

TEST(TimelineViewport, SetWindowFollowsWithoutUndo) {
    TimelineViewport v;
    v.setFullRange(0, 1000);
    v.setWindow(700, 300);  // ordered
    EXPECT_DOUBLE_EQ(v.from(), 300);
    EXPECT_DOUBLE_EQ(v.to(), 700);
    EXPECT_FALSE(v.canUndo());
    v.setWindow(900, 1400);  // clamped into the range, span kept
    EXPECT_DOUBLE_EQ(v.to(), 1000);
    EXPECT_DOUBLE_EQ(v.span(), 500);
    v.setWindow(5, 5);  // at least the minimum span
    EXPECT_GE(v.span(), v.minSpan());
}

TEST(TimeAxis, NiceTicks) {
    EXPECT_DOUBLE_EQ(niceTickStep(0.7), 1);
    EXPECT_DOUBLE_EQ(niceTickStep(1.5), 2);
    EXPECT_DOUBLE_EQ(niceTickStep(3), 5);
    EXPECT_DOUBLE_EQ(niceTickStep(70), 100);
    EXPECT_DOUBLE_EQ(niceTickStep(0), 1);
}
