#pragma once
// The ops of either run that found no counterpart in the other (run A's first, then run B's):
// the extra Casts of a fix, ops a recompile renamed, layers only one run has.
#include <QAbstractTableModel>

namespace dlui {

class CompareSession;

class UnmatchedOpsModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { Run, Rank, Iteration, Op, Type, Scope, ColumnCount };
    explicit UnmatchedOpsModel(CompareSession* session, QObject* parent = nullptr);

    // The op behind a row, and which run it belongs to.
    quint32 opAt(int row, bool& runB) const;

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role) const override;
    QVariant headerData(int section, Qt::Orientation o, int role) const override;

private:
    CompareSession* m_session;
    int m_countA = 0, m_countB = 0;
};

}  // namespace dlui
