#pragma once
// The first-overflow chain in causal order, one row per step (role, the step it came from and
// through what, rank and TP peers, stage, iteration, op, kind, time after the origin, note).
#include <QAbstractTableModel>

#include "core/analysis/analysis_result.h"
#include "core/model/dump_index.h"

namespace dlui {

class ChainModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { Step, Role, From, Rank, Stage, Iteration, Op, Kind, Time, Note, ColumnCount };
    enum Roles { OpRole = Qt::UserRole + 1, TensorRole };
    explicit ChainModel(QObject* parent = nullptr);
    void setSource(const dl::DumpIndex* index, const dl::AnalysisResult* analysis);

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role) const override;
    QVariant headerData(int section, Qt::Orientation o, int role) const override;

private:
    const dl::DumpIndex* m_index = nullptr;
    const dl::AnalysisResult* m_analysis = nullptr;
};

}  // namespace dlui
