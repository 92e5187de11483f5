#include "ui/models/op_table_model.h"

#include <algorithm>

#include <QColor>
#include <QFont>
#include <cmath>

#include "core/analysis/tensor_anomaly.h"
#include "ui/style/figure_text.h"
#include "ui/style/op_names.h"
#include "ui/style/state_colors.h"

namespace dlui {

OpTableModel::OpTableModel(QObject* parent) : QAbstractTableModel(parent) {}

void OpTableModel::setSource(const dl::DumpIndex* index, const dl::OpStates* states, const dl::StageMap* stages) {
    QString error;
    setSource(index, states, stages, m_filter, error);
}

bool OpTableModel::setSource(const dl::DumpIndex* index, const dl::OpStates* states, const dl::StageMap* stages,
                             const dl::OpFilter& filter, QString& error) {
    beginResetModel();
    m_index = index && states ? index : nullptr;
    m_states = states;
    m_stages = stages;
    m_rows.clear();
    bool ok = true;
    if (m_index) {
        std::string err;
        const dl::QueryContext ctx{*m_index, *m_states, m_stages};
        if (dl::filterRows(ctx, filter, m_rows, err)) {
            m_filter = filter;
        } else {
            ok = false;
            error = QString::fromStdString(err);
            if (!dl::filterRows(ctx, m_filter, m_rows, err)) dl::filterRows(ctx, {}, m_rows, err);
        }
        if (m_sortColumn >= 0)
            dl::sortRows(ctx, m_rows, dl::OpColumn(m_sortColumn), m_sortOrder == Qt::DescendingOrder);
    } else {
        m_filter = filter;
    }
    reindex();
    endResetModel();
    return ok;
}

void OpTableModel::reindex() {
    m_rowsAscending = std::is_sorted(m_rows.begin(), m_rows.end());
    if (m_rowsAscending) {
        std::vector<int>().swap(m_rowOf);
        return;
    }
    m_rowOf.assign(m_index ? m_index->tensors.size() : 0, -1);
    for (std::size_t i = 0; i < m_rows.size(); ++i) m_rowOf[m_rows[i]] = static_cast<int>(i);
}

bool OpTableModel::setFilter(const dl::OpFilter& filter, QString& error) {
    if (!m_index) {
        m_filter = filter;
        return true;
    }
    std::vector<std::uint32_t> rows;
    std::string err;
    const dl::QueryContext ctx{*m_index, *m_states, m_stages};
    if (!dl::filterRows(ctx, filter, rows, err)) {
        error = QString::fromStdString(err);
        return false;
    }
    if (m_sortColumn >= 0) dl::sortRows(ctx, rows, dl::OpColumn(m_sortColumn), m_sortOrder == Qt::DescendingOrder);
    beginResetModel();
    m_filter = filter;
    m_rows = std::move(rows);
    reindex();
    endResetModel();
    return true;
}

int OpTableModel::rowOfTensor(quint32 tensor) const {
    if (!m_rowsAscending) return tensor < m_rowOf.size() ? m_rowOf[tensor] : -1;
    const auto it = std::lower_bound(m_rows.begin(), m_rows.end(), tensor);
    return it != m_rows.end() && *it == tensor ? static_cast<int>(it - m_rows.begin()) : -1;
}

std::size_t OpTableModel::totalTensors() const { return m_index ? m_index->tensors.size() : 0; }

int OpTableModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : static_cast<int>(m_rows.size());
}

int OpTableModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : static_cast<int>(dl::OpColumn::Count);
}

QString OpTableModel::text(quint32 t, dl::OpColumn c) const {
    const dl::TensorRecord& tr = m_index->tensors[t];
    const dl::OpRecord& o = m_index->ops[tr.op];
    const auto str = [&](dl::StrId id) { return QString::fromStdString(m_index->strings.str(id)); };
    const dl::TensorStats s = m_index->stats(tr);
    switch (c) {
        case dl::OpColumn::Rank:
            return QString::number(o.rank);
        case dl::OpColumn::Stage: {
            const int st = m_stages ? m_stages->stageOf(o.rank) : -1;
            return st < 0 ? QStringLiteral("?") : QString::number(st);
        }
        case dl::OpColumn::Iteration:
            return QString::number(o.iteration);
        case dl::OpColumn::Order:
            return QString::number(o.execPos);
        case dl::OpColumn::Op:
            return opNames(*m_index, o).shortName;
        case dl::OpColumn::Type:
            return str(o.type);
        case dl::OpColumn::Tensor:
            return QString::fromStdString(m_index->tensorLabel(tr));
        case dl::OpColumn::DType:
            return QString::fromLatin1(dl::dtypeName(tr.dtype).data());
        case dl::OpColumn::Shape: {
            QStringList dims;
            for (std::int64_t d : m_index->shape(tr)) dims << QString::number(d);
            return QLatin1Char('[') + dims.join(QLatin1Char(',')) + QLatin1Char(']');
        }
        case dl::OpColumn::Min:
            return figureText(s, dl::StatFigure::Min);
        case dl::OpColumn::Max:
            return figureText(s, dl::StatFigure::Max);
        case dl::OpColumn::MaxAbs:
            return figureText(s, dl::StatFigure::MaxAbs);
        case dl::OpColumn::Mean:
            return figureText(s, dl::StatFigure::Mean);
        case dl::OpColumn::NanInf:
            return s.nanCount + s.infCount()
                ? QStringLiteral("%1 / %2").arg(countText(s, s.nanCount), countText(s, s.infCount()))
                : QString();
        case dl::OpColumn::Saturated:
            return s.satCount ? QString::number(s.satCount) : QString();
        case dl::OpColumn::State:  // pending until the analysis ran (the table is shown before)
            if (m_states->tensor.size() != m_index->tensors.size()) return QStringLiteral("…");
            return stateText(dl::shownState({*m_index, *m_states, m_stages}, t));
        case dl::OpColumn::Count:
            break;
    }
    return {};
}

