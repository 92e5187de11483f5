#include "ui/views/watch_status.h"

#include <QDir>
#include <QLocale>

namespace dlui {

WatchStatus::WatchStatus(QWidget* parent) : ElidedLabel(parent, Qt::ElideRight) {
    setObjectName(QStringLiteral("watchStatus"));
    m_tick.setSingleShot(true);
    connect(&m_tick, &QTimer::timeout, this, &WatchStatus::render);
}

void WatchStatus::begin(const QString& dir, bool exists) {
    m_dir = QDir::toNativeSeparators(dir);
    m_state = exists ? State::Watching : State::Waiting;
    m_haveProgress = false;
    m_progress = {};
    m_lastLanded = {};
    m_stopped.clear();
    render();
}

void WatchStatus::setWatching(const QString& dirAbs) {
    m_dir = QDir::toNativeSeparators(dirAbs);
    m_state = State::Watching;
    render();
}

void WatchStatus::setProgress(const WatchProgress& p) {
    // A progress event follows files that completed: the index grew (or changed) just now.
    if (!m_haveProgress || p.filesIndexed != m_progress.filesIndexed || p.tensors != m_progress.tensors)
        m_lastLanded = QDateTime::currentDateTime();
    m_progress = p;
    m_haveProgress = true;
    render();
}

void WatchStatus::setLastLanded(const QDateTime& at) {
    m_lastLanded = at;
    render();
}

void WatchStatus::setStopped(const QString& summary, const QString& error) {
    m_state = State::Stopped;
    m_stopped = error.isEmpty() ? summary : error;
    render();
}

void WatchStatus::clear() {
    m_tick.stop();
    m_haveProgress = false;
    m_lastLanded = {};
    setFullText({});
}

QString WatchStatus::ageText(qint64 seconds, const QDateTime& at) {
    if (seconds < 60) return tr("%1 s ago").arg(std::max<qint64>(seconds, 0));
    if (seconds < 600) return tr("%1 min ago").arg(seconds / 60);
    return tr("at %1").arg(QLocale().toString(at.time(), QLocale::ShortFormat));
}

void WatchStatus::render() {
    m_tick.stop();
    const QLocale loc;
    QString text;
    switch (m_state) {
        case State::Waiting:
            text = tr("Watching %1 · waiting for the folder to appear").arg(m_dir);
            break;
        case State::Stopped:
            text = tr("Stopped watching %1 · %2").arg(m_dir, m_stopped);
            break;
        case State::Watching: {
            text = tr("Watching %1").arg(m_dir);
            if (!m_haveProgress) {
                text += tr(" · no complete file yet");
                break;
            }
            const WatchProgress& p = m_progress;
            const quint64 seen = p.filesIndexed + p.filesBeingWritten;
            text += p.filesBeingWritten
                ? tr(" · %1 of %2 files indexed, %3 being written (oldest %4 s)")
                      .arg(loc.toString(p.filesIndexed), loc.toString(seen), loc.toString(p.filesBeingWritten),
                           loc.toString(p.behindMs / 1000.0, 'f', 1))
                : tr(" · all %1 files indexed").arg(loc.toString(p.filesIndexed));
            text += tr(" · ranks %1, iterations %2").arg(p.ranks, p.iterations);
            if (m_lastLanded.isValid()) {
                const qint64 age = m_lastLanded.secsTo(QDateTime::currentDateTime());
                text += tr(" · last file landed %1").arg(ageText(age, m_lastLanded));
                // Next change of the age shown; none once it shows the clock time.
                if (age < 60)
                    m_tick.start(1000);
                else if (age < 600)
                    m_tick.start(int(60 - age % 60) * 1000);
            }
            break;
        }
    }
    setFullText(text);
}

}  // namespace dlui
