#include "ui/compare_window.h"

#include <QCloseEvent>
#include <QDockWidget>
#include <QFileInfo>
#include <QSettings>
#include <QStackedWidget>
#include <QHeaderView>
#include <QStatusBar>
#include <QTableView>
#include <QTimer>
#include <QVBoxLayout>

#include "ui/models/compare_session.h"
#include "ui/models/unmatched_ops_model.h"
#include "ui/util/compare_worker.h"
#include "ui/views/compare_summary_bar.h"
#include "ui/views/compare_table_panel.h"
#include "ui/views/compare_tensor_panel.h"
#include "ui/views/compare_timelines.h"
#include "ui/views/data_table_view.h"
#include "ui/views/loading_page.h"

namespace dlui {

CompareWindow::CompareWindow(QWidget* parent)
    : QMainWindow(parent), m_session(new CompareSession(this)), m_worker(new CompareWorker(this)),
      m_stack(new QStackedWidget(this)), m_loading(new LoadingPage(this)), m_workspace(new QWidget(this)),
      m_summary(new CompareSummaryBar(m_session, this)), m_timelines(new CompareTimelines(m_session, this)),
      m_table(new CompareTablePanel(m_session, this)), m_tensor(new CompareTensorPanel(m_session, this)),
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
    m_unmatched->setSortingEnabled(false);   // run A's ops, then run B's, each in execution order
    m_unmatched->horizontalHeader()->setStretchLastSection(true);
    m_unmatched->setColumnWidth(UnmatchedOpsModel::Op, 200);
    connect(m_unmatched->selectionModel(), &QItemSelectionModel::currentRowChanged, this, [this](const QModelIndex& cur) {
        if (!cur.isValid()) return;
        bool runB = false;
        const quint32 op = static_cast<UnmatchedOpsModel*>(m_unmatched->model())->opAt(cur.row(), runB);
        if (runB) m_session->selectOpB(op);
        else m_session->selectOpA(op);
    });
    auto* tensor = new QDockWidget(tr("Tensor in both runs"), this);
    tensor->setObjectName(QStringLiteral("compare.tensor"));
    tensor->setWidget(m_tensor);
    addDockWidget(Qt::RightDockWidgetArea, tensor);
    QSettings s;
    if (!restoreGeometry(s.value(QStringLiteral("compare/geometry")).toByteArray())) resize(1500, 950);
    if (!restoreState(s.value(QStringLiteral("compare/state")).toByteArray())) {
        QTimer::singleShot(0, this, [this, table, tensor] {
            resizeDocks({tensor}, {width() * 2 / 7}, Qt::Horizontal);
            resizeDocks({table}, {height() * 3 / 10}, Qt::Vertical);
        });
    }

    connect(m_loading, &LoadingPage::cancelRequested, m_worker, &CompareWorker::cancel);
    connect(m_worker, &CompareWorker::stageChanged, m_loading, &LoadingPage::setStage);
    connect(m_worker, &CompareWorker::progress, m_loading, &LoadingPage::setProgress);
    connect(m_worker, &CompareWorker::finished, this, [this](ComparedRunsPtr r) {
        m_stack->setCurrentWidget(m_workspace);
        if (!r->ok) {
            m_session->setRuns(nullptr);
            m_summary->showError(r->error);
            statusBar()->showMessage(r->cancelled ? tr("Comparison cancelled") : r->error);
            emit ready();
            return;
        }
        m_session->setRuns(r);
        setWindowTitle(tr("DumpLens — compare %1 with %2").arg(QFileInfo(r->a->path).fileName(), QFileInfo(r->b->path).fileName()));
        const dl::RunComparison& c = *r->comparison;
        statusBar()->showMessage(tr("Compared %L1 tensor pairs in %2 s (%3 MB of tensor data)")
                                     .arg(c.rows.size()).arg(c.seconds, 0, 'f', 2).arg(double(c.bytesCompared) / 1e6, 0, 'f', 1));
        m_session->selectFirstDivergence();
        emit ready();
    });
}

CompareWindow::~CompareWindow() = default;

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
