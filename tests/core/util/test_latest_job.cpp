// LatestJob (the threading under the GUI's BackgroundTask) never waits for a superseded job, drops
// what such a job posts, and reaches no destroyed runner. "The owner's thread" is the test's thread
// draining a mailbox, so this runs without Qt, under ThreadSanitizer in the tsan-core preset. Old
// jobs are held by latches the test controls: "start() returned while the old job still ran" is a
// fact, not a measured time.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <deque>
#include <future>
#include <latch>
#include <memory>
#include <mutex>

#include "core/util/latest_job.h"

using dl::LatestJob;

namespace {

// The owner's event queue: job threads put tasks in, the test's thread runs them.
class Mailbox {
public:
    LatestJob::Dispatch dispatch() {
        return [this](LatestJob::Task t) {
            std::lock_guard lock(m_mutex);
            m_tasks.push_back(std::move(t));
        };
    }
    std::size_t drain() {
        std::deque<LatestJob::Task> tasks;
        {
            std::lock_guard lock(m_mutex);
            tasks.swap(m_tasks);
        }
        for (auto& t : tasks) t();
        return tasks.size();
    }

private:
    std::mutex m_mutex;
    std::deque<LatestJob::Task> m_tasks;
};

// A job that blocks until `release` counts down, then posts `value` into `*out` and says whether
// it was asked to stop.
struct HeldJob {
    std::shared_ptr<std::latch> release = std::make_shared<std::latch>(1);
    std::shared_ptr<std::promise<bool>> sawStop = std::make_shared<std::promise<bool>>();
    std::shared_ptr<std::promise<void>> started = std::make_shared<std::promise<void>>();

    LatestJob::Job job(int value, int* out) const {
        return [release = release, sawStop = sawStop, started = started, value, out](std::stop_token stop,
                                                                                     const LatestJob::Post& post) {
            started->set_value();
            release->wait();
            post([out, value] { *out = value; });
            sawStop->set_value(stop.stop_requested());
        };
    }
};

TEST(LatestJob, PostsOfTheCurrentJobRunOnlyWhenTheOwnerDrainsThem) {
    Mailbox box;
    LatestJob jobs(box.dispatch());
    long long shown = 0;
    std::promise<void> done;
    jobs.start([&done, &shown](std::stop_token, const LatestJob::Post& post) {
        long long sum = 0;
        for (int i = 1; i <= 1000; ++i) sum += i;
        post([&shown, sum] { shown = sum; });
        done.set_value();
    });
    done.get_future().wait();
    EXPECT_EQ(shown, 0);  // posted, not yet run: nothing runs on a job's thread
    EXPECT_EQ(box.drain(), 1u);
    EXPECT_EQ(shown, 1000LL * 1001 / 2);
    dl::waitForJobThreads();
    EXPECT_FALSE(jobs.isRunning());
}

TEST(LatestJob, SupersedingDoesNotWaitForTheOldJobAndDropsItsPosts) {
    Mailbox box;
    LatestJob jobs(box.dispatch());
    int shown = 0;
    HeldJob old;
    jobs.start(old.job(1, &shown));
    old.started->get_future().wait();  // the old job is inside its body, held by the latch
    EXPECT_TRUE(jobs.isRunning());

    std::promise<void> newDone;
    jobs.start([&shown, &newDone](std::stop_token, const LatestJob::Post& post) {
        post([&shown] { shown = 2; });
        newDone.set_value();
    });
    // start() has returned while the old job is still held: it did not join it.
    auto oldResult = old.sawStop->get_future();
    EXPECT_EQ(oldResult.wait_for(std::chrono::seconds(0)), std::future_status::timeout);
    newDone.get_future().wait();
    box.drain();
    EXPECT_EQ(shown, 2);

    old.release->count_down();
    EXPECT_TRUE(oldResult.get());  // the superseded job was asked to stop
    EXPECT_EQ(box.drain(), 1u);    // its post reached the owner's queue and was dropped there
    EXPECT_EQ(shown, 2);
    dl::waitForJobThreads();
    EXPECT_FALSE(jobs.isRunning());
}

TEST(LatestJob, DestroyingTheRunnerStopsItsJobAndRunsNothingItPosted) {
    Mailbox box;
    int shown = 0;
    auto jobs = std::make_unique<LatestJob>(box.dispatch());
    auto release = std::make_shared<std::latch>(1);
    std::promise<void> posted;
    std::promise<bool> sawStop;
    jobs->start([&, release](std::stop_token stop, const LatestJob::Post& post) {
        post([&shown] { shown = 1; });  // queued while the runner is alive
        posted.set_value();
        release->wait();
        post([&shown] { shown = 2; });  // after the runner is gone: not even queued
        sawStop.set_value(stop.stop_requested());
    });
    posted.get_future().wait();
    jobs.reset();  // returns at once: the job is still held
    auto result = sawStop.get_future();
    EXPECT_EQ(result.wait_for(std::chrono::seconds(0)), std::future_status::timeout);
    release->count_down();
    EXPECT_TRUE(result.get());
    EXPECT_EQ(box.drain(), 1u);  // the post queued before the destruction, dropped when it ran
    EXPECT_EQ(shown, 0);
    dl::waitForJobThreads();
}

TEST(LatestJob, RapidRestartsShowOnlyTheLastJob) {
    // What a user typing into a filter does: many starts, each superseding the last, all threads
    // alive at once. Only the last job's result may be shown, whatever order the threads finish in.
    Mailbox box;
    LatestJob jobs(box.dispatch());
    int shown = -1, runs = 0;
    std::uint64_t lastHash = 0;
    constexpr int kJobs = 64;
    for (int i = 0; i < kJobs; ++i) {
        jobs.start([i, &shown, &runs, &lastHash](std::stop_token stop, const LatestJob::Post& post) {
            std::uint64_t h = 1469598103934665603ull;  // some work between the stop checks
            for (int k = 0; k < 20000 && !stop.stop_requested(); ++k) h = (h ^ std::uint64_t(k)) * 1099511628211ull;
            post([i, h, &shown, &runs, &lastHash] {
                shown = i;
                lastHash = h;
                ++runs;
            });
        });
        if (i % 8 == 0) box.drain();  // the owner runs its queue now and then, as an event loop does
    }
    dl::waitForJobThreads();
    box.drain();
    EXPECT_EQ(shown, kJobs - 1);
    EXPECT_FALSE(jobs.isRunning());
    EXPECT_GE(runs, 1);
    EXPECT_NE(lastHash, 0u);
}

}  // namespace
