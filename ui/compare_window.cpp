#include "ui/compare_window.h"

#include <QCloseEvent>
#include <QDockWidget>
#include <QFileDialog>
#include <QFileInfo>
#include <QHeaderView>
#include <QLabel>
#include <QMenuBar>
#include <QMessageBox>
#include <QSaveFile>
#include <QSettings>
#include <QStackedWidget>
#include <QStatusBar>
#include <QTableView>
#include <QTimer>
#include <QVBoxLayout>

#include "core/compare/compare_json.h"
#include "core/util/text_lines.h"
#include "ui/jobs/compare_worker.h"
#include "ui/models/compare_session.h"
#include "ui/models/unmatched_ops_model.h"
#include "ui/report/report_export.h"
#include "ui/report/report_renderer.h"
#include "ui/style/screen_fit.h"
#include "ui/views/compare/compare_summary_bar.h"
#include "ui/views/compare/compare_table_panel.h"
#include "ui/views/compare/compare_tensor_panel.h"
#include "ui/views/compare/compare_timelines.h"
#include "ui/views/data_table_view.h"
#include "ui/views/loading_page.h"

namespace dlui {

CompareWindow::CompareWindow(QWidget* parent)
    : QMainWindow(parent),
      m_session(new CompareSession(this)),
      m_worker(new CompareWorker(this)),
      m_stack(new QStackedWidget(this)),
      m_loading(new LoadingPage(this)),
      m_workspace(new QWidget(this)),
      m_summary(new CompareSummaryBar(m_session, this)),
      m_timelines(new CompareTimelines(m_session, this)),
      m_table(new CompareTablePanel(m_session, this)),
      m_tensor(new CompareTensorPanel(m_session, this)),
      m_unmatched(new QTableView(this)) {
    setWindowFlag(Qt::Window);
    setWindowTitle(tr("DumpLens — compare"));
    auto* ws = new QVBoxLayout(m_workspace);
    ws->setContentsMargins(4, 4, 4, 0);
    ws->addWidget(m_summary);
    ws->addWidget(m_timelines, 1);
    m_stack->addWidget(m_loading);
    m_stack->addWidget(m_workspace);
    setCentralWidget(m_stack);
    auto* table = new QDockWidget(tr("Aligned tensors"), this);
    table->setObjectName(QStringLiteral("compare.table"));
    table->setWidget(m_table);
    addDockWidget(Qt::BottomDockWidgetArea, table);
    auto* unmatched = new QDockWidget(tr("Unmatched ops"), this);
    unmatched->setObjectName(QStringLiteral("compare.unmatched"));
    unmatched->setWidget(m_unmatched);
    addDockWidget(Qt::BottomDockWidgetArea, unmatched);
    tabifyDockWidget(table, unmatched);
    table->raise();
    m_unmatched->setModel(new UnmatchedOpsModel(m_session, m_unmatched));
    setupDataTable(m_unmatched, 80);
    m_unmatched->setSortingEnabled(false);  // run A's ops, then run B's, each in execution order
    m_unmatched->horizontalHeader()->setStretchLastSection(true);
    m_unmatched->setColumnWidth(UnmatchedOpsModel::Op, 200);
    connect(m_unmatched->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
            [this](const QModelIndex& cur) {
                if (!cur.isValid()) return;
                bool runB = false;
                const quint32 op = static_cast<UnmatchedOpsModel*>(m_unmatched->model())->opAt(cur.row(), runB);
                if (runB)
                    m_session->selectOpB(op);
                else
                    m_session->selectOpA(op);
            });
    auto* tensor = new QDockWidget(tr("Tensor in both runs"), this);
    tensor->setObjectName(QStringLiteral("compare.tensor"));
    tensor->setWidget(m_tensor);
    addDockWidget(Qt::RightDockWidgetArea, tensor);
    QSettings s;
    if (!restoreGeometry(s.value(QStringLiteral("compare/geometry")).toByteArray()))
        resize(fitToScreen(this, {1500, 950}));
    if (!restoreState(s.value(QStringLiteral("compare/state")).toByteArray())) {
        QTimer::singleShot(0, this, [this, table, tensor] {
            resizeDocks({tensor}, {width() * 2 / 7}, Qt::Horizontal);
            resizeDocks({table}, {height() * 3 / 10}, Qt::Vertical);
        });
    }

    // A status-bar widget, not a message, so that hovering a menu does not wipe the summary.
    m_status = new QLabel(this);
    m_status->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    statusBar()->addWidget(m_status, 1);
    setupMenu();
    connect(m_loading, &LoadingPage::cancelRequested, m_worker, &CompareWorker::cancel);
    connect(m_worker, &CompareWorker::stageChanged, m_loading, &LoadingPage::setStage);
    connect(m_worker, &CompareWorker::progress, m_loading, &LoadingPage::setProgress);
    connect(m_worker, &CompareWorker::finished, this, [this](ComparedRunsPtr r) {
        m_stack->setCurrentWidget(m_workspace);
        if (!r->ok) {
            m_session->setRuns(nullptr);
            m_summary->showError(r->error);
            m_status->setText(r->cancelled ? tr("Comparison cancelled") : r->error);
            emit ready();
            return;
        }
        m_session->setRuns(r);
        setWindowTitle(tr("DumpLens — compare %1 with %2")
                           .arg(QFileInfo(r->a->path).fileName(), QFileInfo(r->b->path).fileName()));
        const dl::RunComparison& c = *r->comparison;
        m_status->setText(tr("Compared %L1 tensor pairs in %2 s (%3 MB of tensor data)")
                              .arg(c.rows.size())
                              .arg(c.seconds, 0, 'f', 2)
                              .arg(double(c.bytesCompared) / 1e6, 0, 'f', 1));
        m_session->selectFirstDivergence();
        emit ready();
    });
}

CompareWindow::~CompareWindow() = default;

void CompareWindow::setupMenu() {
    QMenu* file = menuBar()->addMenu(tr("&File"));
    QAction* report = file->addAction(tr("Export &report…"), this, &CompareWindow::exportReport);
    report->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_E));
    report->setStatusTip(tr("Run A's overflow report as PDF, with this comparison as its last section"));
    QAction* table =
        file->addAction(tr("Export the comparison as &CSV or JSON…"), this, &CompareWindow::exportComparison);
    table->setStatusTip(tr("The same files dumplens-cli compare --csv / --json writes"));
    for (QAction* a : {report, table}) {
        a->setEnabled(false);
        connect(m_session, &CompareSession::comparisonChanged, a, [this, a] { a->setEnabled(m_session->isReady()); });
    }
    file->addSeparator();
    QAction* close = file->addAction(tr("&Close"), this, &QWidget::close);
    close->setShortcut(QKeySequence::Close);
}

