// WatchStatus, the status bar's line while a folder is watched: files indexed against files seen
// and how long the oldest being written has waited, the age of the last landing, and the refresh
// of that age that stops by itself (a watch where nothing lands leaves the app idle).
#include <QLocale>
#include <QTest>

#include "ui/views/watch_status.h"

using namespace dlui;

class TstWatchStatus : public QObject {
    Q_OBJECT
private slots:
    void sayWhatIsWatchedAndHowFarBehind() {
        WatchStatus s;
        s.begin(QStringLiteral("/data/job/dump"), false);
        QCOMPARE(s.fullText(), QStringLiteral("Watching /data/job/dump · waiting for the folder to appear"));
        QVERIFY(!s.refreshPending());
        s.setWatching(QStringLiteral("/data/job/dump"));
        QVERIFY2(s.fullText().endsWith(QStringLiteral("no complete file yet")), qPrintable(s.fullText()));
        WatchProgress p;
        p.filesIndexed = 1200;
        p.filesBeingWritten = 6;
        p.behindMs = 1200;
        p.ranks = QStringLiteral("0-3");
        p.iterations = QStringLiteral("0-4");
        s.setProgress(p);
        const QLocale loc;  // the numbers as the user's locale writes them
        QVERIFY2(s.fullText().contains(QStringLiteral("%1 of %2 files indexed, 6 being written (oldest %3 s)")
                                           .arg(loc.toString(1200), loc.toString(1206), loc.toString(1.2, 'f', 1))),
                 qPrintable(s.fullText()));
        QVERIFY2(s.fullText().contains(QStringLiteral("ranks 0-3, iterations 0-4")), qPrintable(s.fullText()));
        QVERIFY2(s.fullText().contains(QStringLiteral("last file landed 0 s ago")), qPrintable(s.fullText()));
        QVERIFY(s.refreshPending());  // the age changes every second for the first minute
        p.filesIndexed = 1206;
        p.filesBeingWritten = 0;
        s.setProgress(p);
        QVERIFY2(s.fullText().contains(QStringLiteral("all %1 files indexed").arg(loc.toString(1206))),
                 qPrintable(s.fullText()));
        s.setStopped(QStringLiteral("clean so far: 9 tensors"), {});
        QCOMPARE(s.fullText(), QStringLiteral("Stopped watching /data/job/dump · clean so far: 9 tensors"));
        QVERIFY(!s.refreshPending());
    }

    void theAgeRefreshBacksOffThenStops() {
        WatchStatus s;
        s.begin(QStringLiteral("/d"), true);
        WatchProgress p;
        p.filesIndexed = 1;
        s.setProgress(p);
        const QDateTime now = QDateTime::currentDateTime();
        s.setLastLanded(now.addSecs(-90));
        QVERIFY2(s.fullText().contains(QStringLiteral("last file landed 1 min ago")), qPrintable(s.fullText()));
        QVERIFY(s.refreshPending());  // once a minute up to ten
        s.setLastLanded(now.addSecs(-3600));
        QVERIFY2(s.fullText().contains(QStringLiteral("last file landed at ")), qPrintable(s.fullText()));
        QVERIFY(!s.refreshPending());  // the clock time no longer changes: no timer
    }

    void ageText() {
        const QDateTime at(QDate(2026, 1, 2), QTime(16, 42, 5));
        QCOMPARE(WatchStatus::ageText(0, at), QStringLiteral("0 s ago"));
        QCOMPARE(WatchStatus::ageText(59, at), QStringLiteral("59 s ago"));
        QCOMPARE(WatchStatus::ageText(60, at), QStringLiteral("1 min ago"));
        QCOMPARE(WatchStatus::ageText(599, at), QStringLiteral("9 min ago"));
        QVERIFY(WatchStatus::ageText(600, at).startsWith(QStringLiteral("at 16:42")));
    }
};

QTEST_MAIN(TstWatchStatus)
#include "test_watch_status.moc"
