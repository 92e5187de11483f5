#pragma once
// The op/tensor table with its filter bar (text or regex, type, rank, stage, state). Filtering and
// sorting run in core; text typing is debounced. Selection is synced with the session.
#include <QWidget>
#include <vector>

#include "core/query/op_filter.h"

class QCheckBox;
class QComboBox;
class QLabel;
class QLineEdit;
class QMenu;
class QAction;
class QTableView;
class QTimer;

namespace dlui {

class ElidedLabel;

class DumpSession;
class OpTableModel;

class OpTablePanel : public QWidget {
    Q_OBJECT
public:
    explicit OpTablePanel(DumpSession* session, QWidget* parent = nullptr);
    OpTableModel* model() const { return m_model; }
    QTableView* view() const { return m_view; }
    void setFilterText(const QString& text, bool regex);  // applies immediately
    QString countText() const;                            // "63 of 2,300 tensors"
    QList<int> selectedRows() const;                      // sorted; the current row when none
    void copySelectedRows();                              // Ctrl+C: tab-separated, with a header
    // The row's context menu (the op's shared menu plus "Copy rows").
    void fillRowMenu(QMenu& menu, int row);
    QLineEdit* filterEdit() const { return m_text; }
    // Applies what was typed and is still waiting out the typing delay (before F3 or Enter look
    // for the next match, which must be a match of the text as shown).
    void flushPendingFilter();

signals:
    // After each filter: the ops it keeps, empty when nothing is filtered (the timeline highlights them).
    void matchesChanged(const std::vector<quint32>& ops);
    // Enter / Shift+Enter (F3 / Shift+F3) in the filter: the next or previous match on the timeline.
    void nextMatchRequested(bool backward);

private:
    void onDumpChanged();
    dl::OpFilter currentFilter() const;  // what the filter bar says
    void applyFilter();
    void showFilterResult(bool ok, const QString& error);  // count, error colour, matches
    void onSelection(quint32 tensor);
    void onCurrentRow(const QModelIndex& current);
    bool eventFilter(QObject* watched, QEvent* e) override;

    DumpSession* m_session;
    OpTableModel* m_model;
    QTableView* m_view;
    QLineEdit* m_text;
    QCheckBox* m_regex;
    QComboBox* m_type;
    QComboBox* m_rank;
    QComboBox* m_stage;
    QComboBox* m_state;
    ElidedLabel* m_count;  // elided in a narrow dock (1024 px screens), whole in its tooltip
    QTimer* m_debounce;
    QAction* m_copyRows;
    bool m_syncing = false;
    QString m_shownPath;  // the dump the filter was typed for
};

}  // namespace dlui
