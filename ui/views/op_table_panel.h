#pragma once
// The op/tensor table with its filter bar (text or regex, type, rank, stage, state). Filtering and
// sorting run in core; text typing is debounced. Selection is synced with the session.
#include <QWidget>

class QCheckBox;
class QComboBox;
class QLabel;
class QLineEdit;
class QTableView;
class QTimer;

namespace dlui {

class DumpSession;
class OpTableModel;

class OpTablePanel : public QWidget {
    Q_OBJECT
public:
    explicit OpTablePanel(DumpSession* session, QWidget* parent = nullptr);
    OpTableModel* model() const { return m_model; }
    QTableView* view() const { return m_view; }
    void setFilterText(const QString& text, bool regex);   // applies immediately
    QString countText() const;                             // "63 of 2,300 tensors"
    QList<int> selectedRows() const;                       // sorted; the current row when none
    void copySelectedRows();                               // Ctrl+C: tab-separated, with a header

private:
    void onDumpChanged();
    void applyFilter();
    void onSelection(quint32 tensor);
    void onCurrentRow(const QModelIndex& current);

    DumpSession* m_session;
    OpTableModel* m_model;
    QTableView* m_view;
    QLineEdit* m_text;
    QCheckBox* m_regex;
    QComboBox* m_type;
    QComboBox* m_rank;
    QComboBox* m_stage;
    QComboBox* m_state;
    QLabel* m_count;
    QTimer* m_debounce;
    bool m_syncing = false;
    QString m_shownPath;   // the dump the filter was typed for
};

}  // namespace dlui
