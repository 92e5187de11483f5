#pragma once
// A QCustomPlot of log2|x| histograms: one step line per series, the fp16/bf16 limits as dashed
// lines, NaN/+Inf/-Inf as bars right of the finite range, and the x axis labelled in powers of
// two. Shared by the tensor panel (an op's inputs and outputs) and the compare panel (the same
// tensor in two runs). Label rows, the bars' spacing and the y headroom are laid out in pixels
// for the current size (again on resize), so labels neither sit on the curves nor run together.
#include <qcustomplot.h>

#include <QString>
#include <array>
#include <vector>

#include "core/stats/log2_histogram.h"

namespace dlui {

class Log2HistogramPlot : public QCustomPlot {
    Q_OBJECT
public:
    struct SpecialCounts {
        double nan = 0, posInf = 0, negInf = 0;
        // The counts over the bars as the caller words them (empty: the number): "at least 1"
        // where the dump only implies some, so a bar of height 1 is not read as exactly 1.
        std::array<QString, 3> text{};
    };
    // Bars start here: a bar of one element spans most of two octaves on the log axis.
    static constexpr double kFloor = 0.3;

    explicit Log2HistogramPlot(QWidget* parent = nullptr);

    void clearSeries();
    // Adds one series; false (nothing added) when the histogram is empty.
    bool addSeries(const QString& name, const dl::Log2Histogram& h, const QPen& pen, const QBrush& fill = Qt::NoBrush);
    // Draws the limits and the NaN/Inf bars and fits the axes: one bar group per series in its
    // colour (comparing runs).
    void finish();
    // The same with one bar group holding `selected` (the selected tensor's counts, not the op's).
    void finish(const SpecialCounts& selected);
    // No axes, only `message` (nothing to plot: no selection, statistics only).
    void showEmpty(const QString& message);
    QString emptyMessage() const { return m_emptyText ? m_emptyText->text() : QString(); }
    int seriesCount() const { return static_cast<int>(m_specials.size()); }
    // The bar groups drawn, and the NaN / +Inf / -Inf count labels over them ("" where none) (for tests).
    std::vector<SpecialCounts> specialGroups() const;
    std::array<QString, 3> countLabels() const;

    // The axis and legend texts need not fit whole: a narrow dock still gets a readable plot.
    QSize minimumSizeHint() const override { return {240, minimumHeight()}; }

protected:
    void resizeEvent(QResizeEvent* e) override;
    void changeEvent(QEvent* e) override;

private:
    struct Specials {
        SpecialCounts n;
        QColor color;
    };
    void finishWith(std::vector<Specials> groups);
    void relayout();   // positions that depend on the pixel size
    void fitLegend();  // legend columns for the width (not from afterLayout: it re-flows the layout)
    void applyPalette();
    // A dashed line at log2x with its label (and a short form for narrow plots); a note without a
    // line when `withLine` is false (bf16 max far right of the axis).
    void addLimit(double log2x, const QString& label, const QString& brief, const QColor& c, bool labelLeft,
                  bool withLine = true);

    std::vector<Specials> m_specials;  // per series
    std::vector<Specials> m_groups;    // per bar group drawn
    std::vector<QCPBars*> m_bars;
    std::array<QCPItemText*, 3> m_counts{};
    struct Limit {
        QCPItemText* text = nullptr;
        QCPItemLine* line = nullptr;  // none for the bf16 note
        double key = 0;
        bool preferLeft = false;
        QString full, brief;
    };
    std::vector<Limit> m_limits;  // in priority order: the first is left out last in a narrow plot
    QCPItemText* m_emptyText = nullptr;
    double m_maxCount = 1;
    int m_lo = 0, m_hi = 0;
    bool m_any = false, m_finished = false;
    // The axis rect size relayout() measured against, and how many times in a row a replot found
    // it stale (the labels are placed again then; capped so tick-label widths cannot oscillate).
    QSize m_laidOutFor;
    int m_stalePasses = 0;
};

}  // namespace dlui
