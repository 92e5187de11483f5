#include "ui/views/timeline_panel.h"

#include <QCheckBox>
#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QSignalBlocker>
#include <QToolButton>
#include <QVBoxLayout>

#include "ui/models/dump_session.h"
#include "ui/util/background_task.h"
#include "ui/views/state_legend.h"
#include "ui/views/timeline_widget.h"

namespace dlui {

TimelinePanel::TimelinePanel(DumpSession* session, QWidget* parent)
    : QWidget(parent), m_session(session), m_widget(new TimelineWidget(this)), m_iteration(new QComboBox(this)),
      m_align(new QCheckBox(tr("Align rank clocks"), this)), m_perStream(new QCheckBox(tr("Lane per stream"), this)),
      m_info(new QLabel(this)), m_builder(new BackgroundTask(this)) {
    setObjectName(QStringLiteral("timelinePanel"));
    m_align->setChecked(true);
    m_align->setToolTip(tr("Shift each rank by the clock offset the analysis estimated from Send/Receive pairs"));
    m_iteration->setSizeAdjustPolicy(QComboBox::AdjustToContents);   // "5 (first overflow)" at most
    m_iteration->setToolTip(tr("Iteration shown on the timeline"));
    auto* fit = new QToolButton(this);
    fit->setText(tr("Show all"));
    fit->setToolTip(tr("Show the whole iteration (0)"));
    // Two short rows rather than one wide one, so the panel fits a laptop screen beside the docks:
    // the controls, then what is shown (elided when narrow) and the legend.
    auto* bar = new QHBoxLayout;
    bar->setContentsMargins(6, 4, 6, 0);
    bar->addWidget(new QLabel(tr("Iteration:"), this));
    bar->addWidget(m_iteration);
    bar->addWidget(m_align);
    bar->addWidget(m_perStream);
    bar->addWidget(fit);
    bar->addStretch(1);
    m_info->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    m_info->setMinimumWidth(40);
    auto* bar2 = new QHBoxLayout;
    bar2->setContentsMargins(6, 0, 6, 2);
    bar2->addWidget(m_info, 1);
    bar2->addWidget(makeStateLegend(StatePalette::overflow(), this));
    auto* lay = new QVBoxLayout(this);
    lay->setContentsMargins(0, 0, 0, 0);
    lay->setSpacing(0);
    lay->addLayout(bar);
    lay->addLayout(bar2);
    lay->addWidget(m_widget, 1);

    connect(m_session, &DumpSession::dumpChanged, this, &TimelinePanel::onDumpChanged);
    connect(m_session, &DumpSession::selectionChanged, this, [this](quint32 op, quint32) { onSelection(op); });
    connect(m_iteration, &QComboBox::currentIndexChanged, this, &TimelinePanel::rebuild);
    connect(m_align, &QCheckBox::toggled, this, &TimelinePanel::rebuild);
    connect(m_perStream, &QCheckBox::toggled, this, &TimelinePanel::rebuild);
    connect(fit, &QToolButton::clicked, m_widget, &TimelineWidget::fitAll);
    connect(m_widget, &TimelineWidget::opClicked, m_session, [this](quint32 op) { m_session->select(op); });
    connect(m_widget, &TimelineWidget::selectionCleared, m_session, &DumpSession::clearSelection);
}

void TimelinePanel::onDumpChanged() {
    QSignalBlocker block(m_iteration);
    m_iteration->clear();
    const dl::DumpIndex* ix = m_session->index();
    if (!ix) {
        m_building = false;
        m_shown.reset();
        m_data.reset();
        m_widget->setTimeline(nullptr, nullptr, nullptr, nullptr);
        return;
    }
    m_iteration->addItem(tr("All"), QVariant());
    const dl::AnalysisResult* a = m_session->analysis();
    int pick = 0;
    for (std::uint32_t it : ix->iterations()) {
        const bool bad = a && a->firstBadIteration && *a->firstBadIteration == it;
        m_iteration->addItem(bad ? tr("%1 (first overflow)").arg(it) : QString::number(it), QVariant::fromValue(it));
        if (bad || pick == 0) pick = m_iteration->count() - 1;  // first iteration, or the first bad one
    }
    m_iteration->setCurrentIndex(pick);
    rebuild();
}

void TimelinePanel::rebuild() {
    LoadedDumpPtr dump = m_session->dump();
    if (!dump || !dump->index || !dump->states) return;
    dl::TimelineOptions opt;
    const QVariant v = m_iteration->currentData();
    if (v.isValid()) opt.iteration = v.value<std::uint32_t>();
    opt.alignClocks = m_align->isChecked();
    opt.perStream = m_perStream->isChecked();
    m_building = true;
    m_info->setText(tr("Building the timeline…"));
    // The job holds the dump, so the index it reads outlives a newer dump being opened meanwhile.
    m_builder->start([this, dump, opt](std::stop_token stop, const BackgroundTask::Post& post) {
        dl::TimelineOptions o = opt;
        o.stop = stop;
        auto data = std::make_shared<const dl::TimelineData>(dl::buildTimeline(*dump->index, dump->analysis.get(), *dump->states, o));
        if (data->cancelled) return;   // superseded by a newer build, which posts instead
        post([this, dump, data] {
            if (dump == m_session->dump()) onBuilt(dump, data);
        });
    });
}

void TimelinePanel::onBuilt(LoadedDumpPtr dump, std::shared_ptr<const dl::TimelineData> data) {
    m_building = false;
    m_shown = std::move(dump);   // keeps the index the widget points into alive
    m_data = std::move(data);
    m_widget->setTimeline(m_data, m_shown->index.get(), m_shown->states.get(), m_shown->analysis.get());
    QString info = m_data->base == dl::TimeBase::Timestamps ? tr("%1 ops on dump timestamps").arg(m_data->opsShown)
                                                            : tr("%1 ops in execution order (no timestamps)").arg(m_data->opsShown);
    if (m_data->opsWithoutTime) info += tr(", %1 without a timestamp not shown").arg(m_data->opsWithoutTime);
    m_info->setText(info);
    m_info->setToolTip(info);   // clipped when the panel is narrow
    if (m_session->currentOp() != dl::kNoIndex) onSelection(m_session->currentOp());
    emit timelineBuilt();
}

void TimelinePanel::onSelection(quint32 op) {
    const dl::DumpIndex* ix = m_session->index();
    if (!ix) return;
    if (op >= ix->ops.size()) {   // selection cleared
        m_widget->clearSelection();
        return;
    }
    std::size_t lane = 0, item = 0;
    if (m_data && !m_data->locate(op, lane, item)) {
        // The op lives in another iteration: switch to it (rebuild selects it).
        const int i = m_iteration->findData(QVariant::fromValue(ix->ops[op].iteration));
        if (i >= 0 && i != m_iteration->currentIndex()) {
            m_iteration->setCurrentIndex(i);
            return;
        }
    }
    m_widget->selectOp(op);
}

}  // namespace dlui
