// BackgroundTask is dl::LatestJob (whose superseding, stopping and dropping are tested without
// Qt in tests/core/util/test_latest_job.cpp, under TSan) with Qt's event loop as the way back. What is
// Qt's here: a post runs on the GUI thread from the event loop, and deleting the task drops a
// post already queued, as well as what its job posts later.
#include <QCoreApplication>
#include <QThread>
#include <QtTest>
#include <future>
#include <latch>
#include <memory>

#include "ui/jobs/background_task.h"

using dlui::BackgroundTask;

class TstBackgroundTask : public QObject {
    Q_OBJECT
private slots:
    void postsRunOnTheGuiThreadFromTheEventLoop();
    void deletingTheTaskDropsQueuedAndLaterPosts();
};

void TstBackgroundTask::postsRunOnTheGuiThreadFromTheEventLoop() {
    BackgroundTask task;
    QThread* ranOn = nullptr;
    QThread* jobThread = nullptr;
    std::promise<void> posted;
    task.start([&](std::stop_token, const BackgroundTask::Post& post) {
        jobThread = QThread::currentThread();
        post([&ranOn] { ranOn = QThread::currentThread(); });
        posted.set_value();
    });
    posted.get_future().wait();
    QCOMPARE(ranOn, nullptr);  // queued, not run on the job's thread
    QCoreApplication::processEvents();
    QCOMPARE(ranOn, QCoreApplication::instance()->thread());
    QVERIFY(jobThread != ranOn);
    dlui::waitForBackgroundJobs();
    QVERIFY(!task.isRunning());
}

void TstBackgroundTask::deletingTheTaskDropsQueuedAndLaterPosts() {
    int shown = 0;
    auto release = std::make_shared<std::latch>(1);
    std::promise<void> posted;
    std::promise<bool> sawStop;
    auto* task = new BackgroundTask;
    task->start([&, release](std::stop_token stop, const BackgroundTask::Post& post) {
        post([&shown] { shown = 1; });  // in Qt's queue when the task is deleted
        posted.set_value();
        release->wait();
        post([&shown] { shown = 2; });
        sawStop.set_value(stop.stop_requested());
    });
    posted.get_future().wait();
    delete task;  // returns at once: the job is still held
    release->count_down();
    QVERIFY(sawStop.get_future().get());  // deleting the task stopped its job
    QCoreApplication::processEvents();
    QCOMPARE(shown, 0);
    dlui::waitForBackgroundJobs();
}

QTEST_GUILESS_MAIN(TstBackgroundTask)
#include "test_background_task.moc"
