#include "ui/views/compare/compare_summary_bar.h"

#include <QFont>
#include <QGridLayout>
#include <QGuiApplication>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSettings>
#include <QStringList>
#include <QToolButton>

#include "ui/models/compare_session.h"
#include "ui/style/state_colors.h"
#include "ui/style/theme.h"

namespace dlui {

CompareSummaryBar::CompareSummaryBar(CompareSession* session, QWidget* parent)
    : QFrame(parent),
      m_session(session),
      m_story(new QLabel(this)),
      m_classes(new QLabel(this)),
      m_label(new QLabel(this)),
      m_detailsBox(new QWidget(this)) {
    m_reason = new QLabel(m_detailsBox);
    m_counts = new QLabel(m_detailsBox);
    m_threshold = new QLineEdit(m_detailsBox);
    m_apply = new QPushButton(tr("Apply"), m_detailsBox);
    m_thresholdError = new QLabel(m_detailsBox);
    m_jump = new QPushButton(tr("Jump to first divergence"), this);
    m_details = new QToolButton(this);
    setObjectName(QStringLiteral("compareSummary"));
    m_story->setObjectName(QStringLiteral("compareStory"));
    m_story->setWordWrap(true);
    m_story->setTextInteractionFlags(Qt::TextSelectableByMouse);
    QFont big = m_story->font();
    big.setBold(true);
    big.setPointSizeF(big.pointSizeF() * 1.1);
    m_story->setFont(big);
    m_classes->setObjectName(QStringLiteral("compareClasses"));
    m_classes->setTextFormat(Qt::RichText);
    m_classes->setWordWrap(true);
    m_label->setTextFormat(Qt::RichText);
    m_label->setWordWrap(true);
    m_label->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_reason->setTextFormat(Qt::RichText);
    m_reason->setWordWrap(true);
    m_reason->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_counts->setTextFormat(Qt::RichText);
    m_counts->setWordWrap(true);
    m_details->setObjectName(QStringLiteral("compareDetails"));
    m_details->setText(tr("Details"));
    m_details->setCheckable(true);
    m_details->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
    m_details->setToolTip(tr("Show or hide why, the match counts and the divergence thresholds"));
    m_threshold->setToolTip(
        tr("Divergence tests, as for dumplens-cli compare --threshold: ulps, precision, cosine, cosine_alone, "
           "abs_floor, max_abs, max_rel, "
           "one_thousandth, five_thousandth, stats_rel (a number or off), nan_inf (on/off)"));
    QPalette errorPalette = m_thresholdError->palette();
    errorPalette.setColor(QPalette::WindowText, theme::textFor(theme::kTextError, palette()));
    m_thresholdError->setPalette(errorPalette);
    m_jump->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_J));
    m_jump->setToolTip(tr("Select the first diverged tensor (Ctrl+J)"));
    auto* grid = new QGridLayout(this);
    grid->setContentsMargins(10, 4, 10, 4);
    grid->setVerticalSpacing(2);
    grid->addWidget(m_story, 0, 0);
    grid->addWidget(m_jump, 0, 1, Qt::AlignTop);
    grid->addWidget(m_details, 0, 2, Qt::AlignTop);
    grid->addWidget(m_classes, 1, 0, 1, 3);
    grid->addWidget(m_label, 2, 0, 1, 3);
    grid->addWidget(m_detailsBox, 3, 0, 1, 3);
    grid->setColumnStretch(0, 1);
    auto* details = new QGridLayout(m_detailsBox);
    details->setContentsMargins(0, 0, 0, 0);
    details->setVerticalSpacing(2);
    details->addWidget(m_reason, 0, 0, 1, 3);
    details->addWidget(m_counts, 1, 0, 1, 3);
    details->addWidget(new QLabel(tr("Thresholds:"), m_detailsBox), 2, 0);
    details->addWidget(m_threshold, 2, 1);
    details->addWidget(m_apply, 2, 2);
    details->addWidget(m_thresholdError, 3, 1, 1, 2);
    details->setColumnStretch(1, 1);
    connect(m_details, &QToolButton::toggled, this, [this](bool on) {
        setDetailsShown(on);
        QSettings().setValue(QStringLiteral("compare/summaryDetails"), on);
    });
    setDetailsShown(QSettings().value(QStringLiteral("compare/summaryDetails"), false).toBool());
    connect(m_apply, &QPushButton::clicked, this, &CompareSummaryBar::applyThresholds);
    connect(m_threshold, &QLineEdit::returnPressed, this, &CompareSummaryBar::applyThresholds);
    connect(m_jump, &QPushButton::clicked, m_session, &CompareSession::selectFirstDivergence);
    connect(m_session, &CompareSession::comparisonChanged, this, &CompareSummaryBar::refresh);
    refresh();
}