bool CompareWindow::writeReport(const QString& path, QString& error) const {
    const dl::RunComparison* c = m_session->comparison();
    const dl::AnalysisResult* an = m_session->analysisA();
    if (!c || !an) {
        error = tr("No comparison is open.");
        return false;
    }
    ReportRenderOptions opt;
    opt.pageSize = localePageSize();
    opt.comparison = dl::splitLines(dl::compareText(*c, *m_session->indexA(), *m_session->indexB()));
    ReportRenderInfo info;
    return writeReportPdf(*m_session->indexA(), *an, opt, path, info, error);
}

bool CompareWindow::writeComparison(const QString& path, bool json, QString& error) const {
    const dl::RunComparison* c = m_session->comparison();
    if (!c) {
        error = tr("No comparison is open.");
        return false;
    }
    const dl::DumpIndex &a = *m_session->indexA(), &b = *m_session->indexB();
    const std::string text = json ? dl::compareJson(*c, a, b) + "\n" : dl::compareCsv(*c, a, b);
    QSaveFile f(path);
    if (!f.open(QIODevice::WriteOnly) || f.write(text.data(), qint64(text.size())) != qint64(text.size()) ||
        !f.commit()) {
        error = tr("Could not write %1: %2").arg(path, f.errorString());
        return false;
    }
    return true;
}

void CompareWindow::exportReport() {
    exportReportInteractively(this, QStringLiteral("compare-report.pdf"),
                              [this](const QString& path, QString& error) { return writeReport(path, error); });
}

void CompareWindow::exportComparison() {
    QString filter;
    const QString path = QFileDialog::getSaveFileName(
        this, tr("Export the comparison"), QStringLiteral("comparison.csv"),
        tr("CSV, one row per matched tensor (*.csv);;JSON, dumplens.compare/1 (*.json)"), &filter);
    if (path.isEmpty()) return;
    QString error;
    if (writeComparison(path, filter.contains(QLatin1String("json")) || path.endsWith(QLatin1String(".json")), error))
        statusBar()->showMessage(tr("Comparison written to %1").arg(path), 8000);
    else
        QMessageBox::warning(this, tr("Export the comparison"), error);
}

void CompareWindow::start(LoadedDumpPtr a, const QString& pathB, const QString& demoDirB) {
    m_session->setRuns(nullptr);
    m_loading->begin(pathB);
    m_stack->setCurrentWidget(m_loading);
    m_worker->start(std::move(a), pathB, demoDirB, {});
}

bool CompareWindow::isBusy() const { return m_worker->isRunning(); }

void CompareWindow::closeEvent(QCloseEvent* e) {
    QSettings s;
    s.setValue(QStringLiteral("compare/geometry"), saveGeometry());
    s.setValue(QStringLiteral("compare/state"), saveState());
    m_worker->cancel();
    e->accept();
}

}  // namespace dlui
