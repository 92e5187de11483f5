#pragma once
// The selected tensor: header (op, shape, dtype, format, file), its statistics, and a histogram of
// log2|x| for the op's inputs and outputs overlaid, with the fp16/bf16 limits marked and NaN/+-Inf
// counted in their own bars.
#include <QWidget>

class QLabel;

namespace dlui {

class DumpSession;
class Log2HistogramPlot;

class TensorPanel : public QWidget {
    Q_OBJECT
public:
    explicit TensorPanel(DumpSession* session, QWidget* parent = nullptr);
    Log2HistogramPlot* plot() const { return m_plot; }
    QString headerText() const;
    int plottedTensors() const;
    // What the header's "Copy full name" puts on the clipboard (empty with no selection).
    QString fullName() const { return m_fullName; }

protected:
    void resizeEvent(QResizeEvent* e) override;

private:
    void show(quint32 op, quint32 tensor);
    void updateHeader();  // elides the names to the current width
    void plotOp(quint32 op, quint32 tensor);
    void showNothing();

    DumpSession* m_session;
    QLabel* m_header;
    Log2HistogramPlot* m_plot;
    quint32 m_op = 0xffffffffu, m_tensor = 0xffffffffu;
    QString m_fullName, m_filePath;
};

}  // namespace dlui
