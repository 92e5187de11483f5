#pragma once
// The bottom details panel, as Perfetto's: what the timeline's selection, area (Ctrl+drag or a drag
// on the ruler) or search holds, whole, in a sortable table. The selected op with its flows and
// chain hops; an area's summary and its ops; the search's matching ops. Whichever changed last is
// shown; a click on a row selects that op everywhere.
#include <QAbstractTableModel>
#include <QWidget>
#include <vector>

class QLabel;
class QSortFilterProxyModel;
class QTableView;

namespace dlui {

class DumpSession;
class TimelinePanel;

// Rows of ops (with how each relates to what is shown) over the open dump and its timeline.
class DetailsModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { Relation, Op, Type, Rank, Iteration, Start, Duration, State, MaxAbs, Tensors, ColumnCount };
    static constexpr int kSortRole = Qt::UserRole + 1;
    struct Row {
        quint32 op;
        QString relation;
    };
    DetailsModel(DumpSession* session, TimelinePanel* timeline, QObject* parent = nullptr);
    void setRows(std::vector<Row> rows);
    quint32 opAt(int row) const { return m_rows[static_cast<std::size_t>(row)].op; }
    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role) const override;
    QVariant headerData(int section, Qt::Orientation o, int role) const override;

private:
    DumpSession* m_session;
    TimelinePanel* m_timeline;
    std::vector<Row> m_rows;
};

class DetailsPanel : public QWidget {
    Q_OBJECT
public:
    enum class Shows { Nothing, Selection, Area, Search };
    DetailsPanel(DumpSession* session, TimelinePanel* timeline, QWidget* parent = nullptr);
    Shows shows() const { return m_shows; }
    QString summary() const;  // the line above the table (never elided: it wraps)
    QTableView* table() const { return m_table; }
    DetailsModel* model() const { return m_model; }
    static constexpr std::size_t kMaxRows = 100000;  // an area over a 10M-op dump lists its first ones

private:
    void showSelection(quint32 op);
    void showArea();
    void showSearch();
    void showNothing();

    DumpSession* m_session;
    TimelinePanel* m_timeline;
    QLabel* m_summary;
    QTableView* m_table;
    DetailsModel* m_model;
    QSortFilterProxyModel* m_proxy;
    Shows m_shows = Shows::Nothing;
    bool m_picking = false;  // a row of this panel is being selected: keep the list
};

}  // namespace dlui
