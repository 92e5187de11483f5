// qcustomplot.h uses Qt's foreach (disabled project-wide by QT_NO_FOREACH): allow it in this
// translation unit, before any Qt header is seen.
#undef QT_NO_FOREACH
#include <qcustomplot.h>

#include "ui/report/report_layout.h"

#include <QFontMetricsF>
#include <algorithm>
#include <numeric>
#include "ui/style/theme.h"

namespace dlui {

namespace {
constexpr double kMarginPt = 40;
constexpr int kPad = 5;  // cell padding, device units
const QColor kRule(0xc8, 0xcc, 0xd4);
const QColor kHeaderFill(0xe9, 0xec, 0xf2);
const QColor kEmphasisFill = theme::kRowEmphasis;

QString q(const std::string& s) { return QString::fromStdString(s); }
}  // namespace

ReportLayout::ReportLayout(QPdfWriter& writer, QCPPainter& painter, QString title, QString stamp, int totalPages)
    : m_writer(writer), m_p(painter), m_title(std::move(title)), m_stamp(std::move(stamp)), m_total(totalPages) {
    m_unitsPerPoint = writer.resolution() / 72.0;
    m_pageHeightPt = writer.pageLayout().fullRect(QPageLayout::Point).height();
    const int margin = static_cast<int>(kMarginPt * m_unitsPerPoint);
    m_left = margin;
    m_width = writer.width() - 2 * margin;
    m_top = margin + static_cast<int>(14 * m_unitsPerPoint);  // below the running header
    m_bottom = writer.height() - margin - static_cast<int>(10 * m_unitsPerPoint);
    m_body = QFont(QStringLiteral("DejaVu Sans"));
    m_body.setPointSizeF(9);
    // No ligatures: "fl" stays two letters, so the text copies and searches as "overflow", not
    // with the U+FB02 ligature.
    m_body.setStyleStrategy(QFont::PreferNoShaping);
    m_small = m_body;
    m_small.setPointSizeF(7.5);
    m_h1 = m_body;
    m_h1.setPointSizeF(13);
    m_h1.setBold(true);
    m_h2 = m_body;
    m_h2.setPointSizeF(10.5);
    m_h2.setBold(true);
    m_y = m_top;
    drawFrame();
}

ReportLayout::~ReportLayout() = default;

QFont ReportLayout::bold() const {
    QFont f = m_body;
    f.setBold(true);
    return f;
}

int ReportLayout::lineHeight(const QFont& f) const {
    return static_cast<int>(QFontMetricsF(f, &m_writer).lineSpacing() + 0.5);
}

// Word wrap, unless a single word (a long scope path) is wider than the box: then break anywhere
// rather than run past the edge.
int ReportLayout::wrapFlags(const QString& text, const QFont& f, int width) const {
    const QFontMetricsF fm(f, &m_writer);
    for (const QString& w : text.split(QLatin1Char(' '), Qt::SkipEmptyParts))
        if (fm.horizontalAdvance(w) > width) return Qt::TextWrapAnywhere;
    return Qt::TextWordWrap;
}

int ReportLayout::textHeight(const QString& text, const QFont& f, int width) const {
    const QFontMetricsF fm(f, &m_writer);
    const QRectF r = fm.boundingRect(QRectF(0, 0, width, 1e6), wrapFlags(text, f, width), text);
    return static_cast<int>(std::ceil(r.height()));
}

void ReportLayout::drawFrame() {
    m_p.save();
    m_p.setFont(m_small);
    m_p.setPen(theme::kTextSecondary);
    const int margin = static_cast<int>(kMarginPt * m_unitsPerPoint);
    const int hy = margin - lineHeight(m_small) / 2;
    // The date keeps its place; the title (it ends in the dump path) gets the width left of it and,
    // when longer, loses the start of the path: the folder names nearest the dump tell most.
    const QFontMetricsF fm(m_small, &m_writer);
    const int gap = static_cast<int>(12 * m_unitsPerPoint);
    const int stampW = static_cast<int>(std::ceil(fm.horizontalAdvance(m_stamp)));
    const int room = std::max(0, m_width - stampW - gap);
    QString title = fm.elidedText(m_title, Qt::ElideLeft, room);
    if (const qsizetype cut = m_title.indexOf(QStringLiteral(" · ")); title != m_title && cut > 0) {
        // "DumpLens overflow report · …/nearest/folders": the report's name stays, the path gives way.
        const QString head = m_title.left(cut + 3);
        title =
            head + fm.elidedText(m_title.mid(cut + 3), Qt::ElideLeft, std::max(0.0, room - fm.horizontalAdvance(head)));
    }
    m_p.drawText(QRect(m_left, hy, m_width - stampW - gap, lineHeight(m_small)), Qt::AlignLeft | Qt::AlignVCenter,
                 title);
    m_p.drawText(QRect(m_left, hy, m_width, lineHeight(m_small)), Qt::AlignRight | Qt::AlignVCenter, m_stamp);
    m_p.setPen(QPen(kRule, 1));
    m_p.drawLine(QLineF(m_left, hy + lineHeight(m_small), m_left + m_width, hy + lineHeight(m_small)));
    const QString page = m_total > 0 ? QStringLiteral("Page %1 of %2").arg(m_page + 1).arg(m_total)
                                     : QStringLiteral("Page %1").arg(m_page + 1);
    m_p.setPen(theme::kTextSecondary);
    m_p.drawText(QRect(m_left, m_bottom + lineHeight(m_small), m_width, lineHeight(m_small)), Qt::AlignCenter, page);
    m_p.restore();
}

void ReportLayout::newPage() {
    m_writer.newPage();
    ++m_page;
    m_y = m_top;
    drawFrame();
}

void ReportLayout::ensure(int units) {
    if (m_y + units > m_bottom && m_y > m_top) newPage();
}

void ReportLayout::heading(const QString& text, int level) {
    const QFont& f = level == 0 ? m_h1 : m_h2;
    const int h = lineHeight(f);
    // Keep a heading with at least a few lines of what follows.
    ensure(h + 5 * lineHeight(m_body));
    if (m_y > m_top) m_y += h / 2;
    m_outline.push_back({text.toStdString(), m_page, level, m_pageHeightPt - m_y / m_unitsPerPoint + 4});
    m_p.setFont(f);
    m_p.setPen(level == 0 ? theme::kNavy : theme::kText);
    m_p.drawText(QRect(m_left, m_y, m_width, h), Qt::AlignLeft | Qt::AlignVCenter, text);
    m_y += h;
    if (level == 0) {
        m_p.setPen(QPen(theme::kNavy, 1.5));
        m_p.drawLine(QLineF(m_left, m_y + 1, m_left + m_width, m_y + 1));
    }
    m_y += h / 3;
}

void ReportLayout::paragraph(const QString& text, const QFont& font, const QColor& color) {
    if (text.isEmpty()) return;
    const int h = textHeight(text, font, m_width);
    ensure(h);
    m_p.setFont(font);
    m_p.setPen(color);
    m_p.drawText(QRect(m_left, m_y, m_width, h + 2), wrapFlags(text, font, m_width), text);
    m_y += h + lineHeight(font) / 4;
}

void ReportLayout::bullets(const std::vector<std::string>& lines, const QString& mark) {
    const int indent = lineHeight(m_body);
    for (const std::string& l : lines) {
        const QString t = q(l);
        const int h = textHeight(t, m_body, m_width - indent);
        ensure(h);
        m_p.setFont(m_body);
        m_p.setPen(Qt::black);
        m_p.drawText(QRect(m_left, m_y, indent, lineHeight(m_body)), Qt::AlignLeft, mark);
        m_p.drawText(QRect(m_left + indent, m_y, m_width - indent, h + 2), wrapFlags(t, m_body, m_width - indent), t);
        m_y += h + 2;
    }
    m_y += lineHeight(m_body) / 3;
}

void ReportLayout::fields(const std::vector<dl::ReportField>& rows) {
    const int labelW = static_cast<int>(m_width * 0.22);
    const QFont lf = bold();
    for (const dl::ReportField& f : rows) {
        const QString v = q(f.value);
        const int h = std::max(textHeight(v, m_body, m_width - labelW), lineHeight(m_body));
        ensure(h);
        m_p.setFont(lf);
        m_p.setPen(theme::kLabelText);
        m_p.drawText(QRect(m_left, m_y, labelW, h), Qt::AlignLeft | Qt::AlignTop, q(f.label));
        m_p.setFont(m_body);
        m_p.setPen(Qt::black);
        m_p.drawText(QRect(m_left + labelW, m_y, m_width - labelW, h + 2), wrapFlags(v, m_body, m_width - labelW), v);
        m_y += h + 3;
    }
    m_y += lineHeight(m_body) / 2;
}

// Widths from the longest cell per column (capped), or from explicit weights.
std::vector<int> ReportLayout::columnWidths(const dl::ReportTable& t, const std::vector<double>& weights) const {
    const std::size_t n = t.columns.size();
    std::vector<double> want(n, 1);
    if (weights.size() == n) {
        want = weights;
    } else {
        const QFontMetricsF fm(m_small, &m_writer);
        for (std::size_t c = 0; c < n; ++c) {
            double w = fm.horizontalAdvance(q(t.columns[c]));
            for (const auto& row : t.rows)
                if (c < row.size()) w = std::max(w, fm.horizontalAdvance(q(row[c])));
            want[c] = std::min(w + 2 * kPad, m_width * 0.45);
        }
    }
    const double sum = std::accumulate(want.begin(), want.end(), 0.0);
    std::vector<int> out(n);
    for (std::size_t c = 0; c < n; ++c) out[c] = static_cast<int>(m_width * want[c] / sum);
    return out;
}

int ReportLayout::rowHeight(const std::vector<std::string>& cells, const std::vector<int>& widths,
                            const QFont& f) const {
    int h = lineHeight(f);
    for (std::size_t c = 0; c < widths.size() && c < cells.size(); ++c)
        h = std::max(h, textHeight(q(cells[c]), f, widths[c] - 2 * kPad));
    return h + 2 * kPad / 2 + 2;
}

void ReportLayout::drawRow(const std::vector<std::string>& cells, const std::vector<int>& widths, const QFont& f, int h,
                           const QColor& fill) {
    if (fill.isValid()) m_p.fillRect(QRect(m_left, m_y, m_width, h), fill);
    m_p.setFont(f);
    m_p.setPen(Qt::black);
    int x = m_left;
    for (std::size_t c = 0; c < widths.size(); ++c) {
        if (c < cells.size()) {
            const QString t = q(cells[c]);
            m_p.drawText(QRect(x + kPad, m_y + kPad / 2, widths[c] - 2 * kPad, h),
                         wrapFlags(t, f, widths[c] - 2 * kPad), t);
        }
        x += widths[c];
    }
    m_p.setPen(QPen(kRule, 1));
    m_p.drawLine(QLineF(m_left, m_y + h, m_left + m_width, m_y + h));
    m_y += h;
}

void ReportLayout::table(const dl::ReportTable& t, const std::vector<double>& weights) {
    if (t.columns.empty()) return;
    const std::vector<int> widths = columnWidths(t, weights);
    QFont hf = m_small;
    hf.setBold(true);
    const int hh = rowHeight(t.columns, widths, hf);
    ensure(hh + (t.rows.empty() ? 0 : rowHeight(t.rows.front(), widths, m_small)));
    drawRow(t.columns, widths, hf, hh, kHeaderFill);
    for (std::size_t r = 0; r < t.rows.size(); ++r) {
        const int h = rowHeight(t.rows[r], widths, m_small);
        if (m_y + h > m_bottom) {  // repeat the header on the next page
            newPage();
            drawRow(t.columns, widths, hf, hh, kHeaderFill);
        }
        const bool em = r < t.emphasis.size() && t.emphasis[r];
        drawRow(t.rows[r], widths, m_small, h, em ? kEmphasisFill : QColor());
    }
    m_y += lineHeight(m_body) / 2;
}

void ReportLayout::figure(int height, const std::function<void(QCPPainter&, const QRect&)>& draw) {
    ensure(height);
    const QRect r(m_left, m_y, m_width, std::min(height, m_bottom - m_top));
    m_p.save();
    draw(m_p, r);
    m_p.restore();
    m_y += r.height() + lineHeight(m_body) / 2;
}

}  // namespace dlui