QString CompareSummaryBar::text() const {
    return m_story->text() + QLatin1Char('\n') + m_label->text() + QLatin1Char('\n') + m_reason->text() +
        QLatin1Char('\n') + m_counts->text();
}

bool CompareSummaryBar::detailsShown() const { return m_details->isChecked(); }

void CompareSummaryBar::setDetailsShown(bool shown) {
    const QSignalBlocker block(m_details);
    m_details->setChecked(shown);
    m_details->setArrowType(shown ? Qt::DownArrow : Qt::RightArrow);
    m_detailsBox->setVisible(shown);
}

QString CompareSummaryBar::story() const { return m_story->text(); }

QString CompareSummaryBar::classCounts() const {
    const dl::RunComparison* c = m_session->comparison();
    QStringList parts;
    if (c)
        for (int v = 0; v < dl::kVerdictCount; ++v)
            if (c->counts[std::size_t(v)])
                parts << QStringLiteral("%1 %L2").arg(verdictText(dl::Verdict(v))).arg(c->counts[std::size_t(v)]);
    return parts.join(QStringLiteral(" · "));
}

void CompareSummaryBar::setTone(const QString& bg, const QString& border) {
    setStyleSheet(theme::toneStyle(QStringLiteral("compareSummary"),
                                   {QColor::fromString(bg), QColor::fromString(border)}, QGuiApplication::palette()));
}

void CompareSummaryBar::showError(const QString& message) {
    setTone(theme::css(theme::kToneAlarm.background), theme::css(theme::kToneAlarm.border));
    m_label->setText(tr("<b>The comparison could not be made.</b> %1").arg(message.toHtmlEscaped()));
    m_story->clear();
    m_classes->clear();
    m_reason->clear();
    m_counts->clear();
    m_jump->setEnabled(false);
}