QVariant OpTableModel::data(const QModelIndex& index, int role) const {
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid) || !m_index) return {};
    const quint32 t = m_rows[static_cast<std::size_t>(index.row())];
    const auto col = dl::OpColumn(index.column());
    const dl::OpState st = dl::shownState({*m_index, *m_states, m_stages}, t);
    switch (role) {
        case Qt::DisplayRole:
            return text(t, col);
        case Qt::ToolTipRole:
            if (col == dl::OpColumn::Op) return opNames(*m_index, m_index->ops[m_index->tensors[t].op]).full;
            return {};
        case ScopeRole:
            return opNames(*m_index, m_index->ops[m_index->tensors[t].op]).scope;
        case FullNameRole:
            return opNames(*m_index, m_index->ops[m_index->tensors[t].op]).full;
        case Qt::TextAlignmentRole:
            return col >= dl::OpColumn::Min && col <= dl::OpColumn::Saturated
                ? QVariant(Qt::AlignRight | Qt::AlignVCenter)
                : QVariant(Qt::AlignLeft | Qt::AlignVCenter);
        case Qt::BackgroundRole:
            if (col == dl::OpColumn::State && st != dl::OpState::Normal) return stateColor(st).lighter(140);
            return {};
        case TensorRole:
            return t;
        case OpRole:
            return m_index->tensors[t].op;
        case StateRole:
            return static_cast<int>(st);
        default:
            return {};
    }
}

std::vector<quint32> OpTableModel::matchingOps() const {
    std::vector<quint32> ops;
    if (!m_index) return ops;
    // A flag per op instead of sorting one op per row (2M rows kept: a sort of 2M entries).
    std::vector<char> kept(m_index->ops.size(), 0);
    for (std::uint32_t t : m_rows)
        if (const std::uint32_t op = m_index->tensors[t].op; op < kept.size()) kept[op] = 1;
    for (std::size_t op = 0; op < kept.size(); ++op)
        if (kept[op]) ops.push_back(static_cast<quint32>(op));
    return ops;
}

bool OpTableModel::isFiltering() const {
    return !m_filter.text.empty() || !m_filter.type.empty() || m_filter.rank || m_filter.stage || m_filter.iteration ||
        m_filter.stateMask != dl::kAllOpStates;
}

QString OpTableModel::rowsAsTsv(const QList<int>& rows) const {
    QStringList lines;
    QStringList cells;
    for (int c = 0; c < columnCount(); ++c) cells << headerData(c, Qt::Horizontal, Qt::DisplayRole).toString();
    lines << cells.join(QLatin1Char('\t'));
    if (!m_index) return lines.join(QLatin1Char('\n'));
    for (int row : rows) {
        if (row < 0 || row >= rowCount()) continue;
        cells.clear();
        const quint32 t = m_rows[static_cast<std::size_t>(row)];
        for (int c = 0; c < columnCount(); ++c)
            cells << (dl::OpColumn(c) == dl::OpColumn::Op ? data(index(row, c), FullNameRole).toString()
                                                          : text(t, dl::OpColumn(c)));
        lines << cells.join(QLatin1Char('\t'));
    }
    return lines.join(QLatin1Char('\n')) + QLatin1Char('\n');
}

QVariant OpTableModel::headerData(int section, Qt::Orientation o, int role) const {
    if (o != Qt::Horizontal || role != Qt::DisplayRole || section < 0 || section >= columnCount()) return {};
    return QString::fromLatin1(dl::opColumnName(dl::OpColumn(section)));
}

void OpTableModel::sort(int column, Qt::SortOrder order) {
    if (column >= columnCount()) return;
    // -1 (QTableView::sortByColumn(-1)): back to execution order. It used to be ignored, so the
    // Rank sort QTableView asks for when sorting is enabled stayed on and re-ran after every filter.
    m_sortColumn = column < 0 ? -1 : column;
    m_sortOrder = order;
    if (!m_index) return;
    emit layoutAboutToBeChanged({}, QAbstractItemModel::VerticalSortHint);
    const QModelIndexList before = persistentIndexList();
    std::vector<quint32> tensors;
    for (const QModelIndex& i : before) tensors.push_back(m_rows[static_cast<std::size_t>(i.row())]);
    // Execution order is index order; rows usually are in it already (a sort of 10M sorted rows
    // still costs ~0.4 s: QTableView asks for it when a dump opens).
    if (m_sortColumn < 0) {
        if (!std::is_sorted(m_rows.begin(), m_rows.end())) std::sort(m_rows.begin(), m_rows.end());
    } else
        dl::sortRows({*m_index, *m_states, m_stages}, m_rows, dl::OpColumn(column), order == Qt::DescendingOrder);
    reindex();
    QModelIndexList after;
    for (std::size_t k = 0; k < tensors.size(); ++k)
        after << index(rowOfTensor(tensors[k]), before[static_cast<int>(k)].column());
    changePersistentIndexList(before, after);
    emit layoutChanged({}, QAbstractItemModel::VerticalSortHint);
}

}  // namespace dlui
