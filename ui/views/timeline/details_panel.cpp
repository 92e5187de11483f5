#include "ui/views/timeline/details_panel.h"

#include <QHeaderView>
#include <QLabel>
#include <QSortFilterProxyModel>
#include <QTableView>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>

#include "core/analysis/tensor_anomaly.h"
#include "core/timeline/time_axis.h"
#include "ui/models/dump_session.h"
#include "ui/style/figure_text.h"
#include "ui/style/op_names.h"
#include "ui/style/state_colors.h"
#include "ui/views/data_table_view.h"
#include "ui/views/timeline/timeline_panel.h"
#include "ui/views/timeline/timeline_widget.h"

namespace dlui {

DetailsModel::DetailsModel(DumpSession* session, TimelinePanel* timeline, QObject* parent)
    : QAbstractTableModel(parent), m_session(session), m_timeline(timeline) {}

void DetailsModel::setRows(std::vector<Row> rows) {
    beginResetModel();
    m_rows = std::move(rows);
    endResetModel();
}

int DetailsModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : static_cast<int>(m_rows.size());
}

int DetailsModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

QVariant DetailsModel::headerData(int section, Qt::Orientation o, int role) const {
    if (o != Qt::Horizontal || role != Qt::DisplayRole) return {};
    static const char* names[] = {"",      "Op",       "Type",  "Rank",   "Iteration",
                                  "Start", "Duration", "State", "max|x|", "Tensors"};
    return section >= 0 && section < ColumnCount ? tr(names[section]) : QVariant();
}

QVariant DetailsModel::data(const QModelIndex& index, int role) const {
    const dl::DumpIndex* ix = m_session->index();
    if (!ix || !checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) return {};
    if (role != Qt::DisplayRole && role != Qt::ToolTipRole && role != kSortRole) return {};
    const Row& row = m_rows[static_cast<std::size_t>(index.row())];
    if (row.op >= ix->ops.size()) return {};
    const dl::OpRecord& o = ix->ops[row.op];
    const dl::TimelineData* d = m_timeline->timeline();
    const TimelineWidget* w = m_timeline->timelineWidget();
    std::size_t lane = 0, item = 0;
    const dl::TimelineItem* it = d && d->locate(row.op, lane, item) ? &d->lanes[lane].items[item] : nullptr;
    const dl::OpStates* st = m_session->states();
    switch (index.column()) {
        case Relation:
            return row.relation;
        case Op: {
            const OpNames n = opNames(*ix, o);
            return role == Qt::ToolTipRole ? n.full : n.shortName;
        }
        case Type:
            return QString::fromStdString(ix->strings.str(o.type));
        case Rank:
            return o.rank;
        case Iteration:
            return o.iteration;
        case Start:
            if (!it) return {};
            if (role == kSortRole) return static_cast<qlonglong>(it->start);
            return w->painter().timeText(w->relTime(it->start));
        case Duration: {
            if (!it) return {};
            const double dur = static_cast<double>(it->end - it->start);
            if (role == kSortRole) return dur;
            if (d->base == dl::TimeBase::ExecutionOrder) return QString();
            return QString::fromStdString(dl::formatTimeOffset(dur)) +
                (it->inferredEnd ? tr(" (inferred)") : QString());
        }
        case State:
            if (!st || row.op >= st->op.size()) return {};
            if (role == kSortRole) return static_cast<int>(st->op[row.op]);
            return StatePalette::overflow().name(st->op[row.op]);
        case MaxAbs: {
            double m = -1;
            for (quint32 t = o.firstTensor; t < o.firstTensor + o.tensorCount && t < ix->tensors.size(); ++t) {
                const dl::TensorAnomaly a = dl::classifyTensor(*ix, ix->tensors[t]);
                if (std::isfinite(a.maxAbs)) m = std::max(m, a.maxAbs);
            }
            if (role == kSortRole) return m;
            return m < 0 ? QString() : QString::number(m, 'g', 6);
        }
        case Tensors:
            return o.tensorCount;
        default:
            return {};
    }
}

