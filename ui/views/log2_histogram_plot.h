#pragma once
// A QCustomPlot of log2|x| histograms: one step line per series, the fp16/bf16 limits as dashed
// lines, NaN/+Inf/-Inf as bars right of the finite range, and the x axis labelled in powers of
// two. Shared by the tensor panel (an op's inputs and outputs) and the compare panel (the same
// tensor in two runs).
#include <qcustomplot.h>

#include <QString>
#include <vector>

#include "core/stats/log2_histogram.h"

namespace dlui {

class Log2HistogramPlot : public QCustomPlot {
    Q_OBJECT
public:
    explicit Log2HistogramPlot(QWidget* parent = nullptr);

    void clearSeries();
    // Adds one series; false (nothing added) when the histogram is empty.
    bool addSeries(const QString& name, const dl::Log2Histogram& h, const QPen& pen, const QBrush& fill = Qt::NoBrush);
    // Draws the limits and the NaN/Inf bars and fits the axes. perSeriesSpecials: one bar per
    // series in its colour (comparing runs), else one summed bar (an op's tensors).
    void finish(bool perSeriesSpecials);
    int seriesCount() const { return static_cast<int>(m_specials.size()); }

private:
    void addLimitLine(double log2x, const QString& label, const QColor& c, double labelY, bool labelLeft);
    struct Specials {
        double nan = 0, posInf = 0, negInf = 0;
        QColor color;
    };
    std::vector<Specials> m_specials;
    int m_lo = 0, m_hi = 0;
    bool m_any = false;
};

}  // namespace dlui
