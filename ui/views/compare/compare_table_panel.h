#pragma once
// The aligned table of two runs with its filter bar (text, diverged only, verdict class, rank) and a
// count. Follows
// and drives the compare session's selection.
#include <QWidget>

class QCheckBox;
class QComboBox;
class QLabel;
class QLineEdit;
class QTableView;
class QTimer;

namespace dlui {

class CompareSession;
class CompareTableModel;

class CompareTablePanel : public QWidget {
    Q_OBJECT
public:
    explicit CompareTablePanel(CompareSession* session, QWidget* parent = nullptr);
    CompareTableModel* model() const { return m_model; }
    QTableView* view() const { return m_view; }
    QCheckBox* divergedOnly() const { return m_diverged; }
    // "All classes", then one entry per verdict class (item data: the dl::Verdict as int).
    QComboBox* classFilter() const { return m_class; }

private:
    void onComparisonChanged();
    void applyFilter();
    void onSelection();
    void updateCount();

    CompareSession* m_session;
    CompareTableModel* m_model;
    QTableView* m_view;
    QLineEdit* m_text;
    QCheckBox* m_diverged;
    QComboBox* m_rank;
    QComboBox* m_class;
    QLabel* m_count;
    QTimer* m_debounce;
    bool m_following = false;  // selecting the session's row: do not feed it back
};

}  // namespace dlui
