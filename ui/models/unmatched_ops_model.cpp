#include "ui/models/unmatched_ops_model.h"

#include "ui/style/op_names.h"

#include "ui/models/compare_session.h"

namespace dlui {

UnmatchedOpsModel::UnmatchedOpsModel(CompareSession* session, QObject* parent)
    : QAbstractTableModel(parent), m_session(session) {
    connect(m_session, &CompareSession::comparisonChanged, this, [this] {
        beginResetModel();
        const dl::RunComparison* c = m_session->comparison();
        m_countA = c ? int(c->alignment.onlyOpsA.size()) : 0;
        m_countB = c ? int(c->alignment.onlyOpsB.size()) : 0;
        endResetModel();
    });
}

quint32 UnmatchedOpsModel::opAt(int row, bool& runB) const {
    const dl::RunComparison* c = m_session->comparison();
    runB = row >= m_countA;
    return runB ? c->alignment.onlyOpsB[std::size_t(row - m_countA)] : c->alignment.onlyOpsA[std::size_t(row)];
}

int UnmatchedOpsModel::rowCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : m_countA + m_countB; }

int UnmatchedOpsModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

QVariant UnmatchedOpsModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || index.row() >= rowCount() || (role != Qt::DisplayRole && role != Qt::ToolTipRole))
        return {};
    bool runB = false;
    const quint32 op = opAt(index.row(), runB);
    const dl::DumpIndex& ix = runB ? *m_session->indexB() : *m_session->indexA();
    const dl::OpRecord& o = ix.ops[op];
    const auto str = [&](dl::StrId id) { return QString::fromStdString(ix.strings.str(id)); };
    switch (index.column()) {
        case Run:
            return runB ? tr("only in B") : tr("only in A");
        case Rank:
            return o.rank;
        case Iteration:
            return o.iteration;
        // The op itself, its scope beside it (elided from the left, where the nearest modules
        // are); the whole of each in the tooltip.
        case Op:
            return role == Qt::ToolTipRole ? opNames(ix, o).full : opNames(ix, o).shortName;
        case Type:
            return str(o.type);
        case Scope:
            return opNames(ix, o).scope;
    }
    return {};
}

QVariant UnmatchedOpsModel::headerData(int section, Qt::Orientation o, int role) const {
    if (o != Qt::Horizontal || role != Qt::DisplayRole) return {};
    static const char* names[ColumnCount] = {"Run", "Rank", "Iter", "Op", "Type", "Scope"};
    return tr(names[section]);
}

}  // namespace dlui
