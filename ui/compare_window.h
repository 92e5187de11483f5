#pragma once
// The comparison of the open run (A) with a second run (B): a progress page while B is opened
// and compared on a worker thread, then the summary and the stacked timelines, with the aligned
// table and the tensor pair (histograms overlaid) as docks.
#include <QMainWindow>

#include "ui/jobs/loaded_dump.h"

class QLabel;
class QStackedWidget;
class QTableView;

namespace dlui {

class CompareSession;
class CompareSummaryBar;
class CompareTablePanel;
class CompareTensorPanel;
class CompareTimelines;
class CompareWorker;
class LoadingPage;

class CompareWindow : public QMainWindow {
    Q_OBJECT
public:
    explicit CompareWindow(QWidget* parent = nullptr);
    ~CompareWindow() override;

    // Opens B (a demo variant written into demoDirB first when set) and compares it with `a`.
    void start(LoadedDumpPtr a, const QString& pathB, const QString& demoDirB = {});
    bool isBusy() const;

    CompareSession* session() const { return m_session; }
    CompareSummaryBar* summary() const { return m_summary; }
    CompareTimelines* timelines() const { return m_timelines; }
    CompareTablePanel* table() const { return m_table; }
    CompareTensorPanel* tensorPanel() const { return m_tensor; }
    QTableView* unmatchedView() const { return m_unmatched; }

    // Run A's overflow report with this comparison (current thresholds) as its last section.
    bool writeReport(const QString& path, QString& error) const;
    // The comparison as dumplens-cli compare writes it: JSON (schema dumplens.compare/1) or CSV.
    bool writeComparison(const QString& path, bool json, QString& error) const;

signals:
    void ready();  // the comparison is shown (or failed with a message)

protected:
    void closeEvent(QCloseEvent* e) override;

private:
    void setupMenu();
    void exportReport();
    void exportComparison();

    CompareSession* m_session;
    CompareWorker* m_worker;
    QStackedWidget* m_stack;
    LoadingPage* m_loading;
    QWidget* m_workspace;
    CompareSummaryBar* m_summary;
    CompareTimelines* m_timelines;
    CompareTablePanel* m_table;
    CompareTensorPanel* m_tensor;
    QTableView* m_unmatched;
    QLabel* m_status = nullptr;  // the standing status line
};

}  // namespace dlui
