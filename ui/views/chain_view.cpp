#include "ui/views/chain_view.h"

#include <QEvent>
#include <QHeaderView>
#include <QLabel>
#include <QScrollArea>
#include <QScrollBar>
#include <QTableView>
#include <QVBoxLayout>
#include <algorithm>

#include "ui/models/chain_model.h"
#include "ui/models/dump_session.h"
#include "ui/models/replay_model.h"

namespace dlui {

namespace {

// Steps the chain table always shows (it scrolls beyond) and asks room for; the replay shows all
// its rows (fp16, bf16, fp32).
constexpr int kChainMinRows = 5;
constexpr int kChainMaxRows = 12;
constexpr int kReplayRows = 8;

// What the scroll area asks for: the parts' minimum heights plus what the wrapped labels (the
// recommendation, and the titles the main window lets wrap) add at this width. QWidget's own
// heightForWidth is the layout's preferred height, which made the chain table take its full size
// hint and pushed the replay below the fold even when all of it fits; counting only the
// recommendation's wrapping squeezed the chain table below its minimum at a 1.5 scale.
class ChainContent : public QWidget {
public:
    int heightForWidth(int w) const override {
        const QMargins m = layout()->contentsMargins();
        const int inner = std::max(1, w - m.left() - m.right());
        int wrappedExtra = 0;
        for (const QLabel* l : findChildren<QLabel*>(Qt::FindDirectChildrenOnly))
            if (l->wordWrap() && !l->isHidden())
                wrappedExtra += std::max(0, l->heightForWidth(inner) - l->minimumSizeHint().height());
        return layout()->minimumSize().height() + wrappedExtra;
    }
};

// A table whose height follows its rows: between `minRows` and `maxRows` of them plus the header
// and, when shown, the horizontal scroll bar. The replay table (min = max = its rows) leaves no
// empty rows under its three, and the chain table asks for room for its steps.
class RowsTable : public QTableView {
public:
    RowsTable(int minRows, int maxRows, QWidget* parent) : QTableView(parent), m_minRows(minRows), m_maxRows(maxRows) {
        // The scroll bar's height is part of ours: show/hide changes it (Qt shows and hides the
        // bar's container, not the bar).
        horizontalScrollBar()->installEventFilter(this);
        if (QWidget* box = horizontalScrollBar()->parentWidget(); box && box != this) box->installEventFilter(this);
    }
    void setModel(QAbstractItemModel* m) override {
        QTableView::setModel(m);
        connect(m, &QAbstractItemModel::modelReset, this, [this] { updateGeometry(); });
        connect(m, &QAbstractItemModel::rowsInserted, this, [this] { updateGeometry(); });
        connect(m, &QAbstractItemModel::rowsRemoved, this, [this] { updateGeometry(); });
    }
    QSize sizeHint() const override { return {QTableView::sizeHint().width(), heightFor(m_maxRows)}; }
    QSize minimumSizeHint() const override { return {QTableView::minimumSizeHint().width(), heightFor(m_minRows)}; }
    int heightFor(int rows) const {
        const int n = model() ? std::min(rows, model()->rowCount()) : 0;
        int h = 2 * frameWidth() + horizontalHeader()->sizeHint().height() + n * verticalHeader()->defaultSectionSize();
        if (horizontalScrollBar()->isVisibleTo(this)) h += horizontalScrollBar()->sizeHint().height();
        return h;
    }

protected:
    bool eventFilter(QObject* o, QEvent* e) override {
        if (e->type() == QEvent::Show || e->type() == QEvent::Hide) updateGeometry();
        return QTableView::eventFilter(o, e);
    }

private:
    int m_minRows, m_maxRows;
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
    : QWidget(parent),
      m_session(session),
      m_chain(new ChainModel(this)),
      m_replay(new ReplayModel(this)),
      m_chainView(new RowsTable(kChainMinRows, kChainMaxRows, this)),
      m_replayView(new RowsTable(kReplayRows, kReplayRows, this)),
      m_replayTitle(new QLabel(this)),
      m_recommendation(new QLabel(this)),
      m_chainEmpty(new QLabel(this)) {
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
    // The short columns as wide as what they hold ("propagated" and its colour mark were cut to
    // "propag…" at a fixed 90 px); a chain has a few dozen steps, so measuring them is free. The
    // Op column keeps its width (its names elide) and the last one takes the rest.
    connect(m_chain, &QAbstractItemModel::modelReset, m_chainView, [this] {
        for (int c : {int(ChainModel::Step), int(ChainModel::Role), int(ChainModel::From), int(ChainModel::Rank),
                      int(ChainModel::Stage), int(ChainModel::Iteration), int(ChainModel::Kind)})
            m_chainView->resizeColumnToContents(c);
    });
    // The chain takes the dock's spare height; the replay keeps exactly its rows.
    m_chainView->setSizePolicy(QSizePolicy::Preferred, QSizePolicy::Expanding);
    m_replayView->setSizePolicy(QSizePolicy::Preferred, QSizePolicy::Fixed);
    // Columns as wide as their contents ("Rel. error vs fp32" whole), the last one takes the rest.
    m_replayView->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_recommendation->setWordWrap(true);
    m_recommendation->setTextFormat(Qt::RichText);
    // The parts scroll together when the dock is shorter than they need (the wrapped
    // recommendation grows at a 1.5 scale): squeezed, the layout drew the replay title over the
    // chain table's last row and scroll bar.
    auto* content = new ChainContent;
    m_content = content;
    auto* lay = new QVBoxLayout(content);
    lay->setContentsMargins(4, 4, 4, 4);
    lay->addWidget(new QLabel(tr("<b>First-overflow chain</b> (click a step to select its op)"), content));
    lay->addWidget(m_chainView, 2);
    m_chainEmpty->setObjectName(QStringLiteral("chainEmpty"));
    m_chainEmpty->setWordWrap(true);
    m_chainEmpty->setForegroundRole(QPalette::PlaceholderText);
    lay->addWidget(m_chainEmpty);
    lay->addWidget(m_replayTitle);
    lay->addWidget(m_replayView, 0);
    lay->addWidget(m_recommendation);
    // Takes the spare height only when the chain table (stretch 2) is hidden: the captions stay together.
    lay->addStretch(0);
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
        m_session->select(m_chain->data(i, ChainModel::OpRole).toUInt(),
                          m_chain->data(i, ChainModel::TensorRole).toUInt());
    });
    onDumpChanged();
}

QString ChainView::replayTitleText() const { return m_replayTitle->text(); }

QString ChainView::recommendationText() const { return m_recommendation->text(); }

QString ChainView::chainPlaceholder() const { return m_chainView->isHidden() ? m_chainEmpty->text() : QString(); }

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
    // An empty table under "click a step" says nothing: say why there is no chain instead.
    const bool steps = m_chain->rowCount() > 0;
    m_chainView->setVisible(steps);
    m_chainEmpty->setVisible(!steps);
    m_chainEmpty->setText(
        !a ? (m_session->index() ? tr("No chain yet: the analysis is running.") : tr("No chain: no dump is open."))
            : a->noData         ? tr("No chain: nothing in this dump could be read (the Issues dock says why).")
            : !a->firstOverflow ? (m_session->dump()->live ? tr("No chain: no tensor overflows so far (watching).")
                                                           : tr("No chain: no tensor overflows in this dump."))
                                : tr("No chain steps were found for the first overflow."));
    m_replayView->setVisible(m_replay->rowCount() > 0);  // a bare header says nothing
    if (!a || !a->replay) {
        // A watched folder is analysed from its index alone (the replay would read tensor files
        // again on every update): the replay comes when the watch stops.
        const bool live = m_session->dump() && m_session->dump()->live;
        m_replayTitle->setText(tr("<b>Replay</b>: %1")
                                   .arg(!a                             ? tr("analysis pending")
                                            : live && a->firstOverflow ? tr("runs once the watch stops")
                                                                       : tr("no overflow to replay")));
        m_recommendation->clear();
        return;
    }
    const dl::ReplayResult& r = *a->replay;
    // The core's advice opens with what the caption already says ("rule of thumb, not a replay: "):
    // said once ("(rule of thumb): rule of thumb, ..." read twice).
    const auto withoutLead = [](const std::string& text, QLatin1String lead) {
        QString t = QString::fromStdString(text);
        if (t.startsWith(lead)) t.remove(0, lead.size());
        return t.toHtmlEscaped();
    };
    m_replayTitle->setText(
        r.available
            ? tr("<b>Replay of %1</b> in fp16 / bf16 / fp32%2")
                  .arg(QString::fromStdString(r.opType).toHtmlEscaped(),
                       r.reproducesOverflow ? tr(" — the fp16 replay reproduces the overflow") : QString())
            : tr("<b>Replay</b> not available: %1").arg(QString::fromStdString(r.unavailableReason).toHtmlEscaped()));
    QString rec = r.recommendationFromReplay
        ? QString::fromStdString(r.recommendation).toHtmlEscaped()
        : withoutLead(r.recommendation, QLatin1String("rule of thumb, not a replay: "));
    if (!rec.isEmpty())
        rec =
            tr("<b>Recommendation</b>%1: %2").arg(r.recommendationFromReplay ? QString() : tr(" (rule of thumb)"), rec);
    m_recommendation->setText(rec);
}

}  // namespace dlui
