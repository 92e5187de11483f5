#pragma once
// The status bar's account of a watch: what is watched and how far behind the writer it is —
// files indexed against files seen (those being written, and how long the oldest has waited), and
// the time since the last file landed. That age is kept current by a one-shot timer that backs
// off (every second for the first minute, every minute up to ten) and then stops, showing the
// clock time instead: a watch where nothing lands leaves the app idle.
#include <QDateTime>
#include <QTimer>

#include "ui/jobs/dump_watcher.h"
#include "ui/views/elided_label.h"

namespace dlui {

class WatchStatus : public ElidedLabel {
    Q_OBJECT
public:
    explicit WatchStatus(QWidget* parent = nullptr);
    void begin(const QString& dir, bool exists);
    void setWatching(const QString& dirAbs);
    void setProgress(const WatchProgress& p);  // the index grew: the last landing is now
    // When the last file landed (setProgress makes it now; a test sets an older one).
    void setLastLanded(const QDateTime& at);
    void setStopped(const QString& summary, const QString& error);
    void clear();  // no watch: no text, no refresh pending
    // The age of the last landing as shown ("3 s ago", "4 min ago", "at 16:42"); for tests.
    static QString ageText(qint64 seconds, const QDateTime& at);
    bool refreshPending() const { return m_tick.isActive(); }

private:
    void render();

    QString m_dir;
    enum class State { Waiting, Watching, Stopped } m_state = State::Waiting;
    WatchProgress m_progress;
    bool m_haveProgress = false;
    QDateTime m_lastLanded;  // when the index last grew
    QString m_stopped;
    QTimer m_tick;  // single shot, re-armed by render() while the age still changes
};

}  // namespace dlui
