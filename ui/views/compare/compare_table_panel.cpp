#include "ui/views/compare/compare_table_panel.h"

#include <QCheckBox>
#include <QComboBox>
#include <QFontMetrics>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QIcon>
#include <QLabel>
#include <QLineEdit>
#include <QPixmap>
#include <QSignalBlocker>
#include <QTableView>
#include <QTimer>
#include <QVBoxLayout>
#include <algorithm>
#include <set>

#include "ui/models/compare_session.h"
#include "ui/models/compare_table_model.h"
#include "ui/style/state_colors.h"
#include "ui/views/data_table_view.h"

namespace dlui {

CompareTablePanel::CompareTablePanel(CompareSession* session, QWidget* parent)
    : QWidget(parent),
      m_session(session),
      m_model(new CompareTableModel(session, this)),
      m_view(new QTableView(this)),
      m_text(new QLineEdit(this)),
      m_diverged(new QCheckBox(tr("Diverged only"), this)),
      m_rank(new QComboBox(this)),
      m_class(new QComboBox(this)),
      m_count(new QLabel(this)),
      m_debounce(new QTimer(this)) {
    m_class->setObjectName(QStringLiteral("classFilter"));
    m_class->setToolTip(tr("Show one verdict class only"));
    m_class->addItem(tr("All classes"), QVariant());
    for (int v = 0; v < dl::kVerdictCount; ++v) {
        QPixmap swatch(12, 12);
        swatch.fill(verdictColor(dl::Verdict(v)));
        m_class->addItem(QIcon(swatch), verdictText(dl::Verdict(v)), v);
    }
    m_text->setPlaceholderText(tr("Filter by op name, type or scope (either run)…"));
    m_text->setClearButtonEnabled(true);
    auto* bar = new QHBoxLayout;
    bar->setContentsMargins(4, 4, 4, 0);
    bar->addWidget(m_text, 3);
    bar->addWidget(m_diverged);
    bar->addWidget(m_class);
    bar->addWidget(m_rank);
    bar->addWidget(m_count, 1);
    auto* lay = new QVBoxLayout(this);
    lay->setContentsMargins(0, 0, 0, 0);
    lay->addLayout(bar);
    lay->addWidget(m_view, 1);

    m_view->setModel(m_model);
    setupDataTable(m_view, 78);
    m_view->horizontalHeader()->setStretchLastSection(true);
    m_view->setColumnWidth(CompareTableModel::Rank, 40);
    m_view->setColumnWidth(CompareTableModel::Iteration, 36);
    m_view->setColumnWidth(CompareTableModel::OpA, 190);
    m_view->setColumnWidth(CompareTableModel::OpB, 190);
    m_view->setColumnWidth(CompareTableModel::Match, 62);
    m_view->setColumnWidth(CompareTableModel::Tensor, 62);
    m_view->setColumnWidth(CompareTableModel::Shape, 90);
    m_view->setColumnWidth(CompareTableModel::DType, 110);
    m_view->setColumnWidth(CompareTableModel::Class, 92);
    // The figures are printed with six significant digits; their columns fit the widest such
    // text whole (78 px elided 0.00310723 to "0....", a number read as nothing).
    const QFontMetrics fm = m_view->fontMetrics();
    int figureW = 0;
    for (const char* widest : {"-0.000123457", "-1.23457e+38", "-1.23457e-05"})
        figureW = std::max(figureW, fm.horizontalAdvance(QLatin1String(widest)));
    for (int c = CompareTableModel::MaxA; c <= CompareTableModel::FiveThousandth; ++c)
        m_view->setColumnWidth(c, figureW + 14);
    // Class sits next to Status, ahead of the statistics, so it is on screen at 1366 px.
    m_view->horizontalHeader()->moveSection(CompareTableModel::Class, CompareTableModel::DType + 1);

    m_debounce->setSingleShot(true);
    m_debounce->setInterval(250);
    connect(m_debounce, &QTimer::timeout, this, &CompareTablePanel::applyFilter);
    connect(m_text, &QLineEdit::textChanged, m_debounce, qOverload<>(&QTimer::start));
    connect(m_diverged, &QCheckBox::toggled, this, &CompareTablePanel::applyFilter);
    connect(m_rank, &QComboBox::currentIndexChanged, this, &CompareTablePanel::applyFilter);
    connect(m_class, &QComboBox::currentIndexChanged, this, &CompareTablePanel::applyFilter);
    connect(m_session, &CompareSession::comparisonChanged, this, &CompareTablePanel::onComparisonChanged);
    connect(m_session, &CompareSession::selectionChanged, this, &CompareTablePanel::onSelection);
    connect(m_model, &QAbstractItemModel::modelReset, this, &CompareTablePanel::updateCount);
    connect(m_model, &QAbstractItemModel::modelReset, this, &CompareTablePanel::onSelection);
    connect(m_view->selectionModel(), &QItemSelectionModel::currentRowChanged, this, [this](const QModelIndex& cur) {
        if (!m_following && cur.isValid()) m_session->selectRow(m_model->comparisonRowAt(cur.row()));
    });
    onComparisonChanged();
}

void CompareTablePanel::onComparisonChanged() {
    QSignalBlocker block(m_rank);
    const QVariant keep = m_rank->currentData();
    m_rank->clear();
    m_rank->addItem(tr("All ranks"), QVariant());
    if (const dl::DumpIndex* a = m_session->indexA()) {
        std::set<std::uint32_t> ranks;
        for (const dl::OpRecord& o : a->ops) ranks.insert(o.rank);
        for (std::uint32_t r : ranks) m_rank->addItem(tr("Rank %1").arg(r), QVariant::fromValue(r));
    }
    const int i = m_rank->findData(keep);
    m_rank->setCurrentIndex(i < 0 ? 0 : i);
    updateCount();
}

void CompareTablePanel::applyFilter() {
    dl::CompareRowFilter f;
    f.text = m_text->text().trimmed().toStdString();
    f.divergedOnly = m_diverged->isChecked();
    if (m_rank->currentData().isValid()) f.rank = m_rank->currentData().value<std::uint32_t>();
    if (m_class->currentData().isValid()) f.classes = 1u << unsigned(m_class->currentData().toInt());
    m_model->setFilter(f);
    onSelection();
}

void CompareTablePanel::updateCount() {
    const dl::RunComparison* c = m_session->comparison();
    m_count->setText(c ? tr("%L1 of %L2 matched tensors · %L3 diverged")
                             .arg(m_model->rowCount())
                             .arg(c->rows.size())
                             .arg(c->diverged)
                       : QString());
}

void CompareTablePanel::onSelection() {
    const int row = m_model->viewRowOf(m_session->currentRow());
    m_following = true;
    if (row >= 0) {
        const QModelIndex idx = m_model->index(row, CompareTableModel::OpA);
        m_view->selectionModel()->setCurrentIndex(idx, QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
        m_view->scrollTo(idx, QAbstractItemView::PositionAtCenter);
    } else {
        m_view->selectionModel()->clearSelection();
    }
    m_following = false;
}

}  // namespace dlui
