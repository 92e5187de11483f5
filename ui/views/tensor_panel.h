#pragma once
// The selected tensor: header (op, shape, dtype, format, file), its statistics, and a histogram of
// log2|x| for the op's inputs and outputs overlaid, with the fp16/bf16 limits marked and NaN/+-Inf
// counted in their own bars.
#include <QWidget>

class QCustomPlot;
class QLabel;

namespace dlui {

class DumpSession;

class TensorPanel : public QWidget {
    Q_OBJECT
public:
    explicit TensorPanel(DumpSession* session, QWidget* parent = nullptr);
    QCustomPlot* plot() const { return m_plot; }
    QString headerText() const;
    int plottedTensors() const { return m_plotted; }

private:
    void show(quint32 op, quint32 tensor);
    void plotOp(quint32 op, quint32 tensor);
    void addLimitLine(double log2x, const QString& label, const QColor& c, double labelY, bool labelLeft);

    DumpSession* m_session;
    QLabel* m_header;
    QCustomPlot* m_plot;
    int m_plotted = 0;
};

}  // namespace dlui
