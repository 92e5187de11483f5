#pragma once
// The shared state of a comparison of two runs: both opened dumps, the comparison (re-judged in
// place when the thresholds change), the overlay the views draw, and the current pair selection.
// Views read it and listen to its signals; only the compare window feeds it.
#include <QObject>
#include <QString>
#include <memory>

#include "core/compare/compare_overlay.h"
#include "ui/jobs/compare_worker.h"

namespace dlui {

class CompareSession : public QObject {
    Q_OBJECT
public:
    explicit CompareSession(QObject* parent = nullptr);

    void setRuns(ComparedRunsPtr runs);  // null clears
    bool isReady() const { return m_comparison != nullptr; }
    const dl::DumpIndex* indexA() const { return m_runs && m_runs->a ? m_runs->a->index.get() : nullptr; }
    const dl::DumpIndex* indexB() const { return m_runs && m_runs->b ? m_runs->b->index.get() : nullptr; }
    const dl::AnalysisResult* analysisA() const { return m_runs && m_runs->a ? m_runs->a->analysis.get() : nullptr; }
    const dl::AnalysisResult* analysisB() const { return m_runs && m_runs->b ? m_runs->b->analysis.get() : nullptr; }
    const dl::RunComparison* comparison() const { return m_comparison.get(); }
    const dl::CompareOverlay* overlay() const { return m_overlay.get(); }
    // For worker threads: holding these keeps the indexes and the overlay alive.
    ComparedRunsPtr runs() const { return m_runs; }
    std::shared_ptr<const dl::CompareOverlay> overlayPtr() const { return m_overlay; }
    QString pathA() const;
    QString pathB() const;

    // Re-judges every row against new thresholds (the metrics are kept) and moves the first divergence.
    void setThresholds(const dl::CompareThresholds& t);

    // Selection: a comparison row (a tensor pair) or an op of either run, which selects its
    // partner and its most telling row (the first diverged tensor, else the first tensor).
    qint64 currentRow() const { return m_row; }
    quint32 currentOpA() const { return m_opA; }
    quint32 currentOpB() const { return m_opB; }
    void selectRow(qint64 row);
    void selectOpA(quint32 op);
    void selectOpB(quint32 op);
    void selectFirstDivergence();

    QString opLabel(bool runB, quint32 op) const;  // "SqrtGrad-op393 (SqrtGrad) rank 3 · iteration 2"

signals:
    void comparisonChanged();
    void selectionChanged();

private:
    qint64 bestRowOf(const dl::DumpIndex& ix, const std::vector<std::uint32_t>& rowOfTensor, quint32 op) const;
    void setSelection(qint64 row, quint32 opA, quint32 opB);

    ComparedRunsPtr m_runs;
    std::shared_ptr<dl::RunComparison> m_comparison;  // the worker's result; thresholds re-judge it
    std::shared_ptr<const dl::CompareOverlay> m_overlay;
    qint64 m_row = -1;
    quint32 m_opA = dl::kNoIndex, m_opB = dl::kNoIndex;
};

}  // namespace dlui
