#include "ui/views/watch_page.h"

#include <QLabel>
#include <QLocale>
#include <QPushButton>
#include <QVBoxLayout>

#include "ui/jobs/dump_watcher.h"

namespace dlui {

WatchPage::WatchPage(QWidget* parent)
    : QWidget(parent),
      m_title(new QLabel(this)),
      m_state(new QLabel(this)),
      m_detail(new QLabel(this)),
      m_stop(new QPushButton(tr("Stop watching"), this)) {
    setObjectName(QStringLiteral("watchPage"));
    for (QLabel* l : {m_title, m_state, m_detail}) {
        l->setWordWrap(true);
        l->setTextInteractionFlags(Qt::TextSelectableByMouse);
    }
    m_state->setObjectName(QStringLiteral("watchState"));
    auto* col = new QVBoxLayout;
    col->addStretch(1);
    col->addWidget(m_title);
    col->addWidget(m_state);
    col->addWidget(m_detail);
    col->addSpacing(8);
    col->addWidget(m_stop, 0, Qt::AlignLeft);
    col->addStretch(2);
    auto* outer = new QHBoxLayout(this);
    outer->addStretch(1);
    outer->addLayout(col, 3);
    outer->addStretch(1);
    connect(m_stop, &QPushButton::clicked, this, &WatchPage::stopRequested);
}

void WatchPage::begin(const QString& dir, bool exists) {
    m_title->setText(tr("<b>Watching</b> %1").arg(dir.toHtmlEscaped()));
    m_state->setText(exists
                         ? tr("Looking at the files already there…")
                         : tr("Waiting for the folder to appear. It is followed from the moment the job creates it."));
    m_detail->setText(
        tr("The timeline, the table and the verdict show each file once it is complete. Nothing is "
           "ever written into the folder."));
    m_stop->setEnabled(true);
    m_stop->show();
}

void WatchPage::setWatching(const QString& dirAbs, const QString& mode) {
    m_title->setText(tr("<b>Watching</b> %1").arg(dirAbs.toHtmlEscaped()));
    m_state->setText(tr("Waiting for the first complete dump files…"));
    m_detail->setText(mode == QLatin1String("inotify")
                          ? tr("Kernel file events (inotify) tell when a file is written and closed.")
                          : tr("Rescanning the folder (no kernel file events here): a file counts as complete once "
                               "its size stays still."));
}

void WatchPage::setProgress(const WatchProgress& p) {
    const QLocale loc;
    if (p.filesIndexed == 0 && p.filesBeingWritten)
        m_state->setText(
            p.filesBeingWritten == 1
                ? tr("1 file is being written; none complete yet.")
                : tr("%1 files are being written; none complete yet.").arg(loc.toString(p.filesBeingWritten)));
    else if (p.filesIndexed)
        m_state->setText(tr("%1 complete files indexed, no tensor among them yet.").arg(loc.toString(p.filesIndexed)));
}

void WatchPage::setStopped(const QString& summary, const QString& error) {
    m_state->setText(error.isEmpty() ? tr("Stopped watching: %1.").arg(summary.toHtmlEscaped())
                                     : tr("<b>Cannot watch</b>: %1").arg(error.toHtmlEscaped()));
    m_stop->hide();
}

QString WatchPage::stateText() const { return m_state->text(); }

}  // namespace dlui
