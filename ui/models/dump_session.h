#pragma once
// The shared state of the open dump (index, analysis, op states) and the current selection. Views
// read it and listen to its signals; only MainWindow feeds it.
#include <QObject>
#include <QString>

#include "ui/jobs/loaded_dump.h"

namespace dlui {

class DumpSession : public QObject {
    Q_OBJECT
public:
    explicit DumpSession(QObject* parent = nullptr);

    void setDump(LoadedDumpPtr dump);  // null clears
    // The same run grown (a watched folder's next update): the op selected, found again by rank,
    // graph, iteration, name and position (its index moves as files land), and its tensor by io
    // and slot, stay selected. Else as setDump.
    void updateDump(LoadedDumpPtr dump);
    void clear() { setDump(nullptr); }
    LoadedDumpPtr dump() const { return m_dump; }
    const dl::DumpIndex* index() const { return m_dump ? m_dump->index.get() : nullptr; }
    const dl::AnalysisResult* analysis() const { return m_dump ? m_dump->analysis.get() : nullptr; }
    const dl::OpStates* states() const { return m_dump ? m_dump->states.get() : nullptr; }

    quint32 currentOp() const { return m_op; }
    quint32 currentTensor() const { return m_tensor; }
    // Selects an op (and one of its tensors; kNoIndex picks its first output, else first tensor).
    void select(quint32 op, quint32 tensor = dl::kNoIndex);
    // No op selected (Esc): selectionChanged(kNoIndex, kNoIndex), every view drops its highlight.
    void clearSelection();
    int stageOfOp(quint32 op) const;
    QString opLabel(quint32 op) const;  // "SqrtGrad-op393 (SqrtGrad) rank 3"
    // Whether a comparison with this dump as run A is open (enables "Compare this tensor").
    void setCanCompare(bool on) { m_canCompare = on; }
    bool canCompare() const { return m_canCompare; }
    // A view's "Compare this tensor": the compare window shows its row.
    void requestCompare(quint32 tensor) { emit compareTensorRequested(tensor); }

signals:
    void dumpChanged();
    void selectionChanged(quint32 op, quint32 tensor);
    void compareTensorRequested(quint32 tensor);

private:
    LoadedDumpPtr m_dump;
    quint32 m_op = dl::kNoIndex, m_tensor = dl::kNoIndex;
    bool m_canCompare = false;
};

}  // namespace dlui
