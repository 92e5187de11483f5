// What the timeline paints per lane: the stage headers, the op boxes (runs of one state when
// zoomed out), the slice labels, the search matches, the lane labels. Apart from the overlays drawn
// over the lanes and from the layout, which the widget's hit tests use without painting.
#include "ui/views/timeline/timeline_painter.h"

#include <QObject>
#include <algorithm>
#include <cmath>
#include <limits>

#include "core/util/op_name.h"
#include "ui/style/op_names.h"
#include "ui/style/state_colors.h"

namespace dlui {

namespace {

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

}  // namespace dlui
