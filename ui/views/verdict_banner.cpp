#include "ui/views/verdict_banner.h"

#include <QGuiApplication>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <algorithm>

#include "ui/models/dump_session.h"
#include "ui/style/op_names.h"
#include "ui/style/theme.h"

namespace dlui {

VerdictBanner::VerdictBanner(DumpSession* session, QWidget* parent)
    : QFrame(parent),
      m_session(session),
      m_label(new QLabel(this)),
      m_jump(new QPushButton(tr("Jump to origin"), this)) {
    setObjectName(QStringLiteral("verdictBanner"));
    m_label->setTextFormat(Qt::RichText);
    m_label->setWordWrap(true);
    m_jump->setToolTip(tr("Select the first overflowing op on the timeline, in the table and the tensor panel"));
    auto* lay = new QHBoxLayout(this);
    lay->setContentsMargins(10, 6, 10, 6);
    lay->addWidget(m_label, 1);
    lay->addWidget(m_jump);
    connect(m_jump, &QPushButton::clicked, this, &VerdictBanner::jumpToOrigin);
    connect(m_session, &DumpSession::dumpChanged, this, &VerdictBanner::refresh);
    refresh();
}

QString VerdictBanner::text() const { return m_label->text(); }

void VerdictBanner::setTone(const theme::Tone& tone) {
    // The application palette: a styled frame's own palette() holds its last tone, not the theme.
    setStyleSheet(theme::toneStyle(QStringLiteral("verdictBanner"), tone, QGuiApplication::palette()));
}

void VerdictBanner::jumpToOrigin() {
    const dl::AnalysisResult* a = m_session->analysis();
    if (!a || !a->firstOverflow) return;
    m_session->select(a->firstOverflow->op, a->firstOverflow->tensor);
    emit jumpedToOrigin(a->firstOverflow->op);
}

void VerdictBanner::resizeEvent(QResizeEvent* e) {
    QFrame::resizeEvent(e);
    refresh();
}

void VerdictBanner::refresh() {
    m_label->setToolTip({});
    const dl::DumpIndex* ix = m_session->index();
    const dl::AnalysisResult* a = m_session->analysis();
    m_jump->setEnabled(a && a->firstOverflow);
    if (!ix) {
        m_label->clear();
        setTone(theme::kToneNeutral);
        return;
    }
    if (!a) {
        m_label->setText(tr("Indexed %L1 ops, %L2 tensors — analysing…").arg(ix->ops.size()).arg(ix->tensors.size()));
        setTone(theme::kToneNeutral);
        return;
    }
    const QString pct = QString::number(a->nearLimitThreshold * 100, 'f', 0);
    const QString nearLimit = a->nearLimitTotal == 1  // "1 tensor", not "1 tensors"
        ? tr("1 tensor near the fp16 limit (≥ %1% of 65504)").arg(pct)
        : tr("%L1 tensors near the fp16 limit (≥ %2% of 65504)").arg(a->nearLimitTotal).arg(pct);
    const bool live = m_session->dump()->live;  // a watched folder: the verdict of the files so far
    if (a->noData && live) {
        m_label->setText(tr("<b>Watching</b> %1: nothing readable yet; the verdict follows as files land.")
                             .arg(QString::fromStdString(ix->root).toHtmlEscaped()));
        setTone(theme::kToneNeutral);
        return;
    }
    if (a->noData) {
        // Neither clean nor overflow: say what could not be read instead of an all-clear.
        QString reasons;
        for (std::size_t i = 0; i < a->fileWarnings.size() && i < 3; ++i)
            reasons += QStringLiteral("<br><small>%1: %2</small>")
                           .arg(QString::fromStdString(a->fileWarnings[i].first).toHtmlEscaped(),
                                QString::fromStdString(a->fileWarnings[i].second).toHtmlEscaped());
        if (a->fileWarnings.size() > 3)
            reasons += tr("<br><small>… and %L1 more (see the Issues dock)</small>").arg(a->fileWarnings.size() - 3);
        if (a->fileWarnings.empty())
            reasons = tr("<br><small>No tensor file, statistic.csv or overflow record was found.</small>");
        m_label->setText(tr("<b>Nothing readable</b> in %1: no verdict.%2")
                             .arg(QString::fromStdString(ix->root).toHtmlEscaped(), reasons));
        setTone(theme::kToneMuted);
        return;
    }
    // Two runs' ranks in one folder share lanes and the verdict: the banner names them (issue 27).
    QString runs;
    if (!a->separateRuns.empty()) {
        QStringList names;
        for (const std::string& r : a->separateRuns) names << QString::fromStdString(r).toHtmlEscaped();
        runs = tr(" · <b>%1 separate runs</b> in this folder (%2): open each on its own")
                   .arg(a->separateRuns.size())
                   .arg(names.join(QStringLiteral(", ")));
    }
    if (!a->overflow || !a->firstOverflow) {
        if (a->unreadableFiles) {
            m_label->setText(
                tr("<b>Clean among %L1 readable tensors</b>; %L2 file(s) could not be read (see the Issues dock). "
                   "%3.%4")
                    .arg(a->readableTensors)
                    .arg(a->unreadableFiles)
                    .arg(nearLimit, runs));
            setTone(theme::kToneWarn);
            return;
        }
        m_label->setText(live ? tr("<b>Clean so far</b> (watching): no fp16 overflow in %L1 tensors. %2.%3")
                                    .arg(a->readableTensors)
                                    .arg(nearLimit, runs)
                              : tr("<b>Clean</b>: no fp16 overflow in %L1 tensors. %2.%3")
                                    .arg(a->readableTensors)
                                    .arg(nearLimit, runs));
        setTone(theme::kToneOk);
        return;
    }
    const dl::OverflowPoint& p = *a->firstOverflow;
    const dl::OpRecord& o = ix->ops[p.op];
    const OpNames names = opNames(*ix, o);
    // The short op in the headline; its scope on the second line, elided from the left so that
    // its nearest (most telling) components stay, the whole name in the tooltip.
    const QFontMetrics fm(m_label->font());
    const int room = m_label->width() - fm.horizontalAdvance(QStringLiteral(" · ") + nearLimit) - 12;
    const QString scope =
        names.scope.isEmpty() ? QString() : fm.elidedText(names.scope, Qt::ElideLeft, std::max(room, 60));
    // Files that could not be read may hold an earlier overflow: the verdict says so.
    const QString unreadable =
        (!a->unreadableFiles ? QString()
             : a->unreadableFiles == 1
             ? tr(" · <b>1 file could not be read</b> (see Issues)")
             : tr(" · <b>%L1 files could not be read</b> (see Issues)").arg(a->unreadableFiles)) +
        runs;
    const QString headline = live ? tr("<b>First overflow so far</b> (watching)") : tr("<b>First overflow</b>");
    m_label->setText(
        tr("%11: <b>%1</b> <i>%2</i> on rank %3, stage %4, iteration %5 (%6, %7)%10<br>"
           "<small>%8%9</small>")
            .arg(QString::fromStdString(ix->strings.str(o.type)).toHtmlEscaped(), names.shortName.toHtmlEscaped())
            .arg(p.rank)
            .arg(p.stage < 0 ? QStringLiteral("?") : QString::number(p.stage))
            .arg(p.iteration)
            .arg(QString::fromLatin1(dl::anomalyKindName(p.kind)),
                 QString::fromLatin1(dl::persistenceName(a->persistence)),
                 scope.isEmpty() ? QString() : scope.toHtmlEscaped() + QStringLiteral(" · "), nearLimit, unreadable,
                 headline));
    m_label->setToolTip(names.full);
    setTone(theme::kToneAlarm);
}

}  // namespace dlui
