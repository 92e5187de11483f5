#include "ui/views/op_table_panel.h"

#include <QAction>
#include <QCheckBox>
#include <QClipboard>
#include <QComboBox>
#include <QGuiApplication>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QSignalBlocker>
#include <QTableView>
#include <QTimer>
#include <QVBoxLayout>
#include <algorithm>

#include <QKeyEvent>
#include "ui/models/dump_session.h"
#include "ui/models/op_table_model.h"
#include "ui/style/state_colors.h"
#include "ui/style/theme.h"
#include "ui/views/data_table_view.h"
#include "ui/views/elided_label.h"
#include "ui/views/op_context_menu.h"
#include "ui/views/scoped_name_delegate.h"

namespace dlui {

OpTablePanel::OpTablePanel(DumpSession* session, QWidget* parent)
    : QWidget(parent),
      m_session(session),
      m_model(new OpTableModel(this)),
      m_view(new QTableView(this)),
      m_text(new QLineEdit(this)),
      m_regex(new QCheckBox(tr("Regex"), this)),
      m_type(new QComboBox(this)),
      m_rank(new QComboBox(this)),
      m_stage(new QComboBox(this)),
      m_state(new QComboBox(this)),
      m_count(new ElidedLabel(this, Qt::ElideRight)),
      m_debounce(new QTimer(this)) {
    m_text->setPlaceholderText(tr("Filter ops by name, scope or type…"));
    m_text->setClearButtonEnabled(true);
    m_state->addItem(tr("Any state"), dl::kAllOpStates);
    m_state->addItem(tr("Not normal"), dl::kAllOpStates & ~dl::opStateBit(dl::OpState::Normal));
    for (int s = 0; s < dl::kOpStateCount; ++s)
        m_state->addItem(stateText(dl::OpState(s)), dl::opStateBit(dl::OpState(s)));
    // Combos sized by a short contents length, not their longest item (op types can be long).
    for (QComboBox* c : {m_type, m_rank, m_stage, m_state}) {
        c->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
        c->setMinimumContentsLength(c == m_type ? 8 : 5);
    }
    // The bar fits the table dock beside the right docks on a 1024 px screen.
    m_text->setMinimumWidth(100);
    auto* bar = new QHBoxLayout;
    bar->setContentsMargins(4, 4, 4, 0);
    bar->addWidget(m_text, 3);
    bar->addWidget(m_regex);
    bar->addWidget(m_type, 1);
    bar->addWidget(m_rank);
    bar->addWidget(m_stage);
    bar->addWidget(m_state);
    bar->addWidget(m_count, 1);
    auto* lay = new QVBoxLayout(this);
    lay->setContentsMargins(0, 0, 0, 0);
    lay->addLayout(bar);
    lay->addWidget(m_view, 1);

    m_view->setModel(m_model);
    setupDataTable(m_view, 80);
    m_view->setColumnWidth(static_cast<int>(dl::OpColumn::Rank), 44);
    m_view->setColumnWidth(static_cast<int>(dl::OpColumn::Stage), 44);
    m_view->setColumnWidth(static_cast<int>(dl::OpColumn::Iteration), 40);
    m_view->setColumnWidth(static_cast<int>(dl::OpColumn::Order), 44);
    m_view->setColumnWidth(static_cast<int>(dl::OpColumn::Op), 220);
    m_view->setColumnWidth(static_cast<int>(dl::OpColumn::Type), 110);
    m_view->setItemDelegateForColumn(static_cast<int>(dl::OpColumn::Op),
                                     new ScopedNameDelegate(OpTableModel::ScopeRole, m_view));
    // Several rows can be selected for Ctrl+C; the current row is the one the other views show.
    m_view->setSelectionMode(QAbstractItemView::ExtendedSelection);
    m_copyRows = new QAction(tr("&Copy rows"), m_view);
    m_copyRows->setObjectName(QStringLiteral("copyRows"));
    m_copyRows->setShortcut(QKeySequence::Copy);
    m_copyRows->setShortcutContext(Qt::WidgetWithChildrenShortcut);
    connect(m_copyRows, &QAction::triggered, this, &OpTablePanel::copySelectedRows);
    m_view->addAction(m_copyRows);
    m_view->setContextMenuPolicy(Qt::CustomContextMenu);
    connect(m_view, &QWidget::customContextMenuRequested, this, [this](const QPoint& pos) {
        const QModelIndex i = m_view->indexAt(pos);
        if (!i.isValid()) return;
        QMenu menu(this);
        fillRowMenu(menu, i.row());
        menu.exec(m_view->viewport()->mapToGlobal(pos));
    });
    m_text->installEventFilter(this);
    m_text->setToolTip(
        tr("Matches are highlighted on the timeline: Enter / F3 goes to the next, Shift+Enter / Shift+F3 to the "
           "previous"));

    m_debounce->setSingleShot(true);
    m_debounce->setInterval(250);
    connect(m_debounce, &QTimer::timeout, this, &OpTablePanel::applyFilter);
    connect(m_text, &QLineEdit::textChanged, m_debounce, qOverload<>(&QTimer::start));
    connect(m_regex, &QCheckBox::toggled, this, &OpTablePanel::applyFilter);
    for (QComboBox* c : {m_type, m_rank, m_stage, m_state})
        connect(c, &QComboBox::currentIndexChanged, this, &OpTablePanel::applyFilter);
    connect(m_session, &DumpSession::dumpChanged, this, &OpTablePanel::onDumpChanged);
    connect(m_session, &DumpSession::selectionChanged, this, [this](quint32, quint32 t) { onSelection(t); });
    connect(m_view->selectionModel(), &QItemSelectionModel::currentRowChanged, this, &OpTablePanel::onCurrentRow);
    onDumpChanged();
}

void OpTablePanel::onDumpChanged() {
    const dl::DumpIndex* ix = m_session->index();
    const dl::AnalysisResult* a = m_session->analysis();
    // The same run again (a watched folder grew): the type, rank and stage picked stay picked.
    const QString path = m_session->dump() ? m_session->dump()->path : QString();
    const bool sameRun = !path.isEmpty() && path == m_shownPath;
    const QString keepType = sameRun && m_type->currentIndex() > 0 ? m_type->currentText() : QString();
    const QVariant keepRank = sameRun ? m_rank->currentData() : QVariant(),
                   keepStage = sameRun ? m_stage->currentData() : QVariant();
    {
        QSignalBlocker b1(m_type), b2(m_rank), b3(m_stage);
        m_type->clear();
        m_rank->clear();
        m_stage->clear();
        m_type->addItem(tr("Any type"));
        m_rank->addItem(tr("Any rank"), QVariant());
        m_stage->addItem(tr("Any stage"), QVariant());
        if (ix) {
            for (const std::string& t : dl::opTypes(*ix)) m_type->addItem(QString::fromStdString(t));
            for (const dl::RankInfo& r : ix->ranks) m_rank->addItem(tr("rank %1").arg(r.rank), r.rank);
        }
        if (a)
            for (int s = 0; s < a->stages.stageCount; ++s) m_stage->addItem(tr("stage %1").arg(s), s);
        if (!keepType.isEmpty()) m_type->setCurrentIndex(std::max(0, m_type->findText(keepType)));
        if (keepRank.isValid()) m_rank->setCurrentIndex(std::max(0, m_rank->findData(keepRank)));
        if (keepStage.isValid()) m_stage->setCurrentIndex(std::max(0, m_stage->findData(keepStage)));
    }
    // Another dump: the old filter text and current row mean nothing in it (a stale current row
    // would even select an unrelated op of the new dump).
    if (path != m_shownPath) {
        m_shownPath = path;
        QSignalBlocker b(m_text);
        m_text->clear();
    }
    m_syncing = true;
    m_view->selectionModel()->clear();
    m_debounce->stop();
    QString error;
    const bool ok = m_model->setSource(ix, m_session->states(), a ? &a->stages : nullptr, currentFilter(), error);
    m_view->selectionModel()->clear();
    m_syncing = false;
    showFilterResult(ok, error);
}

void OpTablePanel::setFilterText(const QString& text, bool regex) {
    QSignalBlocker b(m_text), b2(m_regex);
    m_text->setText(text);
    m_regex->setChecked(regex);
    applyFilter();
}

void OpTablePanel::flushPendingFilter() {
    if (m_debounce->isActive()) applyFilter();
}

dl::OpFilter OpTablePanel::currentFilter() const {
    dl::OpFilter f;
    f.text = m_text->text().toStdString();
    f.regex = m_regex->isChecked();
    if (m_type->currentIndex() > 0) f.type = m_type->currentText().toStdString();
    if (m_rank->currentData().isValid()) f.rank = m_rank->currentData().toUInt();
    if (m_stage->currentData().isValid()) f.stage = m_stage->currentData().toInt();
    f.stateMask = m_state->currentData().toUInt();
    return f;
}

void OpTablePanel::applyFilter() {
    m_debounce->stop();
    QString error;
    const bool ok = m_model->setFilter(currentFilter(), error);
    showFilterResult(ok, error);
}

void OpTablePanel::showFilterResult(bool ok, const QString& error) {
    if (!ok) {
        // The palette, not a stylesheet: the field keeps its style's look on a dark theme too.
        QPalette p = m_text->palette();
        p.setColor(QPalette::Base, theme::mix(palette().color(QPalette::Base), theme::kStateInfNan, 0.25));
        m_text->setPalette(p);
        m_text->setToolTip(error);
        m_count->setFullText(tr("invalid regex"));
        return;
    }
    m_text->setPalette(QPalette());
    m_text->setToolTip({});
    m_count->setFullText(tr("%L1 of %L2 tensors").arg(m_model->rowCount()).arg(m_model->totalTensors()));
    onSelection(m_session->currentTensor());
    emit matchesChanged(m_model->isFiltering() ? m_model->matchingOps() : std::vector<quint32>{});
}

void OpTablePanel::fillRowMenu(QMenu& menu, int row) {
    const dl::DumpIndex* ix = m_session->index();
    if (!ix || row < 0 || row >= m_model->rowCount()) return;
    const quint32 tensor = m_model->tensorAt(row);
    OpMenuHooks hooks;
    if (m_session->canCompare()) hooks.compareTensor = [this](quint32 t) { m_session->requestCompare(t); };
    fillOpMenu(menu, this, *ix, ix->tensors[tensor].op, tensor, hooks);
    menu.addSeparator();
    menu.addAction(m_copyRows);
}

bool OpTablePanel::eventFilter(QObject* watched, QEvent* e) {
    if (watched == m_text && e->type() == QEvent::KeyPress) {
        const auto* k = static_cast<QKeyEvent*>(e);
        if (k->key() == Qt::Key_Return || k->key() == Qt::Key_Enter || k->key() == Qt::Key_F3) {
            flushPendingFilter();  // typed and pressed Enter at once
            emit nextMatchRequested(k->modifiers() & Qt::ShiftModifier);
            return true;
        }
    }
    return QWidget::eventFilter(watched, e);
}

void OpTablePanel::onSelection(quint32 tensor) {
    if (tensor == dl::kNoIndex) {  // selection cleared
        m_syncing = true;
        m_view->selectionModel()->clear();
        m_syncing = false;
        return;
    }
    const int row = m_model->rowOfTensor(tensor);
    if (row < 0) return;
    // Picked here (perhaps with Shift or Ctrl to extend a selection for Ctrl+C): leave it be.
    if (m_view->currentIndex().row() == row && m_view->selectionModel()->isRowSelected(row, {})) return;
    m_syncing = true;
    const QModelIndex i = m_model->index(row, static_cast<int>(dl::OpColumn::Op));
    m_view->selectionModel()->setCurrentIndex(i, QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
    m_view->scrollTo(i);
    m_syncing = false;
}

QList<int> OpTablePanel::selectedRows() const {
    QList<int> rows;
    for (const QModelIndex& i : m_view->selectionModel()->selectedRows()) rows << i.row();
    if (rows.isEmpty() && m_view->currentIndex().isValid()) rows << m_view->currentIndex().row();
    std::sort(rows.begin(), rows.end());
    return rows;
}

QString OpTablePanel::countText() const { return m_count->fullText(); }

void OpTablePanel::copySelectedRows() {
    const QList<int> rows = selectedRows();
    if (!rows.isEmpty()) QGuiApplication::clipboard()->setText(m_model->rowsAsTsv(rows));
}

void OpTablePanel::onCurrentRow(const QModelIndex& current) {
    if (m_syncing || !current.isValid()) return;
    const quint32 t = m_model->tensorAt(current.row());
    m_session->select(m_model->data(current, OpTableModel::OpRole).toUInt(), t);
}

}  // namespace dlui
