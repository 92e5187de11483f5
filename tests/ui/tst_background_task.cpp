// BackgroundTask never waits for a superseded job on the GUI thread, drops what such a job posts,
// and outlives no owner. The old job is held by a latch the test controls, so "start() returned
// while the old job still ran" is a fact, not a measured time.
#include <QCoreApplication>
#include <QtTest>
#include <future>
#include <latch>
#include <memory>

#include "ui/util/background_task.h"

using dlui::BackgroundTask;

class TstBackgroundTask : public QObject {
    Q_OBJECT
private slots:
    void supersedingDoesNotWaitForTheOldJob();
    void deletingTheTaskWhileAJobRunsIsSafe();
};

namespace {

// A job that blocks until `release` counts down, then posts `value` into `*out` and says whether
// it was asked to stop.
struct HeldJob {
    std::shared_ptr<std::latch> release = std::make_shared<std::latch>(1);
    std::shared_ptr<std::promise<bool>> sawStop = std::make_shared<std::promise<bool>>();
    std::shared_ptr<std::promise<void>> started = std::make_shared<std::promise<void>>();

    BackgroundTask::Job job(int value, int* out) const {
        return [release = release, sawStop = sawStop, started = started, value, out](std::stop_token stop,
                                                                                      const BackgroundTask::Post& post) {
            started->set_value();
            release->wait();
            post([out, value] { *out = value; });
            sawStop->set_value(stop.stop_requested());
        };
    }
};

}  // namespace

void TstBackgroundTask::supersedingDoesNotWaitForTheOldJob() {
    BackgroundTask task;
    int shown = 0;
    HeldJob old;
    task.start(old.job(1, &shown));
    old.started->get_future().wait();   // the old job is inside its body, held by the latch
    QVERIFY(task.isRunning());

    std::promise<void> newDone;
    task.start([&shown, &newDone](std::stop_token, const BackgroundTask::Post& post) {
        post([&shown] { shown = 2; });
        newDone.set_value();
    });
    // start() has returned while the old job is still held: it did not join it.
    auto oldResult = old.sawStop->get_future();
    QCOMPARE(oldResult.wait_for(std::chrono::seconds(0)), std::future_status::timeout);

    newDone.get_future().wait();
    QCoreApplication::processEvents();
    QCOMPARE(shown, 2);

    old.release->count_down();
    QVERIFY(oldResult.get());            // the superseded job was asked to stop
    QCoreApplication::processEvents();   // its post, queued before get() returned, is dropped
    QCOMPARE(shown, 2);
    dlui::waitForBackgroundJobs();
    QVERIFY(!task.isRunning());
}

void TstBackgroundTask::deletingTheTaskWhileAJobRunsIsSafe() {
    int shown = 0;
    HeldJob held;
    auto* task = new BackgroundTask;
    task->start(held.job(1, &shown));
    held.started->get_future().wait();
    delete task;   // returns at once: the job is still held
    auto result = held.sawStop->get_future();
    QCOMPARE(result.wait_for(std::chrono::seconds(0)), std::future_status::timeout);
    held.release->count_down();
    QVERIFY(result.get());               // deleting the task stopped its job
    QCoreApplication::processEvents();   // and what it posted went nowhere
    QCOMPARE(shown, 0);
    dlui::waitForBackgroundJobs();
}

QTEST_GUILESS_MAIN(TstBackgroundTask)
#include "tst_background_task.moc"