void CompareSummaryBar::refresh() {
    const dl::RunComparison* c = m_session->comparison();
    m_thresholdError->clear();
    m_thresholdError->setVisible(false);
    if (!c) {
        setTone(theme::css(theme::kToneNeutral.background), theme::css(theme::kToneNeutral.border));
        m_label->setText(tr("<i>No comparison yet.</i>"));
        m_story->clear();
        m_classes->clear();
        m_reason->clear();
        m_counts->clear();
        m_jump->setEnabled(false);
        return;
    }
    m_threshold->setText(QString::fromStdString(dl::thresholdSpec(c->thresholds)));
    m_story->setText(QString::fromStdString(c->story));
    // Tensors per class, each behind a swatch of the colour the table paints it with.
    QStringList classes;
    for (int v = 0; v < dl::kVerdictCount; ++v) {
        const std::size_t n = c->counts[std::size_t(v)];
        if (!n) continue;
        classes << tr("<span style=\"background:%1\">&nbsp;&nbsp;&nbsp;</span>&nbsp;%2 <b>%L3</b>")
                       .arg(theme::css(verdictColor(dl::Verdict(v))), verdictText(dl::Verdict(v)))
                       .arg(n);
    }
    m_classes->setText(classes.isEmpty() ? QString() : classes.join(QStringLiteral(" &nbsp;·&nbsp; ")));
    const dl::DumpIndex &a = *m_session->indexA(), &b = *m_session->indexB();
    if (c->firstDivergence >= 0) {
        const dl::TensorPair& p = c->alignment.tensors[std::size_t(c->firstDivergence)];
        const dl::TensorRecord& ta = a.tensors[p.a];
        const dl::TensorComparison& r = c->rows[std::size_t(c->firstDivergence)];
        setTone(theme::css(theme::kToneAlarm.background), theme::css(theme::kToneAlarm.border));
        m_label->setText(tr("<b>First divergence</b> [%4]: %1 · %2 (B: %3)")
                             .arg(m_session->opLabel(false, ta.op).toHtmlEscaped(),
                                  QString::fromStdString(a.tensorLabel(ta)),
                                  QString::fromStdString(b.strings.str(b.ops[b.tensors[p.b].op].name)).toHtmlEscaped(),
                                  verdictText(r.verdict)));
        m_reason->setText(tr("<small>%1 · %2</small>")
                              .arg(QString::fromStdString(r.reason).toHtmlEscaped(),
                                   QString::fromStdString(c->orderEvidence).toHtmlEscaped()));
        m_jump->setEnabled(true);
    } else if (c->rows.empty()) {
        // Nothing compared is no agreement (the CLI fails on it): a warning, with why.
        setTone(theme::css(theme::kToneWarn.background), theme::css(theme::kToneWarn.border));
        const auto& al = c->alignment;
        QString why = al.ops.empty()
            ? tr("no op of run A could be matched with run B (A has %L1 ops, B has %L2)")
                  .arg(a.ops.size())
                  .arg(b.ops.size())
            : tr("%L1 ops matched, but none of their tensors pair up (%L2 tensors of A and %L3 of B "
                 "without a counterpart)")
                  .arg(al.ops.size())
                  .arg(al.onlyTensorsA)
                  .arg(al.onlyTensorsB);
        QStringList notes;
        for (std::size_t i = 0; i < c->warnings.size() && i < 3; ++i)
            notes << QString::fromStdString(c->warnings[i]).toHtmlEscaped();
        m_label->setText(tr("<b>Nothing was compared</b>: %1.").arg(why.toHtmlEscaped()));
        m_reason->setText(notes.isEmpty() ? QString()
                                          : QStringLiteral("<small>%1</small>").arg(notes.join(QStringLiteral(" · "))));
        m_jump->setEnabled(false);
    } else {
        setTone(theme::css(theme::kToneOk.background), theme::css(theme::kToneOk.border));
        m_label->setText(tr("<b>No divergence</b>: every matched tensor is within the thresholds."));
        m_reason->clear();
        m_jump->setEnabled(false);
    }
    const auto& al = c->alignment;
    // Small print: the story and the classes above say what matters; this is the bookkeeping.
    m_counts->setText(
        tr("<small>%L1 matched tensors (%L2 from data, %L3 from statistics) · <b>%L4 diverged</b> · ops: %L5 matched "
           "(%L6 exact, %L7 tolerant, %L8 pinned), <b>%L9 only in A, %L10 only in B</b> · tensors without a "
           "counterpart: %L11 in A, %L12 in B · tests: %13</small>")
            .arg(c->rows.size())
            .arg(c->fromData)
            .arg(c->fromStats)
            .arg(c->diverged)
            .arg(al.ops.size())
            .arg(al.exactOps)
            .arg(al.tolerantOps)
            .arg(al.pinnedOps)
            .arg(al.onlyOpsA.size())
            .arg(al.onlyOpsB.size())
            .arg(al.onlyTensorsA)
            .arg(al.onlyTensorsB)
            .arg(QString::fromStdString(dl::describeThresholds(c->thresholds)).toHtmlEscaped()));
}

void CompareSummaryBar::applyThresholds() {
    dl::CompareThresholds t;
    std::string error;
    if (!dl::parseThresholds(m_threshold->text().trimmed().toStdString(), t, error)) {
        m_thresholdError->setText(QString::fromStdString(error));
        m_thresholdError->setVisible(true);
        setDetailsShown(true);  // where the field and its error are
        return;
    }
    m_session->setThresholds(t);
    m_session->selectFirstDivergence();
}

}  // namespace dlui
