#pragma once
// The selected tensor pair of a comparison: both runs' ops, shapes, dtypes and statistics side by
// side, the metrics against the thresholds, and the two log2|x| histograms overlaid.
#include <QWidget>

class QLabel;

namespace dlui {

class CompareSession;
class Log2HistogramPlot;

class CompareTensorPanel : public QWidget {
    Q_OBJECT
public:
    explicit CompareTensorPanel(CompareSession* session, QWidget* parent = nullptr);
    Log2HistogramPlot* plot() const { return m_plot; }
    QString headerText() const;
    int plottedSeries() const;

private:
    void show();

    CompareSession* m_session;
    QLabel* m_header;
    Log2HistogramPlot* m_plot;
};

}  // namespace dlui
