#include "ui/models/replay_model.h"

#include <QColor>
#include <cmath>
#include "ui/style/theme.h"

namespace dlui {

ReplayModel::ReplayModel(QObject* parent) : QAbstractTableModel(parent) {}

void ReplayModel::setSource(const dl::AnalysisResult* analysis) {
    beginResetModel();
    m_replay = analysis && analysis->replay && analysis->replay->available ? &*analysis->replay : nullptr;
    endResetModel();
}

int ReplayModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() || !m_replay ? 0 : static_cast<int>(m_replay->results.size());
}

int ReplayModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

QVariant ReplayModel::data(const QModelIndex& index, int role) const {
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) return {};
    const dl::ReplayPrecisionResult& r = m_replay->results[static_cast<std::size_t>(index.row())];
    if (role == Qt::BackgroundRole && index.column() == Overflow)
        return theme::fillForApp(r.overflow ? theme::kCellBad : theme::kCellGood);
    if (role == Qt::TextAlignmentRole)
        return index.column() == Precision ? QVariant() : QVariant(Qt::AlignRight | Qt::AlignVCenter);
    if (role != Qt::DisplayRole) return {};
    switch (index.column()) {
        case Precision:
            return QString::fromLatin1(dl::dtypeName(r.dtype).data());
        case MaxAbs:
            return std::isnan(r.maxAbs) ? QStringLiteral("inf/nan") : QString::number(r.maxAbs, 'g', 6);
        case Inf:
            return QString::number(r.infCount);
        case Nan:
            return QString::number(r.nanCount);
        case Saturated:
            return QString::number(r.saturatedCount);
        case Overflow:
            return r.overflow ? tr("yes") : tr("no");
        case RelErr:
            return r.relErrVsFp32 < 0 ? QStringLiteral("–") : QString::number(r.relErrVsFp32, 'g', 3);
        default:
            return {};
    }
}

QVariant ReplayModel::headerData(int section, Qt::Orientation o, int role) const {
    if (o != Qt::Horizontal || role != Qt::DisplayRole) return {};
    static const char* names[] = {"Precision", "max |y|", "Inf", "NaN", "Saturated", "Overflow", "Rel. error vs fp32"};
    return section >= 0 && section < ColumnCount ? tr(names[section]) : QVariant();
}

}  // namespace dlui
