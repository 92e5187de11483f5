#pragma once
// Thin table model over the op/tensor rows: the row list is computed by the core query
// (dl::filterRows / dl::sortRows); the model only formats cells.
#include <QAbstractTableModel>
#include <vector>

#include "core/query/op_filter.h"

namespace dlui {

class OpTableModel : public QAbstractTableModel {
    Q_OBJECT
public:
    // ScopeRole: the scope shown dimmed beside the short name (Op column); FullNameRole: the op's
    // full name (what "Copy full name" copies and the tooltip shows).
    enum Roles { TensorRole = Qt::UserRole + 1, OpRole, StateRole, ScopeRole, FullNameRole };
    explicit OpTableModel(QObject* parent = nullptr);

    // index/states/stages may be null (clears the model); they must outlive the model's use of them.
    void setSource(const dl::DumpIndex* index, const dl::OpStates* states, const dl::StageMap* stages);
    // The same with the filter to apply, in one pass over the rows (setSource then setFilter is
    // two passes over 10M rows when a dump opens). An invalid filter keeps every row: false + why.
    bool setSource(const dl::DumpIndex* index, const dl::OpStates* states, const dl::StageMap* stages,
                   const dl::OpFilter& filter, QString& error);
    // Applies a filter; false (model unchanged) with `error` for an invalid regex.
    bool setFilter(const dl::OpFilter& filter, QString& error);
    int rowOfTensor(quint32 tensor) const;  // -1 when filtered out
    quint32 tensorAt(int row) const { return m_rows[static_cast<std::size_t>(row)]; }
    std::size_t totalTensors() const;
    // The rows as tab-separated text with a header line, the Op column holding full names.
    QString rowsAsTsv(const QList<int>& rows) const;
    // The ops of the rows the filter keeps (each once, ascending): what the timeline highlights.
    std::vector<quint32> matchingOps() const;
    // True when the filter keeps only part of the rows (text, type, rank, stage or state set).
    bool isFiltering() const;

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role) const override;
    QVariant headerData(int section, Qt::Orientation o, int role) const override;
    void sort(int column, Qt::SortOrder order) override;

private:
    QString text(quint32 tensor, dl::OpColumn c) const;
    void reindex();  // m_rowOf from m_rows, unless the rows are in index order

    const dl::DumpIndex* m_index = nullptr;
    const dl::OpStates* m_states = nullptr;
    const dl::StageMap* m_stages = nullptr;
    std::vector<std::uint32_t> m_rows;
    // tensor -> row, -1 when filtered out (selection follows in O(1)); empty while m_rows is in
    // index order (unsorted), where a binary search finds the row without 4 bytes per tensor and a
    // 10M-entry rewrite per filter.
    std::vector<int> m_rowOf;
    bool m_rowsAscending = true;
    dl::OpFilter m_filter;
    int m_sortColumn = -1;
    Qt::SortOrder m_sortOrder = Qt::AscendingOrder;
};

}  // namespace dlui
