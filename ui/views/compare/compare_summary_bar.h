#pragma once
// The top of the compare window: the comparison's one-line story (core's RunComparison::story),
// where the runs first diverge (or that they agree), the tensors per verdict class with their
// colours, the match counts, and the divergence thresholds, shown and editable (re-judged
// without recomputing). The bookkeeping (why the first divergence is one, the match counts, the
// thresholds) folds away behind "Details", so that on a laptop screen the two timelines below
// keep several lanes each; the choice is remembered.
#include <QFrame>

class QLabel;
class QLineEdit;
class QPushButton;
class QToolButton;

namespace dlui {

class CompareSession;

class CompareSummaryBar : public QFrame {
    Q_OBJECT
public:
    explicit CompareSummaryBar(CompareSession* session, QWidget* parent = nullptr);
    QString text() const;
    QString story() const;
    // "identical 880 · precision 1,012 · ..." as shown (plain text, classes with no tensor left out).
    QString classCounts() const;
    QLineEdit* thresholdEdit() const { return m_threshold; }
    void showError(const QString& message);
    bool detailsShown() const;
    void setDetailsShown(bool shown);

public slots:
    // Parses the threshold field and re-judges the comparison; a bad spec is shown, not applied.
    void applyThresholds();

private:
    void refresh();
    void setTone(const QString& background, const QString& border);

    CompareSession* m_session;
    QLabel* m_story;
    QLabel* m_classes;
    QLabel* m_label;   // the first divergence (or the agreement) in one line
    QLabel* m_reason;  // details: why, and the order evidence
    QLabel* m_counts;  // details: the match bookkeeping
    QToolButton* m_details;
    QWidget* m_detailsBox;
    QLineEdit* m_threshold;
    QPushButton* m_apply;
    QPushButton* m_jump;
    QLabel* m_thresholdError;
};

}  // namespace dlui
