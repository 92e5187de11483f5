#pragma once
// One current job at a time, each on its own thread: the threading of the GUI's background jobs
// (ui/jobs/background_task.h wraps it for Qt), kept free of Qt so ThreadSanitizer can check it
// (the system Qt is not built with TSan; tests/core/util/test_latest_job.cpp runs in the tsan-core preset).
//
// Starting a job asks the previous one to stop and lets its thread finish on its own: it is never
// joined by the owner (a superseded index or timeline build can take a while to reach its next
// stop check). What a job posts is handed to the owner's `dispatch` (which runs it later on the
// owner's thread) and runs only while that job is still the current one and the runner is alive,
// so a slow, superseded job can never overwrite a newer result nor reach a deleted owner.
//
// Lifetime: a job keeps alive (by value or shared_ptr) everything it reads. Threads still running
// when the process exits are stopped and waited for by waitForJobThreads(), which a static
// destructor also calls after main returns.
#include <cstdint>
#include <functional>
#include <memory>
#include <stop_token>

namespace dl {

class LatestJob {
public:
    using Task = std::function<void()>;
    // Runs `task` later on the owner's thread. Called from job threads, under the runner's lock.
    using Dispatch = std::function<void(Task)>;
    using Post = std::function<void(Task)>;
    using Job = std::function<void(std::stop_token, const Post&)>;

    explicit LatestJob(Dispatch dispatch);
    ~LatestJob();  // stops the current job; does not wait for it; nothing is dispatched after this
    LatestJob(const LatestJob&) = delete;
    LatestJob& operator=(const LatestJob&) = delete;

    // Owner's thread only, like everything below.
    void start(Job job);
    void cancel() { m_stop.request_stop(); }
    // The current job's thread has not returned yet (a superseded one does not count).
    bool isRunning() const;

    struct Shared;

private:
    std::shared_ptr<Shared> m_shared;
    std::stop_source m_stop;
    std::shared_ptr<const void> m_running;  // held by the current job's thread while it runs
};

// Stops every job of every LatestJob and waits until their threads have returned.
void waitForJobThreads();

}  // namespace dl
