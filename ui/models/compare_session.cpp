#include "ui/models/compare_session.h"

#include "ui/style/op_names.h"

namespace dlui {

CompareSession::CompareSession(QObject* parent) : QObject(parent) {}

void CompareSession::setRuns(ComparedRunsPtr runs) {
    m_runs = std::move(runs);
    m_comparison.reset();
    m_overlay.reset();
    if (m_runs && m_runs->ok && m_runs->comparison && indexA() && indexB()) {
        m_comparison = m_runs->comparison;
        m_overlay =
            std::make_shared<const dl::CompareOverlay>(dl::buildCompareOverlay(*m_comparison, *indexA(), *indexB()));
    }
    m_row = -1;
    m_opA = m_opB = dl::kNoIndex;
    emit comparisonChanged();
    emit selectionChanged();
}

QString CompareSession::pathA() const { return m_runs && m_runs->a ? m_runs->a->path : QString(); }
QString CompareSession::pathB() const { return m_runs && m_runs->b ? m_runs->b->path : QString(); }

void CompareSession::setThresholds(const dl::CompareThresholds& t) {
    if (!m_comparison) return;
    dl::applyThresholds(*indexA(), *indexB(), t, *m_comparison);
    m_overlay =
        std::make_shared<const dl::CompareOverlay>(dl::buildCompareOverlay(*m_comparison, *indexA(), *indexB()));
    emit comparisonChanged();
    emit selectionChanged();
}

qint64 CompareSession::bestRowOf(const dl::DumpIndex& ix, const std::vector<std::uint32_t>& rowOfTensor,
                                 quint32 op) const {
    const dl::OpRecord& o = ix.ops[op];
    qint64 first = -1;
    for (quint32 t = o.firstTensor; t < o.firstTensor + o.tensorCount && t < rowOfTensor.size(); ++t) {
        const std::uint32_t r = rowOfTensor[t];
        if (r == dl::kNoIndex) continue;
        if (m_comparison->rows[r].diverged) return r;
        if (first < 0) first = r;
    }
    return first;
}

void CompareSession::setSelection(qint64 row, quint32 opA, quint32 opB) {
    if (row == m_row && opA == m_opA && opB == m_opB) return;
    m_row = row;
    m_opA = opA;
    m_opB = opB;
    emit selectionChanged();
}

void CompareSession::selectRow(qint64 row) {
    if (!m_comparison || row < 0 || row >= qint64(m_comparison->rows.size())) return;
    const dl::TensorPair& p = m_comparison->alignment.tensors[std::size_t(row)];
    setSelection(row, indexA()->tensors[p.a].op, indexB()->tensors[p.b].op);
}

void CompareSession::selectOpA(quint32 op) {
    if (!m_comparison || op >= indexA()->ops.size()) return;
    setSelection(bestRowOf(*indexA(), m_overlay->rowOfTensorA, op), op, m_overlay->partnerA[op]);
}

void CompareSession::selectOpB(quint32 op) {
    if (!m_comparison || op >= indexB()->ops.size()) return;
    setSelection(bestRowOf(*indexB(), m_overlay->rowOfTensorB, op), m_overlay->partnerB[op], op);
}

void CompareSession::selectFirstDivergence() {
    if (m_comparison && m_comparison->firstDivergence >= 0) selectRow(m_comparison->firstDivergence);
}

QString CompareSession::opLabel(bool runB, quint32 op) const {
    const dl::DumpIndex* ix = runB ? indexB() : indexA();
    if (!ix || op >= ix->ops.size()) return {};
    const dl::OpRecord& o = ix->ops[op];
    return tr("%1 (%2) rank %3 · iteration %4")
        .arg(opNames(*ix, o).shortName, QString::fromStdString(ix->strings.str(o.type)))
        .arg(o.rank)
        .arg(o.iteration);
}

}  // namespace dlui
