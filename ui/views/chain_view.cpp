#include "ui/views/chain_view.h"

#include <QHeaderView>
#include <QLabel>
#include <QScrollArea>
#include <QTableView>
#include <QVBoxLayout>
#include <algorithm>

#include "ui/models/chain_model.h"
#include "ui/models/dump_session.h"
#include "ui/models/replay_model.h"

namespace dlui {

namespace {

// What the scroll area asks for: the parts' minimum heights plus the wrapped recommendation at
// this width. QWidget's own heightForWidth is the layout's preferred height, which made the chain
// table take its full size hint and pushed the replay below the fold even when all of it fits.
class ChainContent : public QWidget {
public:
    explicit ChainContent(QLabel* wrapped) : m_wrapped(wrapped) {}
    int heightForWidth(int w) const override {
        const QMargins m = layout()->contentsMargins();
        const int wrappedExtra = m_wrapped->heightForWidth(std::max(1, w - m.left() - m.right())) -
                                 m_wrapped->minimumSizeHint().height();
        return layout()->minimumSize().height() + std::max(0, wrappedExtra);
    }

private:
    QLabel* m_wrapped;
};

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
    // The parts scroll together when the dock is shorter than they need (the wrapped
    // recommendation grows at a 1.5 scale): squeezed, the layout drew the replay title over the
    // chain table's last row and scroll bar.
    auto* content = new ChainContent(m_recommendation);
    m_content = content;
    auto* lay = new QVBoxLayout(content);
    lay->setContentsMargins(4, 4, 4, 4);
    lay->addWidget(new QLabel(tr("<b>First-overflow chain</b> (click a step to select its op)"), content));
    lay->addWidget(m_chainView, 2);
    lay->addWidget(m_replayTitle);
    lay->addWidget(m_replayView, 0);
    lay->addWidget(m_recommendation);
    auto* scroll = new QScrollArea(this);
    scroll->setObjectName(QStringLiteral("chainScroll"));
    scroll->setFrameShape(QFrame::NoFrame);
    scroll->setWidgetResizable(true);
    scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    scroll->setWidget(content);
    auto* outer = new QVBoxLayout(this);
    outer->setContentsMargins(0, 0, 0, 0);
    outer->addWidget(scroll);
    connect(m_session, &DumpSession::dumpChanged, this, &ChainView::onDumpChanged);
    connect(m_session, &DumpSession::selectionChanged, this, [this](quint32 op, quint32) { onSelection(op); });
    connect(m_chainView, &QTableView::clicked, this, [this](const QModelIndex& i) {
        m_session->select(m_chain->data(i, ChainModel::OpRole).toUInt(), m_chain->data(i, ChainModel::TensorRole).toUInt());
    });
    onDumpChanged();
}

QSize ChainView::sizeHint() const { return m_content->sizeHint(); }

QSize ChainView::minimumSizeHint() const { return m_content->minimumSizeHint(); }

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
