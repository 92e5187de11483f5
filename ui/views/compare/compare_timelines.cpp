#include "ui/views/compare/compare_timelines.h"

#include <QCheckBox>
#include <QComboBox>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QLabel>
#include <QSignalBlocker>
#include <QToolButton>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>

#include "ui/jobs/background_task.h"
#include "ui/models/compare_session.h"
#include "ui/style/state_colors.h"
#include "ui/views/compare/compare_link_strip.h"
#include "ui/views/state_legend.h"
#include "ui/views/timeline/timeline_painter.h"
#include "ui/views/timeline/timeline_toolbar.h"
#include "ui/views/timeline/timeline_widget.h"

namespace dlui {

namespace {

QString num(double v) { return std::isnan(v) ? QStringLiteral("–") : QString::number(v, 'g', 5); }

QLabel* runLabel(QWidget* parent) {
    auto* l = new QLabel(parent);
    l->setTextFormat(Qt::RichText);
    l->setContentsMargins(6, 2, 6, 2);
    // A long path must not hold the window wider than the screen: clipped, full text in the tooltip.
    l->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    return l;
}

}  // namespace

CompareTimelines::CompareTimelines(CompareSession* session, QWidget* parent)
    : QWidget(parent),
      m_session(session),
      m_bar(new TimelineToolbar(this)),
      m_lock(new QCheckBox(tr("Lock zoom and pan"), this)),
      m_colour(new QComboBox(this)),
      m_compareLegend(makeStateLegend(StatePalette::comparison(), this)),
      m_overflowLegend(makeStateLegend(StatePalette::overflow(), this)),
      m_labelA(runLabel(this)),
      m_labelB(runLabel(this)),
      m_a(new TimelineWidget(this)),
      m_b(new TimelineWidget(this)),
      m_links(new CompareLinkStrip(session, m_a, m_b, this)),
      m_builder(new BackgroundTask(this)) {
    setObjectName(QStringLiteral("compareTimelines"));
    m_lock->setChecked(true);
    m_lock->setToolTip(
        tr("Zooming or panning one run shows the matching part of the other (mapped through matched ops)"));
    m_colour->addItem(tr("Colour by comparison"));
    m_colour->addItem(tr("Colour by overflow state"));
    m_colour->setToolTip(tr(
        "Comparison states, or each run's own overflow analysis (where the fp16 run overflows and the fix does not)"));
    m_overflowLegend->hide();
    for (TimelineWidget* w : {m_a, m_b}) {
        w->setPalette(&StatePalette::comparison());
        w->setCompact(true);
        w->setRangeMargin(0);
        // Overview, ruler and two lanes: more would over-fill a 768 px screen, whose layout then
        // lays the strip over timeline A and cuts timeline B off (the lanes scroll instead).
        w->setMinimumHeight(TimelinePainter::kOverviewHeight + TimelinePainter::kRulerHeight +
                            2 * TimelinePainter::kLaneHeight);
    }
    m_a->setTooltipExtra([this](quint32 op) { return tooltipExtra(false, op); });
    m_b->setTooltipExtra([this](quint32 op) { return tooltipExtra(true, op); });
    m_bar->addControl(m_lock);
    m_bar->addControl(m_colour);
    // The legend on a row of its own: one row of controls and legend is wider than a laptop screen.
    m_bar->addLegend(m_compareLegend);
    m_bar->addLegend(m_overflowLegend);
    auto* lay = new QVBoxLayout(this);
    lay->setContentsMargins(0, 0, 0, 0);
    lay->setSpacing(0);
    lay->addWidget(m_bar);
    lay->addWidget(m_labelA);
    lay->addWidget(m_a, 1);
    lay->addWidget(m_links);
    lay->addWidget(m_labelB);
    lay->addWidget(m_b, 1);

    connect(m_session, &CompareSession::comparisonChanged, this, &CompareTimelines::onComparisonChanged);
    connect(m_session, &CompareSession::selectionChanged, this, &CompareTimelines::onSelection);
    connect(m_bar, &TimelineToolbar::optionsChanged, this, &CompareTimelines::rebuild);
    connect(m_colour, &QComboBox::currentIndexChanged, this, &CompareTimelines::rebuild);
    connect(m_lock, &QCheckBox::toggled, this, [this](bool on) {
        if (on) follow(m_a);
    });
    connect(m_bar, &TimelineToolbar::fitRequested, m_a, &TimelineWidget::fitAll);
    connect(m_a, &TimelineWidget::viewChanged, this, [this] { follow(m_a); });
    connect(m_b, &TimelineWidget::viewChanged, this, [this] { follow(m_b); });
    connect(m_a, &TimelineWidget::opClicked, m_session, &CompareSession::selectOpA);
    connect(m_b, &TimelineWidget::opClicked, m_session, &CompareSession::selectOpB);
    onComparisonChanged();
}

void CompareTimelines::onComparisonChanged() {
    const dl::DumpIndex* a = m_session->indexA();
    const dl::RunComparison* c = m_session->comparison();
    // The folder name first: it is what tells the runs apart when the rest is clipped.
    const auto runText = [](const QString& path) {
        return QStringLiteral("<b>%1</b> · %2").arg(QFileInfo(path).fileName().toHtmlEscaped(), path.toHtmlEscaped());
    };
    const QString a_ = theme::cssColor(theme::forBackground(theme::kRunA, palette()));
    const QString b_ = theme::cssColor(theme::forBackground(theme::kRunB, palette()));
    m_labelA->setText(tr("<b style='%1'>A</b> %2").arg(a_, runText(m_session->pathA())));
    m_labelB->setText(tr("<b style='%1'>B</b> %2").arg(b_, runText(m_session->pathB())));
    m_labelA->setToolTip(m_session->pathA());
    m_labelB->setToolTip(m_session->pathB());
    if (a && c) {
        std::optional<std::uint32_t> bad;
        if (c->firstDivergence >= 0)
            bad = a->ops[a->tensors[c->alignment.tensors[std::size_t(c->firstDivergence)].a].op].iteration;
        // Kept across re-judging; else the first divergence's iteration, else the first iteration.
        m_bar->setIterations(a->iterations(), bad, tr("first divergence"), true, 1);
    } else {
        m_bar->clearIterations();
    }
    rebuild();
}

void CompareTimelines::rebuild() {
    ComparedRunsPtr runs = m_session->runs();
    std::shared_ptr<const dl::CompareOverlay> ov = m_session->overlayPtr();
    if (!ov || !runs) {
        m_building = false;
        m_shown.reset();
        m_dataA.reset();
        m_dataB.reset();
        m_a->setTimeline(nullptr, nullptr, nullptr, nullptr);
        m_b->setTimeline(nullptr, nullptr, nullptr, nullptr);
        return;
    }
    const dl::TimelineOptions opt = m_bar->options();
    const bool overflowColours = m_colour->currentIndex() == 1 && runs->a->states && runs->b->states;
    m_building = true;
    m_builder->start([this, runs, ov, opt, overflowColours](std::stop_token stop, const BackgroundTask::Post& post) {
        auto built = std::make_shared<Built>();
        built->runs = runs;
        built->overlay = ov;
        built->overflowColours = overflowColours;
        built->statesA = overflowColours ? runs->a->states.get() : &ov->statesA;
        built->statesB = overflowColours ? runs->b->states.get() : &ov->statesB;
        // The overflow chain's arrows belong to the overflow colours, not to the comparison's.
        built->a = buildRunTimeline(*runs->a, *built->statesA, opt, stop, overflowColours);
        built->b = buildRunTimeline(*runs->b, *built->statesB, opt, stop, overflowColours);
        if (built->a->cancelled || built->b->cancelled) return;  // superseded: the newer build posts
        built->map = dl::timeMapBetween(*built->a, *built->b, *ov);
        post([this, built] {
            if (built->overlay == m_session->overlayPtr()) onBuilt(built);
        });
    });
}

void CompareTimelines::onBuilt(const std::shared_ptr<const Built>& built) {
    m_building = false;
    m_shown = built;
    m_dataA = built->a;
    m_dataB = built->b;
    m_map = built->map;
    const LoadedDump &a = *built->runs->a, &b = *built->runs->b;
    const StatePalette* palette = built->overflowColours ? &StatePalette::overflow() : &StatePalette::comparison();
    m_compareLegend->setVisible(!built->overflowColours);
    m_overflowLegend->setVisible(built->overflowColours);
    m_syncing = true;
    for (TimelineWidget* w : {m_a, m_b}) w->setPalette(palette);
    m_a->setTimeline(m_dataA, a.index.get(), built->statesA, a.analysis.get());
    m_b->setTimeline(m_dataB, b.index.get(), built->statesB, b.analysis.get());
    // Room for every lane up to four (a 4-rank pipeline whole at 1366x768: rank 0 was cut under
    // the ruler and the diverging rank 3 scrolled off); the docks below give way, more lanes scroll.
    for (TimelineWidget* w : {m_a, m_b}) {
        const int lanes = std::min(4, std::max(2, static_cast<int>(w->timeline() ? w->timeline()->lanes.size() : 2)));
        w->setMinimumHeight(TimelinePainter::kOverviewHeight + TimelinePainter::kRulerHeight +
                            lanes * TimelinePainter::kLaneHeight + 2);
    }
    m_syncing = false;
    onSelection();
    emit timelinesBuilt();
}

void CompareTimelines::follow(TimelineWidget* leader) {
    if (!m_syncing && m_lock->isChecked() && m_dataA && m_dataB) {
        m_syncing = true;
        // The time map works on absolute times; the windows are relative to each timeline's origin.
        const dl::TimelineViewport& vp = leader->viewport();
        TimelineWidget* other = leader == m_a ? m_b : m_a;
        const double lo = double(vp.origin()), oo = double(other->viewport().origin());
        const auto map = [&](double t) { return leader == m_a ? m_map.toB(t + lo) - oo : m_map.toA(t + lo) - oo; };
        other->setWindow(map(vp.from()), map(vp.to()));
        m_syncing = false;
    }
    m_links->update();
}

void CompareTimelines::onSelection() {
    const dl::DumpIndex* a = m_session->indexA();
    if (!a || !m_dataA) return;
    const quint32 opA = m_session->currentOpA(), opB = m_session->currentOpB();
    std::size_t lane = 0, item = 0;
    if (opA != dl::kNoIndex && !m_dataA->locate(opA, lane, item)) {
        // The op lives in another iteration: switch to it (rebuild selects it again).
        QComboBox* iteration = m_bar->iterationChoice();
        const int i = iteration->findData(QVariant::fromValue(a->ops[opA].iteration));
        if (i >= 0 && i != iteration->currentIndex()) {
            iteration->setCurrentIndex(i);
            return;
        }
    }
    // Select in both; the follower's own scroll would fight the lock, so B only scrolls vertically.
    m_a->selectOp(opA);
    const bool locked = m_lock->isChecked() && opA != dl::kNoIndex;
    if (locked) {
        m_syncing = true;
        m_b->selectOp(opB);
        m_syncing = false;
        follow(m_a);
    } else {
        m_b->selectOp(opB);
    }
    m_links->update();
}

QString CompareTimelines::tooltipExtra(bool runB, quint32 op) const {
    const dl::CompareOverlay* ov = m_session->overlay();
    const dl::RunComparison* c = m_session->comparison();
    if (!ov || !c) return {};
    const auto& partners = runB ? ov->partnerB : ov->partnerA;
    if (op >= partners.size()) return {};
    if (partners[op] == dl::kNoIndex)
        return tr("<br><b>only in run %1</b>").arg(runB ? QStringLiteral("B") : QStringLiteral("A"));
    QString s = tr("<br>matched with <b>%1</b> in run %2")
                    .arg(m_session->opLabel(!runB, partners[op]).toHtmlEscaped(),
                         runB ? QStringLiteral("A") : QStringLiteral("B"));
    const dl::DumpIndex* ix = runB ? m_session->indexB() : m_session->indexA();
    const auto& rowOf = runB ? ov->rowOfTensorB : ov->rowOfTensorA;
    const dl::OpRecord& o = ix->ops[op];
    for (quint32 t = o.firstTensor; t < o.firstTensor + o.tensorCount && t < rowOf.size(); ++t) {
        if (rowOf[t] == dl::kNoIndex) continue;
        const dl::TensorComparison& r = c->rows[rowOf[t]];
        s += QStringLiteral("<br>%1: ").arg(QString::fromStdString(ix->tensorLabel(ix->tensors[t])));
        s += r.metrics.fromData ? tr("cosine %1, max abs err %2").arg(num(r.metrics.cosine), num(r.metrics.maxAbsErr))
                                : tr("max rel diff %1").arg(num(r.metrics.maxRelDiff));
        if (r.diverged)
            s += tr(" · <span style='%1'>diverged: %2</span>")
                     .arg(theme::cssColor(theme::forBackground(theme::kTextError, palette())),
                          QString::fromStdString(r.reason).toHtmlEscaped());
    }
    return s;
}

}  // namespace dlui
