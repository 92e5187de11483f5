#include "ui/views/timeline/timeline_panel.h"

#include <QCheckBox>
#include <QComboBox>
#include <QVBoxLayout>

#include "ui/jobs/background_task.h"
#include "ui/models/dump_session.h"
#include "ui/views/state_legend.h"
#include "ui/views/timeline/timeline_toolbar.h"
#include "ui/views/timeline/timeline_widget.h"

namespace dlui {

TimelinePanel::TimelinePanel(DumpSession* session, QWidget* parent)
    : QWidget(parent),
      m_session(session),
      m_bar(new TimelineToolbar(this)),
      m_widget(new TimelineWidget(this)),
      m_perStream(new QCheckBox(tr("Lane per stream"), this)),
      m_builder(new BackgroundTask(this)) {
    setObjectName(QStringLiteral("timelinePanel"));
    m_bar->addControl(m_perStream);
    m_bar->addLegend(makeStateLegend(StatePalette::overflow(), this));
    auto* lay = new QVBoxLayout(this);
    lay->setContentsMargins(0, 0, 0, 0);
    lay->setSpacing(0);
    lay->addWidget(m_bar);
    lay->addWidget(m_widget, 1);
    m_widget->setCompareHook([this] { return m_session->canCompare(); },
                             [this](quint32 tensor) { m_session->requestCompare(tensor); });

    connect(m_session, &DumpSession::dumpChanged, this, &TimelinePanel::onDumpChanged);
    connect(m_session, &DumpSession::selectionChanged, this, [this](quint32 op, quint32) { onSelection(op); });
    // Another iteration or layout asked for: framed anew (only a grown run keeps its window).
    const auto rebuildAsAsked = [this] {
        m_keepWindow = false;
        rebuild();
    };
    connect(m_bar, &TimelineToolbar::optionsChanged, this, rebuildAsAsked);
    connect(m_perStream, &QCheckBox::toggled, this, rebuildAsAsked);
    connect(m_bar, &TimelineToolbar::fitRequested, m_widget, &TimelineWidget::fitAll);
    connect(m_widget, &TimelineWidget::opClicked, m_session, [this](quint32 op) { m_session->select(op); });
    connect(m_widget, &TimelineWidget::selectionCleared, m_session, &DumpSession::clearSelection);
    connect(m_widget, &TimelineWidget::areaChanged, this, &TimelinePanel::updateStatus);
}

void TimelinePanel::onDumpChanged() {
    const dl::DumpIndex* ix = m_session->index();
    m_matches.clear();
    m_pendingFrame = 0xffffffffu;
    if (!ix) {
        m_bar->clearIterations();
        m_building = false;
        m_shown.reset();
        m_data.reset();
        m_widget->setTimeline(nullptr, nullptr, nullptr, nullptr);
        updateStatus();
        return;
    }
    const dl::AnalysisResult* a = m_session->analysis();
    const LoadedDumpPtr dump = m_session->dump();
    const std::optional<std::uint32_t> firstBad = a ? a->firstBadIteration : std::nullopt;
    const bool grown = (dump->live || (m_shown && m_shown->live)) && dump->path == m_runPath;
    const bool keep = grown && firstBad == m_runFirstBad;
    m_keepWindow = keep;
    m_runPath = dump->path;
    m_runFirstBad = firstBad;
    // The first bad iteration, else the first iteration (row 1, after "All").
    m_bar->setIterations(ix->iterations(), firstBad, tr("first overflow"), keep, 1);
    rebuild();
}

void TimelinePanel::rebuild() {
    LoadedDumpPtr dump = m_session->dump();
    if (!dump || !dump->index || !dump->states) return;
    if (dump->statesPending()) {  // its colours are the states: built once, with the verdict
        m_bar->setInfo(tr("The timeline follows the analysis…"));
        return;
    }
    dl::TimelineOptions opt = m_bar->options();
    opt.perStream = m_perStream->isChecked();
    m_building = true;
    m_bar->setInfo(tr("Building the timeline…"));
    // The job holds the dump, so the index it reads outlives a newer dump being opened meanwhile.
    m_builder->start([this, dump, opt](std::stop_token stop, const BackgroundTask::Post& post) {
        auto data = buildRunTimeline(*dump, *dump->states, opt, stop);
        if (data->cancelled) return;  // superseded by a newer build, which posts instead
        post([this, dump, data] {
            if (dump == m_session->dump()) onBuilt(dump, data);
        });
    });
}

void TimelinePanel::onBuilt(LoadedDumpPtr dump, std::shared_ptr<const dl::TimelineData> data) {
    m_building = false;
    // The same run grown: the window the user was looking at, unless it showed everything.
    const dl::TimelineViewport& vp = m_widget->viewport();
    const bool keepWindow =
        m_keepWindow && m_data && m_data->base == data->base && (vp.from() > vp.fullFrom() || vp.to() < vp.fullTo());
    m_keepWindow = false;
    const std::int64_t origin = vp.origin();
    const double from = vp.from(), to = vp.to();
    m_shown = std::move(dump);  // keeps the index the widget points into alive
    m_data = std::move(data);
    m_widget->setTimeline(m_data, m_shown->index.get(), m_shown->states.get(), m_shown->analysis.get());
    if (keepWindow) {
        const double shift = double(origin - vp.origin());
        m_widget->setWindow(from + shift, to + shift);
    }
    m_widget->setMatches(m_matches);
    emit matchesChanged();
    const bool one = m_data->opsShown == 1;  // "1 op", not "1 ops"
    // What the times are: plain .npy ops sit at their files' modification times, not at times the
    // dump wrote.
    bool byMtime = !m_shown->index->ranks.empty();
    for (const dl::RankInfo& r : m_shown->index->ranks) byMtime &= r.orderSource == "modification_time";
    QString info = m_data->base != dl::TimeBase::Timestamps
        ? (one ? tr("1 op in execution order (no timestamps)")
               : tr("%L1 ops in execution order (no timestamps)").arg(m_data->opsShown))
        : byMtime ? (one ? tr("1 op at its file's modification time")
                         : tr("%L1 ops ordered by file modification time").arg(m_data->opsShown))
                  : (one ? tr("1 op on dump timestamps") : tr("%L1 ops on dump timestamps").arg(m_data->opsShown));
    if (m_data->anyInferredEnd) info += tr(", durations inferred (no end times)");
    if (m_data->opsWithoutTime) info += tr(", %1 without a timestamp not shown").arg(m_data->opsWithoutTime);
    m_bar->setInfo(info);
    updateStatus();
    if (m_session->currentOp() != dl::kNoIndex) onSelection(m_session->currentOp());
    std::size_t lane = 0, item = 0;
    if (m_pendingFrame != 0xffffffffu && m_data->locate(m_pendingFrame, lane, item)) {
        m_widget->frameOp(m_pendingFrame);
        m_pendingFrame = 0xffffffffu;
    }
    emit timelineBuilt();
}

void TimelinePanel::setMatches(std::vector<quint32> ops) {
    m_matches = std::move(ops);
    m_widget->setMatches(m_matches);
    updateStatus();
    emit matchesChanged();
}

bool TimelinePanel::gotoMatch(bool backward) { return m_widget->gotoMatch(backward); }

void TimelinePanel::frameOp(quint32 op) {
    std::size_t lane = 0, item = 0;
    // Not built yet, being rebuilt, or the op is in another iteration (the selection switches to
    // it): framed when its timeline arrives.
    if (!m_data || m_building || !m_data->locate(op, lane, item)) {
        m_pendingFrame = op;
        return;
    }
    m_pendingFrame = 0xffffffffu;
    m_widget->frameOp(op);
}

void TimelinePanel::updateStatus() {
    // Short: the whole summaries are in the Details panel, where nothing cuts them.
    QStringList parts;
    if (!m_matches.empty())
        parts << (m_widget->matchOrder().size() == 1 ? tr("1 match (F3)")
                                                     : tr("%L1 matches (F3)").arg(m_widget->matchOrder().size()));
    if (m_widget->hasArea()) parts << tr("area: %L1 ops (Details)").arg(m_widget->areaSummary().ops);
    m_bar->setStatus(parts.join(QStringLiteral(" · ")));
}

void TimelinePanel::onSelection(quint32 op) {
    const dl::DumpIndex* ix = m_session->index();
    if (!ix) return;
    if (op >= ix->ops.size()) {  // selection cleared
        m_widget->clearSelection();
        return;
    }
    std::size_t lane = 0, item = 0;
    if (m_data && !m_data->locate(op, lane, item)) {
        // The op lives in another iteration: switch to it (rebuild selects it).
        QComboBox* it = m_bar->iterationChoice();
        const int i = it->findData(QVariant::fromValue(ix->ops[op].iteration));
        if (i >= 0 && i != it->currentIndex()) {
            it->setCurrentIndex(i);
            return;
        }
    }
    m_widget->selectOp(op);
}

}  // namespace dlui
