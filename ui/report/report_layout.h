#pragma once
// Page flow for the PDF report: a cursor that moves down the page, breaks pages when a block does
// not fit, draws the running header/footer (title, date, version, "page N of M") and records where
// each section heading landed so the outline can point at it. Text is drawn as text (searchable).
#include <QColor>
#include <QFont>
#include <QPdfWriter>
#include <QString>
#include <functional>
#include <string>
#include <vector>

#include "core/report/pdf_outline.h"
#include "core/report/report_content.h"

class QCPPainter;

namespace dlui {

class ReportLayout {
public:
    // `painter` is active on `writer`; totalPages is 0 on the counting pass.
    ReportLayout(QPdfWriter& writer, QCPPainter& painter, QString title, QString stamp, int totalPages);
    ~ReportLayout();

    QCPPainter& painter() { return m_p; }
    int contentLeft() const { return m_left; }
    int contentWidth() const { return m_width; }
    int pageIndex() const { return m_page; }
    const std::vector<dl::PdfOutlineEntry>& outline() const { return m_outline; }

    void heading(const QString& text, int level = 0);  // level 0 also starts an outline entry
    void paragraph(const QString& text, const QFont& font, const QColor& color = Qt::black);
    void paragraph(const QString& text) { paragraph(text, m_body); }
    void bullets(const std::vector<std::string>& lines, const QString& mark = QStringLiteral("•"));
    void fields(const std::vector<dl::ReportField>& rows);
    void table(const dl::ReportTable& t, const std::vector<double>& weights = {});
    // A figure of fixed height drawn by `draw` into the given rectangle (kept on one page).
    void figure(int height, const std::function<void(QCPPainter&, const QRect&)>& draw);
    void space(int units) { m_y += units; }
    void newPage();
    // Starts a new page unless `units` still fit below the cursor.
    void ensure(int units);

    // Fonts, scaled to the writer's resolution by Qt (point sizes).
    QFont body() const { return m_body; }
    QFont small() const { return m_small; }
    QFont bold() const;
    int lineHeight(const QFont& f) const;

private:
    int wrapFlags(const QString& text, const QFont& f, int width) const;
    int textHeight(const QString& text, const QFont& f, int width) const;
    void drawFrame();
    std::vector<int> columnWidths(const dl::ReportTable& t, const std::vector<double>& weights) const;
    int rowHeight(const std::vector<std::string>& cells, const std::vector<int>& widths, const QFont& f) const;
    void drawRow(const std::vector<std::string>& cells, const std::vector<int>& widths, const QFont& f, int h,
                 const QColor& fill);

    QPdfWriter& m_writer;
    QCPPainter& m_p;
    QString m_title, m_stamp;
    int m_total;
    int m_page = 0;
    int m_left = 0, m_top = 0, m_width = 0, m_bottom = 0, m_y = 0;
    double m_unitsPerPoint = 1;
    double m_pageHeightPt = 0;
    QFont m_body, m_small, m_h1, m_h2;
    std::vector<dl::PdfOutlineEntry> m_outline;
};

}  // namespace dlui
