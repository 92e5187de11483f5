#include "ui/views/timeline/timeline_toolbar.h"

#include <QCheckBox>
#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QSignalBlocker>
#include <QToolButton>
#include <QVBoxLayout>
#include <algorithm>

#include "ui/views/elided_label.h"

namespace dlui {

TimelineToolbar::TimelineToolbar(QWidget* parent)
    : QWidget(parent),
      m_iteration(new QComboBox(this)),
      m_align(new QCheckBox(tr("Align rank clocks"), this)),
      m_fit(new QToolButton(this)),
      m_controls(new QHBoxLayout),
      m_legends(new QHBoxLayout),
      m_info(new ElidedLabel(this, Qt::ElideRight)),
      m_status(new ElidedLabel(this, Qt::ElideRight)) {
    m_align->setChecked(true);
    m_align->setToolTip(tr("Shift each rank by the clock offset the analysis estimated from Send/Receive pairs"));
    m_iteration->setSizeAdjustPolicy(QComboBox::AdjustToContents);  // "5 (first overflow)" at most
    m_iteration->setToolTip(tr("Iteration shown on the timeline"));
    m_fit->setText(tr("Show all"));
    m_fit->setToolTip(tr("Show the whole iteration (0)"));
    // Two short rows rather than one wide one, so the panel fits a laptop screen beside the docks:
    // the controls, then what is shown (elided when narrow), the status and the legend.
    auto* bar = new QHBoxLayout;
    bar->setContentsMargins(6, 4, 6, 0);
    bar->addWidget(new QLabel(tr("Iteration:"), this));
    bar->addWidget(m_iteration);
    bar->addWidget(m_align);
    m_controls->setContentsMargins(0, 0, 0, 0);
    bar->addLayout(m_controls);
    bar->addWidget(m_fit);
    bar->addStretch(1);
    for (QLabel* l : {m_info, m_status}) {
        l->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
        l->setMinimumWidth(40);
    }
    m_info->setObjectName(QStringLiteral("timelineInfo"));
    m_status->setObjectName(QStringLiteral("timelineStatus"));
    m_status->hide();
    auto* bar2 = new QHBoxLayout;
    bar2->setContentsMargins(6, 0, 6, 2);
    bar2->addWidget(m_info, 1);
    bar2->addWidget(m_status, 2);
    m_legends->setContentsMargins(0, 0, 0, 0);
    bar2->addLayout(m_legends);
    auto* lay = new QVBoxLayout(this);
    lay->setContentsMargins(0, 0, 0, 0);
    lay->setSpacing(0);
    lay->addLayout(bar);
    lay->addLayout(bar2);
    connect(m_iteration, &QComboBox::currentIndexChanged, this, &TimelineToolbar::optionsChanged);
    connect(m_align, &QCheckBox::toggled, this, &TimelineToolbar::optionsChanged);
    connect(m_fit, &QToolButton::clicked, this, &TimelineToolbar::fitRequested);
}

void TimelineToolbar::addControl(QWidget* w) { m_controls->addWidget(w); }

void TimelineToolbar::addLegend(QWidget* w) { m_legends->addWidget(w); }

void TimelineToolbar::setInfo(const QString& text) { static_cast<ElidedLabel*>(m_info)->setFullText(text); }

QString TimelineToolbar::info() const { return static_cast<const ElidedLabel*>(m_info)->fullText(); }

void TimelineToolbar::setStatus(const QString& text) {
    static_cast<ElidedLabel*>(m_status)->setFullText(text);
    m_status->setVisible(!text.isEmpty());
}

QString TimelineToolbar::status() const { return static_cast<const ElidedLabel*>(m_status)->fullText(); }

void TimelineToolbar::setIterations(const std::vector<std::uint32_t>& iterations, std::optional<std::uint32_t> marked,
                                    const QString& markText, bool keepCurrent, int fallback) {
    QSignalBlocker block(m_iteration);
    const QVariant keep = keepCurrent ? m_iteration->currentData() : QVariant();
    m_iteration->clear();
    m_iteration->addItem(tr("All"), QVariant());
    int pick = -1;
    for (std::uint32_t it : iterations) {
        const bool mark = marked && *marked == it;
        m_iteration->addItem(mark ? QStringLiteral("%1 (%2)").arg(it).arg(markText) : QString::number(it),
                             QVariant::fromValue(it));
        if (mark) pick = m_iteration->count() - 1;
    }
    const int kept = keep.isValid() ? m_iteration->findData(keep) : -1;
    m_iteration->setCurrentIndex(kept >= 0       ? kept
                                     : pick >= 0 ? pick
                                                 : std::clamp(fallback, 0, m_iteration->count() - 1));
}

void TimelineToolbar::clearIterations() {
    QSignalBlocker block(m_iteration);
    m_iteration->clear();
}

bool TimelineToolbar::showIteration(std::uint32_t it) {
    const int i = m_iteration->findData(QVariant::fromValue(it));
    if (i < 0) return false;
    if (i != m_iteration->currentIndex()) m_iteration->setCurrentIndex(i);
    return true;
}

dl::TimelineOptions TimelineToolbar::options() const {
    dl::TimelineOptions opt;
    const QVariant v = m_iteration->currentData();
    if (v.isValid()) opt.iteration = v.value<std::uint32_t>();
    opt.alignClocks = m_align->isChecked();
    return opt;
}

std::shared_ptr<const dl::TimelineData> buildRunTimeline(const LoadedDump& run, const dl::OpStates& states,
                                                         const dl::TimelineOptions& options, std::stop_token stop,
                                                         bool chainArrows) {
    dl::TimelineOptions o = options;
    o.stop = stop;  // a superseded build stops early and comes back marked cancelled
    dl::TimelineData d = dl::buildTimeline(*run.index, run.analysis.get(), states, o);
    if (!chainArrows) d.arrows.clear();
    return std::make_shared<const dl::TimelineData>(std::move(d));
}

}  // namespace dlui
