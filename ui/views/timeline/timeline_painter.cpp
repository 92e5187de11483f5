#include "ui/views/timeline/timeline_painter.h"

#include <QObject>
#include <QPainterPath>
#include <algorithm>
#include <cmath>
#include <limits>

#include "core/util/op_name.h"

#include "ui/style/op_names.h"
#include "ui/style/state_colors.h"

namespace dlui {

namespace {

constexpr quint32 kNone = 0xffffffffu;

// Accumulates adjacent boxes of one state into a single fill (a zoomed-out lane becomes a few
// dozen runs instead of thousands of rectangles), counting the ops each run holds. With borders
// on, a box wide enough gets a darker outline, so neighbouring ops of one state stay apart.
class RunFiller {
public:
    struct Run {
        QRect rect;
        std::uint32_t count;
        dl::OpState state;
    };
    RunFiller(QPainter& p, const StatePalette& palette, int top, int height, bool borders)
        : m_p(p), m_palette(palette), m_top(top), m_h(height), m_borders(borders && height >= 6) {}
    ~RunFiller() { flush(); }
    void add(double x0, double x1, dl::OpState s, std::uint32_t count = 1) {
        // Deep zoom puts long ops millions of pixels off-screen: keep the int conversion defined.
        x0 = std::clamp(x0, -1e7, 1e7);
        x1 = std::clamp(x1, -1e7, 1e7);
        const int a = static_cast<int>(std::floor(x0));
        const int b = std::max(a + 1, static_cast<int>(std::ceil(x1)));
        if (m_open && s == m_state && a <= m_b) {
            m_b = std::max(m_b, b);
            m_count += count;
            return;
        }
        if (m_open && a < m_b && s < m_state && b <= m_b) {  // hidden under a more severe run already drawn
            m_count += count;
            return;
        }
        flush();
        m_open = true;
        m_a = a;
        m_b = b;
        m_state = s;
        m_count = count;
    }
    void flush() {
        if (!m_open) return;
        const int w = m_b - m_a;
        // Leave a one-pixel gap between wide boxes so neighbouring ops stay distinguishable.
        const QRect box(m_a, m_top, w > 3 ? w - 1 : w, m_h);
        const QColor fill = m_palette.color(m_state);
        m_p.fillRect(box, fill);
        if (m_borders && box.width() >= 3) {
            m_p.setPen(QPen(fill.darker(150), 1));
            m_p.setBrush(Qt::NoBrush);
            m_p.drawRect(box.adjusted(0, 0, -1, -1));
        }
        runs.push_back({box, m_count, m_state});
        ++drawn;
        m_open = false;
    }
    std::size_t drawn = 0;
    std::vector<Run> runs;

private:
    QPainter& m_p;
    const StatePalette& m_palette;
    int m_top, m_h, m_a = 0, m_b = 0;
    bool m_borders;
    bool m_open = false;
    std::uint32_t m_count = 0;
    dl::OpState m_state = dl::OpState::Normal;
};

// `name` cut with "…" to `width`: whole when it fits, else at least two characters and the
// ellipsis, else nothing.
QString elideToSlice(const QFontMetrics& fm, const QString& name, int width) {
    if (fm.horizontalAdvance(name) <= width) return name;
    const QString e = fm.elidedText(name, Qt::ElideRight, width);
    return e.size() >= 3 && e.endsWith(QChar(0x2026)) ? e : QString();
}

double rel(const dl::TimeAxis& axis, std::int64_t t) { return static_cast<double>(t - axis.origin()); }

}  // namespace

void TimelinePainter::setData(std::shared_ptr<const dl::TimelineData> data, const dl::DumpIndex* index) {
    m_data = std::move(data);
    m_index = index;
    m_originOps.clear();
    m_matchItems.assign(m_data ? m_data->lanes.size() : 0, {});
    m_matchCount = 0;
    if (m_data)
        for (const auto& lane : m_data->lanes)
            for (const auto& it : lane.items)
                if (it.state == dl::OpState::Origin) m_originOps.push_back(it.op);
    relayout();
}

void TimelinePainter::relayout() {
    m_laneY.clear();
    m_laneShown.clear();
    m_headerOfLane.clear();
    m_headers.clear();
    int y = 0;
    int prevStage = -2;
    if (m_data)
        for (std::size_t i = 0; i < m_data->lanes.size(); ++i) {
            const auto& lane = m_data->lanes[i];
            if (!m_compact && (m_headers.empty() || lane.stage != prevStage)) {
                m_headers.push_back({y, lane.stage, i, i});
                y += kHeaderHeight;
                prevStage = lane.stage;
            }
            if (!m_compact) m_headers.back().lastLane = i;
            m_headerOfLane.push_back(m_compact ? -1 : static_cast<int>(m_headers.size()) - 1);
            const bool shown = m_compact || !isStageCollapsed(lane.stage);
            m_laneShown.push_back(shown);
            m_laneY.push_back(shown ? y : m_headers.back().y);
            if (shown) y += kLaneHeight;
        }
    m_contentHeight = y;
}

void TimelinePainter::setStageCollapsed(int stage, bool collapsed) {
    if (collapsed)
        m_collapsed.insert(stage);
    else
        m_collapsed.erase(stage);
    relayout();
}

int TimelinePainter::headerAt(const QRect& r, int y, int scrollY) const {
    const int cy = y - lanesRect(r).top() + scrollY;
    for (const Header& h : m_headers)
        if (cy >= h.y && cy < h.y + kHeaderHeight) return h.stage;
    return kNoHeader;
}

void TimelinePainter::setMatches(const std::vector<quint32>& ops) {
    m_matchItems.assign(m_data ? m_data->lanes.size() : 0, {});
    m_matchCount = 0;
    if (!m_data) return;
    for (quint32 op : ops) {
        std::size_t lane = 0, item = 0;
        if (!m_data->locate(op, lane, item)) continue;
        m_matchItems[lane].push_back(static_cast<std::uint32_t>(item));
        ++m_matchCount;
    }
    for (auto& v : m_matchItems) {
        std::sort(v.begin(), v.end());
        v.erase(std::unique(v.begin(), v.end()), v.end());
    }
}

int TimelinePainter::laneAt(const QRect& r, int y, int scrollY) const {
    const int cy = y - lanesRect(r).top() + scrollY;
    for (std::size_t i = 0; i < m_laneY.size(); ++i) {
        if (!m_laneShown[i]) continue;
        if (cy >= m_laneY[i] && cy < m_laneY[i] + kLaneHeight) return static_cast<int>(i);
        if (m_laneY[i] > cy) break;
    }
    return -1;
}

int TimelinePainter::laneNear(const QRect& r, int y, int scrollY, bool down) const {
    const int cy = y - lanesRect(r).top() + scrollY;
    int best = -1;
    for (std::size_t i = 0; i < m_laneY.size(); ++i) {
        if (!m_laneShown[i]) continue;
        const int top = m_laneY[i], bottom = top + kLaneHeight;
        if (down && bottom > cy) return static_cast<int>(i);
        if (!down && top <= cy) best = static_cast<int>(i);
    }
    if (best < 0 && !down)
        for (std::size_t i = 0; i < m_laneY.size(); ++i)
            if (m_laneShown[i]) return static_cast<int>(i);
    if (down)
        for (std::size_t i = m_laneY.size(); i-- > 0;)
            if (m_laneShown[i]) return static_cast<int>(i);
    return best;
}

int TimelinePainter::laneCenterY(const QRect& r, int lane, int scrollY) const {
    const int h = m_laneShown[static_cast<std::size_t>(lane)] ? kLaneHeight : kHeaderHeight;
    return lanesRect(r).top() - scrollY + m_laneY[static_cast<std::size_t>(lane)] + h / 2;
}

QString TimelinePainter::timeText(double t, double step) const {
    if (!m_data) return {};
    if (m_data->base == dl::TimeBase::ExecutionOrder) return QStringLiteral("#%1").arg(std::llround(t));
    return QString::fromStdString(dl::formatTimeOffset(t, step));
}

void TimelinePainter::paint(QPainter& p, const QRect& r, const dl::TimelineViewport& vp, const TimelinePaintState& st) {
    m_lastDrawn = 0;
    m_arrowsDrawn = 0;
    m_labels.clear();
    if (m_paletteFor != m_palette) {
        m_fills = *m_palette;
        for (int s = 0; s < dl::kOpStateCount; ++s) m_fills.colors[std::size_t(s)] = stateColor(dl::OpState(s));
        m_paletteFor = m_palette;
    }
    p.fillRect(r, m_colors.canvas);
    if (!m_data || m_data->lanes.empty()) {
        p.setPen(m_colors.emptyText);
        p.drawText(r, Qt::AlignCenter, QObject::tr("No ops to show"));
        return;
    }
    const dl::TimeAxis axis = axisFor(r, vp);
    paintOverview(p, r, vp);
    paintRuler(p, r, axis, st);
    p.save();
    p.setClipRect(QRect(r.left(), lanesRect(r).top(), r.width(), lanesRect(r).height()));
    paintHeaders(p, r, axis, st);
    paintLanes(p, r, axis, st);
    paintLabels(p, r, st.scrollY);
    p.setClipRect(lanesRect(r));
    paintArrows(p, r, axis, st);
    paintFlows(p, r, axis, st);
    paintSliceLabels(p);
    paintOrigins(p, r, axis, st.scrollY);
    paintMark(p, r, axis, st);
    if (st.hoveredOp != kNone) paintMarker(p, r, axis, st.hoveredOp, st.scrollY, m_colors.hover);
    if (st.selectedOp != kNone) paintMarker(p, r, axis, st.selectedOp, st.scrollY, m_colors.selection);
    if (st.rangeActive) {
        const double a = axis.toX(std::min(st.rangeFrom, st.rangeTo)), b = axis.toX(std::max(st.rangeFrom, st.rangeTo));
        const QRectF band(a, lanesRect(r).top(), b - a, lanesRect(r).height());
        p.fillRect(band, m_colors.selectionBand);
        p.setPen(m_colors.selection);
        p.drawRect(band);
    }
    paintArea(p, r, axis, st);
    p.restore();
}

void TimelinePainter::paintHeaders(QPainter& p, const QRect& r, const dl::TimeAxis& axis,
                                   const TimelinePaintState& st) {
    const QRect lr = lanesRect(r);
    // Every header in the bold of the painter's own font (the widget's, or the report's), restored
    // after: a default QFont for all but the first set them in two sizes in the PDF.
    const QFont base = p.font();
    QFont bold = base;
    bold.setBold(true);
    for (const Header& h : m_headers) {
        const int top = lr.top() + h.y - st.scrollY;
        if (top > lr.bottom() || top + kHeaderHeight < lr.top()) continue;
        p.fillRect(QRect(r.left(), top, r.width(), kHeaderHeight), m_colors.laneHeader);
        const bool folded = isStageCollapsed(h.stage);
        if (folded) {
            // The folded lanes squeezed into the header: where the stage is busy or bad stays visible.
            const int n = static_cast<int>(h.lastLane - h.firstLane + 1);
            const int rowH = std::max(1, (kHeaderHeight - 4) / n);
            p.save();
            p.setClipRect(QRect(lr.left(), top, lr.width(), kHeaderHeight));
            for (std::size_t i = h.firstLane; i <= h.lastLane; ++i)
                paintLane(p, i, axis, top + 2 + static_cast<int>(i - h.firstLane) * rowH, rowH, false);
            p.restore();
        }
        p.setFont(bold);
        p.setPen(m_colors.laneHeaderText);
        // Folded, the name shares the row with the lanes' summary: the label column only.
        const QString name = h.stage < 0 ? QObject::tr("Stage unknown")
            : folded                     ? QObject::tr("Stage %1").arg(h.stage)
                                         : QObject::tr("Pipeline stage %1").arg(h.stage);
        // ▸ folded, ▾ open: a click on the header toggles it.
        const QString text = m_foldable ? (folded ? QStringLiteral("▸ ") : QStringLiteral("▾ ")) + name : name;
        const int w = folded ? kLabelWidth - 8 : 300;
        p.drawText(QRect(r.left() + 4, top, w, kHeaderHeight), Qt::AlignVCenter,
                   p.fontMetrics().elidedText(text, Qt::ElideRight, w));
        p.setFont(base);
    }
}

void TimelinePainter::paintLanes(QPainter& p, const QRect& r, const dl::TimeAxis& axis, const TimelinePaintState& st) {
    const QRect lr = lanesRect(r);
    int shownIndex = 0;
    for (std::size_t i = 0; i < m_data->lanes.size(); ++i) {
        if (!m_laneShown[i]) continue;
        const int top = lr.top() + m_laneY[i] - st.scrollY;
        if (shownIndex++ % 2) p.fillRect(QRect(lr.left(), top, lr.width(), kLaneHeight), m_colors.laneStripe);
        if (top > lr.bottom() || top + kLaneHeight < lr.top()) continue;
        paintLane(p, i, axis, top + 3, kLaneHeight - 6, true);
        paintMatches(p, i, axis, top);
    }
}

void TimelinePainter::paintLane(QPainter& p, std::size_t laneIdx, const dl::TimeAxis& axis, int top, int height,
                                bool labels) {
    const dl::TimelineLane& lane = m_data->lanes[laneIdx];
    const double from = axis.from(), to = axis.to();
    const int level = lane.lod.levelFor(axis.timePerPixel());
    const QFontMetrics fm = p.fontMetrics();
    RunFiller runs(p, m_fills, top, height, labels);
    if (level >= 0) {
        m_scratch.clear();
        lane.lod.queryRelative(level, from, to, m_scratch);
        for (const dl::LodBucket& b : m_scratch)
            if (rel(axis, b.end) >= from && rel(axis, b.start) <= to)
                runs.add(axis.xOf(b.start), axis.xOf(b.end), b.worst, b.count);
        runs.flush();
        m_lastDrawn += m_scratch.size();
        if (!labels) return;
        // A run of merged ops says how many it holds ("25 ops", else "25" where that fits).
        const double left = axis.toX(from), right = axis.toX(to);
        for (const RunFiller::Run& run : runs.runs) {
            if (run.count < 2) continue;
            const double a = std::max<double>(run.rect.left(), left), b = std::min<double>(run.rect.right() + 1, right);
            const QRectF box(a + 2, top, b - a - 4, height);
            QString text = QObject::tr("%L1 ops").arg(run.count);
            if (fm.horizontalAdvance(text) > box.width()) text = QStringLiteral("%L1").arg(run.count);
            if (fm.horizontalAdvance(text) > box.width()) continue;
            m_labels.push_back({SliceLabel::kNoOp, box, text, run.count, run.state});
        }
        return;
    }
    // Zoomed in: every op its own slice, named where two characters of its name fit; neighbours
    // too narrow for a name say together how many they are ("25 ops").
    struct Group {
        double a = 0, b = -1e9;
        std::uint32_t count = 0;
        dl::OpState worst = dl::OpState::Normal;
    } group;
    const auto closeGroup = [&] {
        if (labels && group.count >= 2) {
            const QRectF box(group.a + 1, top, group.b - group.a - 2, height);
            QString text = QObject::tr("%L1 ops").arg(group.count);
            if (fm.horizontalAdvance(text) > box.width()) text = QStringLiteral("%L1").arg(group.count);
            if (fm.horizontalAdvance(text) <= box.width())
                m_labels.push_back({SliceLabel::kNoOp, box, text, group.count, group.worst});
        }
        group = Group{};
    };
    const double left = axis.toX(from), right = axis.toX(to);
    const double lo = from - static_cast<double>(lane.maxDuration);
    auto it = std::lower_bound(lane.items.begin(), lane.items.end(), lo,
                               [&](const dl::TimelineItem& x, double v) { return rel(axis, x.start) < v; });
    for (; it != lane.items.end() && rel(axis, it->start) <= to; ++it) {
        if (rel(axis, it->end) < from) continue;
        const double x0 = axis.xOf(it->start), x1 = axis.xOf(it->end);
        runs.add(x0, x1, it->state);
        runs.flush();
        ++m_lastDrawn;
        if (!labels) continue;
        // The visible part of the slice: a long op scrolled half out keeps its name on screen.
        const double a = std::max(x0, left), b = std::max(a + 1, std::min(x1, right));
        QString text;
        if (m_index && it->op < m_index->ops.size() && b - a >= kMinLabelWidth) {
            const QString name =
                fromView(dl::sliceLabel(opNames(*m_index, m_index->ops[it->op]).shortName.toStdString()));
            text = elideToSlice(fm, name, static_cast<int>(b - a - 4));
        }
        if (!text.isEmpty()) {
            closeGroup();
            m_labels.push_back({it->op, QRectF(a + 2, top, b - a - 4, height), text, 1, it->state});
            continue;
        }
        if (group.count && a - group.b > 2) closeGroup();
        if (!group.count) group.a = a;
        group.b = std::max(group.b, b);
        group.worst = std::max(group.worst, it->state);
        ++group.count;
    }
    closeGroup();
    runs.flush();
}

void TimelinePainter::paintSliceLabels(QPainter& p) {
    // Each name on a patch of its slice's fill: a flow crossing the slice stops at the text.
    const QFontMetrics fm = p.fontMetrics();
    for (const SliceLabel& l : m_labels) {
        const QColor fill = m_fills.color(l.state);
        const Qt::Alignment align = Qt::AlignVCenter | (l.op == SliceLabel::kNoOp ? Qt::AlignHCenter : Qt::AlignLeft);
        const QRect text = fm.boundingRect(l.rect.toRect(), align, l.text);
        p.fillRect(text.adjusted(-1, 0, 1, 0).intersected(l.rect.toAlignedRect()), fill);
        p.setPen(theme::textOn(fill));
        p.drawText(l.rect, align, l.text);
    }
}

void TimelinePainter::paintMark(QPainter& p, const QRect& r, const dl::TimeAxis& axis, const TimelinePaintState& st) {
    if (!st.markActive) return;
    const double x = axis.toX(st.markAt);
    const QRect lr = lanesRect(r);
    if (x < lr.left() || x > lr.right()) return;
    p.setPen(QPen(m_colors.selection, 1, Qt::DashLine));
    p.drawLine(QPointF(x, lr.top()), QPointF(x, lr.bottom()));
}

void TimelinePainter::paintMatches(QPainter& p, std::size_t laneIdx, const dl::TimeAxis& axis, int top) {
    const auto& matches = m_matchItems[laneIdx];
    if (matches.empty()) return;
    const auto& items = m_data->lanes[laneIdx].items;
    const double maxDur = static_cast<double>(m_data->lanes[laneIdx].maxDuration);
    // One mark per pixel column at most: after drawing one, jump past the pixels it covers.
    auto it = std::lower_bound(matches.begin(), matches.end(), axis.from() - maxDur,
                               [&](std::uint32_t k, double v) { return rel(axis, items[k].start) < v; });
    while (it != matches.end()) {
        const dl::TimelineItem& item = items[*it];
        if (rel(axis, item.start) > axis.to()) break;
        const double x0 = std::clamp(axis.xOf(item.start), -1e7, 1e7), x1 = std::clamp(axis.xOf(item.end), -1e7, 1e7);
        if (x1 >= axis.toX(axis.from()) - 1) {
            const int a = static_cast<int>(std::floor(x0)), w = std::max(2, static_cast<int>(std::ceil(x1)) - a);
            p.fillRect(QRect(a, top, w, 3), m_colors.match);
            p.fillRect(QRect(a, top + kLaneHeight - 3, w, 3), m_colors.match);
            ++m_lastDrawn;
            const double next = axis.toTime(a + w + 1);
            it = std::lower_bound(it + 1, matches.end(), next,
                                  [&](std::uint32_t k, double v) { return rel(axis, items[k].start) < v; });
        } else {
            ++it;
        }
    }
}

void TimelinePainter::paintLabels(QPainter& p, const QRect& r, int scrollY) {
    const QRect lr = lanesRect(r);
    for (std::size_t i = 0; i < m_data->lanes.size(); ++i) {
        if (!m_laneShown[i]) continue;
        const auto& lane = m_data->lanes[i];
        const int top = lr.top() + m_laneY[i] - scrollY;
        if (top > lr.bottom() || top + kLaneHeight < lr.top()) continue;
        p.fillRect(QRect(r.left(), top, kLabelWidth, kLaneHeight), m_colors.labelFill);
        p.setPen(m_colors.labelText);
        QString text = QObject::tr("rank %1").arg(lane.rank);
        if (lane.runs > 1) {  // separate runs' ranks of this number: "r0 · 2 runs" where the long form does not fit
            text += QObject::tr(" · %1 runs").arg(lane.runs);
            if (p.fontMetrics().horizontalAdvance(text) > kLabelWidth - 14)
                text = QObject::tr("r%1 · %2 runs").arg(lane.rank).arg(lane.runs);
        }
        if (lane.stream) text += QObject::tr(" · s%1").arg(*lane.stream);
        if (m_compact && lane.stage >= 0) text += QObject::tr(" · st %1").arg(lane.stage);
        p.drawText(QRect(r.left() + 12, top, kLabelWidth - 14, kLaneHeight), Qt::AlignVCenter, text);
        // The label column's edge beside the lanes only: a header's text runs across it.
        p.setPen(m_colors.separator);
        p.drawLine(r.left() + kLabelWidth - 1, top, r.left() + kLabelWidth - 1, top + kLaneHeight - 1);
    }
}

void TimelinePainter::paintRuler(QPainter& p, const QRect& r, const dl::TimeAxis& axis, const TimelinePaintState& st) {
    const QRect rr = rulerRect(r);
    p.fillRect(QRect(r.left(), rr.top(), r.width(), rr.height()), m_colors.ruler);
    if (st.areaActive) {  // the area's time span on the ruler, where a drag on it makes one
        const double a = axis.toX(std::min(st.areaFrom, st.areaTo)), b = axis.toX(std::max(st.areaFrom, st.areaTo));
        p.fillRect(QRectF(a, rr.top(), std::max(1.0, b - a), rr.height()), m_colors.selectionBand);
    }
    // Offsets from the view's start, or from the user's mark, in one unit and precision
    // ("+200 µs", "+400 µs"), at least 90 px apart or wider when the labels are; whole steps in an
    // execution order. The left cell says what they count from.
    const QFontMetrics fm = p.fontMetrics();
    const double tpp = axis.timePerPixel();
    const bool exec = m_data->base == dl::TimeBase::ExecutionOrder;
    const double ref = st.markActive ? st.markAt : axis.from();
    dl::OffsetRuler ru = dl::offsetRuler(axis.from(), axis.to(), ref, tpp * 90, exec);
    const auto labelOf = [&](int i) { return QString::fromStdString(ru.label(i)); };
    if (ru.ticks.count > 0) {
        const int widest =
            std::max(fm.horizontalAdvance(labelOf(0)), fm.horizontalAdvance(labelOf(ru.ticks.count - 1)));
        if (widest + 12 > ru.ticks.step / tpp)
            ru = dl::offsetRuler(axis.from(), axis.to(), ref, tpp * (widest + 12), exec);
    }
    m_rulerLabels.clear();
    p.setPen(m_colors.axisText);
    int labelEnd = std::numeric_limits<int>::min();  // right end of the last label drawn
    for (int i = 0; i < ru.ticks.count; ++i) {
        const double t = ref + ru.ticks.at(i);
        // A tick at the very end maps to one past the ruler's last pixel: drawn on that pixel.
        const int x = std::min(static_cast<int>(std::lround(axis.toX(t))), rr.right());
        p.drawLine(x, rr.bottom() - 6, x, rr.bottom());
        const QString label = labelOf(i);
        const int w = fm.horizontalAdvance(label) + 4;
        // Right of its tick; left of it when it would run past the ruler's end (the PDF's excerpt
        // has no margin there: "1 µs" ran off the page), and left out when that meets the last one.
        int left = x + 3;
        if (left + w > rr.right()) left = x - 3 - w;
        if (left < labelEnd + 6 || left < rr.left()) continue;
        p.drawText(QRect(left, rr.top(), w, rr.height() - 4),
                   Qt::AlignVCenter | (left > x ? Qt::AlignLeft : Qt::AlignRight), label);
        m_rulerLabels << label;
        labelEnd = left + w;
    }
    // What the offsets count from: the view's start or the mark, as a time of the run.
    const double step = ru.ticks.count ? ru.ticks.step : tpp * 90;
    const QString at = exec
        ? QStringLiteral("#%1").arg(std::llround(ref))
        : QString::fromStdString(dl::formatTime(ref, dl::timeFormatFor(ref, std::min(step, std::max(tpp, 1e-3)))));
    m_rulerRef = st.markActive ? QObject::tr("mark %1").arg(at) : at;
    const QRect cell(r.left() + 4, rr.top(), kLabelWidth - 8, rr.height());
    p.drawText(cell, Qt::AlignVCenter, fm.elidedText(m_rulerRef, Qt::ElideRight, cell.width()));
    if (st.markActive) {  // the mark's place on the ruler
        const double x = axis.toX(st.markAt);
        if (x >= rr.left() && x <= rr.right()) {
            QPolygonF tri;
            tri << QPointF(x, rr.bottom()) << QPointF(x - 5, rr.bottom() - 7) << QPointF(x + 5, rr.bottom() - 7);
            p.setPen(Qt::NoPen);
            p.setBrush(m_colors.selection);
            p.drawPolygon(tri);
        }
    }
}

void TimelinePainter::paintOverview(QPainter& p, const QRect& r, const dl::TimelineViewport& vp) {
    const QRect o = overviewRect(r);
    p.fillRect(QRect(r.left(), o.top(), r.width(), o.height()), m_colors.overview);
    p.setPen(m_colors.axisText);
    p.drawText(QRect(r.left() + 4, o.top(), kLabelWidth - 8, o.height()), Qt::AlignVCenter, QObject::tr("overview"));
    const dl::TimeAxis full(vp.fullFrom(), vp.fullTo(), o.left(), o.width(), vp.origin());
    const int n = static_cast<int>(m_data->lanes.size());
    const double h = std::max(1.0, static_cast<double>(o.height() - 4) / n);
    for (int i = 0; i < n; ++i)
        paintLane(p, static_cast<std::size_t>(i), full, o.top() + 2 + static_cast<int>(i * h),
                  std::max(1, static_cast<int>(h) - (h > 3)), false);
    const double a = full.toX(vp.from()), b = full.toX(vp.to());
    p.fillRect(QRectF(o.left(), o.top(), a - o.left(), o.height()), m_colors.overviewVeil);
    p.fillRect(QRectF(b, o.top(), o.right() - b, o.height()), m_colors.overviewVeil);
    p.setPen(QPen(m_colors.selection, 1.5));
    p.drawRect(QRectF(a, o.top() + 1, std::max(2.0, b - a), o.height() - 2));
}

void TimelinePainter::paintArrow(QPainter& p, QPointF s, QPointF e, const QPen& pen) {
    p.setPen(pen);
    QPainterPath path(s);
    const double dx = std::max(20.0, std::abs(e.x() - s.x()) / 2);
    path.cubicTo(s + QPointF(dx, 0), e - QPointF(dx, 0), e);
    p.setBrush(Qt::NoBrush);
    p.drawPath(path);
    // Arrowhead pointing right into the receiving op.
    QPolygonF head;
    head << e << e + QPointF(-8, -4) << e + QPointF(-8, 4);
    p.setPen(Qt::NoPen);
    p.setBrush(pen.color());
    p.drawPolygon(head);
}

void TimelinePainter::paintArrows(QPainter& p, const QRect& r, const dl::TimeAxis& axis, const TimelinePaintState& st) {
    // Only the chain hops of the selected op, as Perfetto draws only the selection's flows: all of
    // them at once buried the origin under ~20 curves on a pipeline dump.
    if (st.selectedOp == kNone) return;
    const int scrollY = st.scrollY;
    p.setRenderHint(QPainter::Antialiasing, true);
    for (const auto& a : m_data->arrows) {
        if (a.fromOp != st.selectedOp && a.toOp != st.selectedOp) continue;
        std::size_t la = 0, ia = 0, lb = 0, ib = 0;
        if (!m_data->locate(a.fromOp, la, ia) || !m_data->locate(a.toOp, lb, ib)) continue;
        const auto& x = m_data->lanes[la].items[ia];
        const auto& y = m_data->lanes[lb].items[ib];
        const QPointF s(axis.xOf(x.end), laneCenterY(r, static_cast<int>(la), scrollY));
        const QPointF e(axis.xOf(y.start), laneCenterY(r, static_cast<int>(lb), scrollY));
        paintArrow(p, s, e,
                   QPen(m_colors.chainArrow, 1.6, a.via == dl::ChainVia::WeightUpdate ? Qt::DashLine : Qt::SolidLine));
        ++m_arrowsDrawn;
    }
    p.setRenderHint(QPainter::Antialiasing, false);
}

void TimelinePainter::paintFlows(QPainter& p, const QRect& r, const dl::TimeAxis& axis, const TimelinePaintState& st) {
    if (st.selectedOp == kNone) return;
    const std::vector<dl::TimelineFlow> flows = m_data->flowsFor(st.selectedOp);
    if (flows.empty()) return;
    p.setRenderHint(QPainter::Antialiasing, true);
    for (const dl::TimelineFlow& f : flows) {
        std::size_t la = 0, ia = 0, lb = 0, ib = 0;
        if (!m_data->locate(f.fromOp, la, ia) || !m_data->locate(f.toOp, lb, ib)) continue;
        const auto& x = m_data->lanes[la].items[ia];
        const auto& y = m_data->lanes[lb].items[ib];
        const double ya = laneCenterY(r, static_cast<int>(la), st.scrollY),
                     yb = laneCenterY(r, static_cast<int>(lb), st.scrollY);
        if (f.collective) {
            // Members of one collective: a dotted line between the two (no direction).
            p.setPen(QPen(m_colors.flow, 1.4, Qt::DotLine));
            p.drawLine(QPointF((axis.xOf(x.start) + axis.xOf(x.end)) / 2, ya),
                       QPointF((axis.xOf(y.start) + axis.xOf(y.end)) / 2, yb));
            paintMarker(p, r, axis, f.toOp, st.scrollY, m_colors.flow);
        } else {
            paintArrow(p, QPointF(axis.xOf(x.end), ya), QPointF(axis.xOf(y.start), yb), QPen(m_colors.flow, 1.6));
            paintMarker(p, r, axis, f.fromOp == st.selectedOp ? f.toOp : f.fromOp, st.scrollY, m_colors.flow);
        }
    }
    p.setRenderHint(QPainter::Antialiasing, false);
}

void TimelinePainter::paintOrigins(QPainter& p, const QRect& r, const dl::TimeAxis& axis, int scrollY) {
    p.setRenderHint(QPainter::Antialiasing, true);
    for (quint32 op : m_originOps) {
        std::size_t lane = 0, item = 0;
        if (!m_data->locate(op, lane, item)) continue;
        const auto& it = m_data->lanes[lane].items[item];
        const double x = std::clamp((axis.xOf(it.start) + axis.xOf(it.end)) / 2, -1e6, 1e6);
        const double top = laneCenterY(r, static_cast<int>(lane), scrollY) - kLaneHeight / 2.0;
        QPolygonF tri;
        tri << QPointF(x, top + 7) << QPointF(x - 6, top - 3) << QPointF(x + 6, top - 3);
        p.setPen(QPen(m_colors.markOutline, 1));
        p.setBrush(m_fills.color(dl::OpState::Origin));
        p.drawPolygon(tri);
    }
    p.setRenderHint(QPainter::Antialiasing, false);
}

void TimelinePainter::paintArea(QPainter& p, const QRect& r, const dl::TimeAxis& axis, const TimelinePaintState& st) {
    if (!st.areaActive || m_laneY.empty()) return;
    const int la = std::clamp(std::min(st.areaLaneFrom, st.areaLaneTo), 0, static_cast<int>(m_laneY.size()) - 1);
    const int lb = std::clamp(std::max(st.areaLaneFrom, st.areaLaneTo), 0, static_cast<int>(m_laneY.size()) - 1);
    const double a = axis.toX(std::min(st.areaFrom, st.areaTo)), b = axis.toX(std::max(st.areaFrom, st.areaTo));
    const double top =
        laneCenterY(r, la, st.scrollY) - (m_laneShown[std::size_t(la)] ? kLaneHeight : kHeaderHeight) / 2.0;
    const double bottom =
        laneCenterY(r, lb, st.scrollY) + (m_laneShown[std::size_t(lb)] ? kLaneHeight : kHeaderHeight) / 2.0;
    const QRectF band(std::clamp(a, -1e6, 1e6), top, std::clamp(b - a, 1.0, 2e6), bottom - top);
    p.fillRect(band, m_colors.selectionBand);
    p.setPen(QPen(m_colors.selection, 1, Qt::DashLine));
    p.setBrush(Qt::NoBrush);
    p.drawRect(band);
}

void TimelinePainter::paintMarker(QPainter& p, const QRect& r, const dl::TimeAxis& axis, quint32 op, int scrollY,
                                  QColor c) {
    std::size_t lane = 0, item = 0;
    if (!m_data->locate(op, lane, item)) return;
    const auto& it = m_data->lanes[lane].items[item];
    const bool shown = m_laneShown[lane];
    const int h = shown ? kLaneHeight : kHeaderHeight;
    const int top = laneCenterY(r, static_cast<int>(lane), scrollY) - h / 2;
    const double x0 = std::clamp(axis.xOf(it.start), -1e6, 1e6),
                 x1 = std::clamp(std::max(x0 + 3, axis.xOf(it.end)), -1e6, 1e6);
    p.setPen(QPen(c, 2));
    p.setBrush(Qt::NoBrush);
    p.drawRect(QRectF(x0 - 1, top + 1, x1 - x0 + 2, h - 2));
}

}  // namespace dlui