DetailsPanel::DetailsPanel(DumpSession* session, TimelinePanel* timeline, QWidget* parent)
    : QWidget(parent),
      m_session(session),
      m_timeline(timeline),
      m_summary(new QLabel(this)),
      m_table(new QTableView(this)),
      m_model(new DetailsModel(session, timeline, this)),
      m_proxy(new QSortFilterProxyModel(this)) {
    setObjectName(QStringLiteral("detailsPanel"));
    m_summary->setObjectName(QStringLiteral("detailsSummary"));
    m_summary->setWordWrap(true);  // the whole summary, wrapped, never elided
    m_summary->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_summary->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    m_proxy->setSourceModel(m_model);
    m_proxy->setSortRole(DetailsModel::kSortRole);
    m_table->setModel(m_proxy);
    setupDataTable(m_table, 90);
    m_table->horizontalHeader()->setStretchLastSection(true);
    m_table->setColumnWidth(DetailsModel::Relation, 110);
    m_table->setColumnWidth(DetailsModel::Op, 200);
    auto* lay = new QVBoxLayout(this);
    lay->setContentsMargins(4, 2, 4, 2);
    lay->addWidget(m_summary);
    lay->addWidget(m_table, 1);
    // Sorting by Start or max|x| sorts by the number, not the text: the proxy's sort role holds it.
    connect(m_table->selectionModel(), &QItemSelectionModel::currentRowChanged, this, [this](const QModelIndex& cur) {
        if (!cur.isValid()) return;
        const quint32 op = m_model->opAt(m_proxy->mapToSource(cur).row());
        if (op == m_session->currentOp()) return;
        m_picking = true;
        m_session->select(op);
        m_picking = false;
    });
    connect(m_session, &DumpSession::dumpChanged, this, &DetailsPanel::showNothing);
    connect(m_session, &DumpSession::selectionChanged, this, [this](quint32 op, quint32) {
        if (!m_picking) showSelection(op);
    });
    TimelineWidget* w = m_timeline->timelineWidget();
    connect(w, &TimelineWidget::areaChanged, this, [this] {
        if (m_timeline->timelineWidget()->hasArea())
            showArea();
        else if (m_shows == Shows::Area)
            showSelection(m_session->currentOp());
    });
    connect(m_timeline, &TimelinePanel::matchesChanged, this, &DetailsPanel::showSearch);
    showNothing();
}

QString DetailsPanel::summary() const { return m_summary->text(); }

void DetailsPanel::showNothing() {
    m_shows = Shows::Nothing;
    m_model->setRows({});
    m_summary->setText(
        tr("Select an op, drag over an area (Ctrl+drag, or on the ruler) or filter the table: the details show here."));
}

void DetailsPanel::showSelection(quint32 op) {
    const dl::DumpIndex* ix = m_session->index();
    if (!ix || op >= ix->ops.size()) {
        showNothing();
        return;
    }
    m_shows = Shows::Selection;
    std::vector<DetailsModel::Row> rows{{op, tr("selected")}};
    // Its flows (Send/Receive partner, collective members) and its overflow-chain hops.
    if (const dl::TimelineData* d = m_timeline->timeline()) {
        for (const dl::TimelineFlow& f : d->flowsFor(op)) {
            const quint32 other = f.fromOp == op ? f.toOp : f.fromOp;
            rows.push_back({other,
                            f.collective         ? tr("collective member")
                                : f.fromOp == op ? tr("its Receive")
                                                 : tr("its Send")});
        }
        for (const dl::TimelineArrow& a : d->arrows) {
            if (a.toOp == op) rows.push_back({a.fromOp, tr("chain: from")});
            if (a.fromOp == op) rows.push_back({a.toOp, tr("chain: to")});
        }
    }
    const OpNames n = opNames(*ix, ix->ops[op]);
    m_summary->setText(
        rows.size() == 1
            ? tr("Selected: %1 (rank %2, iteration %3)").arg(n.full).arg(ix->ops[op].rank).arg(ix->ops[op].iteration)
            : tr("Selected: %1 (rank %2, iteration %3), with %L4 related ops")
                  .arg(n.full)
                  .arg(ix->ops[op].rank)
                  .arg(ix->ops[op].iteration)
                  .arg(rows.size() - 1));
    m_model->setRows(std::move(rows));
}

void DetailsPanel::showArea() {
    TimelineWidget* w = m_timeline->timelineWidget();
    const dl::TimelineData* d = m_timeline->timeline();
    if (!d || !w->hasArea()) return;
    m_shows = Shows::Area;
    const TimelinePaintState& st = w->paintState();
    const double shift = static_cast<double>(w->viewport().origin() - d->t0);
    const std::vector<std::uint32_t> ops =
        d->opsInArea(static_cast<std::size_t>(st.areaLaneFrom), static_cast<std::size_t>(st.areaLaneTo),
                     st.areaFrom + shift, st.areaTo + shift, kMaxRows);
    std::vector<DetailsModel::Row> rows;
    rows.reserve(ops.size());
    for (std::uint32_t op : ops) rows.push_back({op, tr("in area")});
    QString text = w->areaText();
    if (ops.size() >= kMaxRows) text += tr(" (the first %L1 listed)").arg(kMaxRows);
    m_summary->setText(text);
    m_model->setRows(std::move(rows));
}

void DetailsPanel::showSearch() {
    const std::vector<quint32>& order = m_timeline->timelineWidget()->matchOrder();
    if (order.empty()) {
        if (m_shows == Shows::Search) showSelection(m_session->currentOp());
        return;
    }
    m_shows = Shows::Search;
    std::vector<DetailsModel::Row> rows;
    for (std::size_t i = 0; i < order.size() && i < kMaxRows; ++i) rows.push_back({order[i], tr("match")});
    m_summary->setText(
        order.size() == 1
            ? tr("Search: 1 matching op on this timeline (Enter / F3: next, Shift: previous)")
            : tr("Search: %L1 matching ops on this timeline (Enter / F3: next, Shift: previous)").arg(order.size()));
    m_model->setRows(std::move(rows));
}

}  // namespace dlui
