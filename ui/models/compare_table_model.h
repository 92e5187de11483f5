#pragma once
// The aligned table of a comparison: one row per matched tensor with both runs' statistics and
// the msprobe metrics. Thin over row indices: which rows and their order come from the core
// (dl::selectCompareRows); the model only formats cells.
#include <QAbstractTableModel>
#include <vector>

#include "core/compare/compare_rows.h"

namespace dlui {

class CompareSession;

class CompareTableModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column {
        Rank,
        Iteration,
        OpA,
        OpB,
        Match,
        Tensor,
        Shape,
        DType,
        MaxA,
        MaxB,
        MinA,
        MinB,
        MeanA,
        MeanB,
        L2A,
        L2B,
        Cosine,
        MaxAbsErr,
        MaxRelErr,
        OneThousandth,
        FiveThousandth,
        Class,
        Status,
        ColumnCount
    };
    enum Roles { RowRole = Qt::UserRole + 1, VerdictRole };
    explicit CompareTableModel(CompareSession* session, QObject* parent = nullptr);

    void setFilter(const dl::CompareRowFilter& filter);
    const dl::CompareRowFilter& filter() const { return m_filter; }
    int viewRowOf(qint64 comparisonRow) const;  // -1 when filtered out
    qint64 comparisonRowAt(int viewRow) const { return m_rows[std::size_t(viewRow)]; }

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role) const override;
    QVariant headerData(int section, Qt::Orientation o, int role) const override;
    void sort(int column, Qt::SortOrder order) override;

private:
    void refresh();
    QString text(std::uint32_t row, int column) const;

    CompareSession* m_session;
    std::vector<std::uint32_t> m_rows;
    std::vector<int> m_viewRow;  // comparison row -> view row, -1 when hidden
    dl::CompareRowFilter m_filter;
    dl::CompareSortKey m_key = dl::CompareSortKey::Order;
    bool m_descending = false;
};

}  // namespace dlui
