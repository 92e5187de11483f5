#include "ui/views/chain_view.h"

#include <QHeaderView>
#include <QLabel>
#include <QTableView>
#include <QVBoxLayout>

#include "ui/models/chain_model.h"
#include "ui/models/dump_session.h"
#include "ui/models/replay_model.h"

namespace dlui {

namespace {
void setupTable(QTableView* v) {
    v->setSelectionBehavior(QAbstractItemView::SelectRows);
    v->setSelectionMode(QAbstractItemView::SingleSelection);
    v->verticalHeader()->hide();
    v->verticalHeader()->setDefaultSectionSize(20);
    v->horizontalHeader()->setStretchLastSection(true);
}
}  // namespace

ChainView::ChainView(DumpSession* session, QWidget* parent)
    : QWidget(parent), m_session(session), m_chain(new ChainModel(this)), m_replay(new ReplayModel(this)),
      m_chainView(new QTableView(this)), m_replayView(new QTableView(this)), m_replayTitle(new QLabel(this)),
      m_recommendation(new QLabel(this)) {
    m_chainView->setModel(m_chain);
    m_replayView->setModel(m_replay);
    setupTable(m_chainView);
    setupTable(m_replayView);
    m_chainView->setColumnWidth(ChainModel::Step, 28);
    m_chainView->setColumnWidth(ChainModel::Role, 90);
    m_chainView->setColumnWidth(ChainModel::From, 110);
    m_chainView->setColumnWidth(ChainModel::Rank, 44);
    m_chainView->setColumnWidth(ChainModel::Stage, 44);
    m_chainView->setColumnWidth(ChainModel::Iteration, 40);
    m_chainView->setColumnWidth(ChainModel::Op, 200);
    m_chainView->setColumnWidth(ChainModel::Kind, 70);
    m_chainView->setMinimumHeight(120);  // header + four steps: a chain across stages stays readable
    m_replayView->setMinimumHeight(96);
    m_replayView->horizontalHeader()->setSectionResizeMode(QHeaderView::Stretch);
    m_recommendation->setWordWrap(true);
    m_recommendation->setTextFormat(Qt::RichText);
    auto* lay = new QVBoxLayout(this);
    lay->setContentsMargins(4, 4, 4, 4);
    lay->addWidget(new QLabel(tr("<b>First-overflow chain</b> (click a step to select its op)"), this));
    lay->addWidget(m_chainView, 2);
    lay->addWidget(m_replayTitle);
    lay->addWidget(m_replayView, 0);
    lay->addWidget(m_recommendation);
    connect(m_session, &DumpSession::dumpChanged, this, &ChainView::onDumpChanged);
    connect(m_session, &DumpSession::selectionChanged, this, [this](quint32 op, quint32) { onSelection(op); });
    connect(m_chainView, &QTableView::clicked, this, [this](const QModelIndex& i) {
        m_session->select(m_chain->data(i, ChainModel::OpRole).toUInt(), m_chain->data(i, ChainModel::TensorRole).toUInt());
    });
    onDumpChanged();
}

void ChainView::onSelection(quint32 op) {
    for (int row = 0; row < m_chain->rowCount(); ++row)
        if (m_chain->index(row, 0).data(ChainModel::OpRole).toUInt() == op) {
            m_chainView->selectRow(row);
            return;
        }
    m_chainView->clearSelection();
}

void ChainView::onDumpChanged() {
    const dl::AnalysisResult* a = m_session->analysis();
    m_chain->setSource(m_session->index(), a);
    m_replay->setSource(a);
    if (!a || !a->replay) {
        m_replayTitle->setText(tr("<b>Replay</b>: %1").arg(a ? tr("no overflow to replay") : tr("analysis pending")));
        m_recommendation->clear();
        return;
    }
    const dl::ReplayResult& r = *a->replay;
    m_replayTitle->setText(r.available ? tr("<b>Replay of %1</b> in fp16 / bf16 / fp32%2")
                                             .arg(QString::fromStdString(r.opType).toHtmlEscaped(),
                                                  r.reproducesOverflow ? tr(" — the fp16 replay reproduces the overflow") : QString())
                                       : tr("<b>Replay</b> not available: %1").arg(QString::fromStdString(r.unavailableReason).toHtmlEscaped()));
    QString rec = QString::fromStdString(r.recommendation).toHtmlEscaped();
    if (!rec.isEmpty())
        rec = tr("<b>Recommendation</b>%1: %2").arg(r.recommendationFromReplay ? QString() : tr(" (rule of thumb)"), rec);
    m_recommendation->setText(rec);
}

}  // namespace dlui
