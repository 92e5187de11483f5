#pragma once
// The origin op replayed in fp16 / bf16 / fp32: one row per precision.
#include <QAbstractTableModel>

#include "core/analysis/analysis_result.h"

namespace dlui {

class ReplayModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { Precision, MaxAbs, Inf, Nan, Saturated, Overflow, RelErr, ColumnCount };
    explicit ReplayModel(QObject* parent = nullptr);
    void setSource(const dl::AnalysisResult* analysis);

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role) const override;
    QVariant headerData(int section, Qt::Orientation o, int role) const override;

private:
    const dl::ReplayResult* m_replay = nullptr;
};

}  // namespace dlui
