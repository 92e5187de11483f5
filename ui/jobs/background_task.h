#pragma once
// One current job at a time, each on its own thread, its posts run on the owner's (GUI) thread:
// dl::LatestJob (core/util/latest_job.h, where the threading and its guarantees are described and
// checked under ThreadSanitizer) with Qt's event loop as the way back. A post is queued on this
// object, so Qt also drops it when the task is deleted before it runs.
//
// Lifetime: a job must keep alive (by value or shared_ptr) everything it reads; `this` of the
// owner may be captured only inside what it posts. Threads still running when the process exits
// are stopped and waited for by waitForBackgroundJobs() (also called by a static destructor after
// main returns, when the windows and QApplication are gone, so nothing is posted).
#include <QObject>
#include <functional>
#include <stop_token>

#include "core/util/latest_job.h"

namespace dlui {

class BackgroundTask : public QObject {
    Q_OBJECT
public:
    using Post = dl::LatestJob::Post;
    using Job = dl::LatestJob::Job;

    explicit BackgroundTask(QObject* parent = nullptr);
    ~BackgroundTask() override = default;  // stops the current job; does not wait for it

    void start(Job job) { m_jobs.start(std::move(job)); }
    void cancel() { m_jobs.cancel(); }
    // The current job's thread has not returned yet (a superseded one does not count).
    bool isRunning() const { return m_jobs.isRunning(); }

private:
    dl::LatestJob m_jobs;
};

// Stops every job of every BackgroundTask and waits until their threads have returned.
inline void waitForBackgroundJobs() { dl::waitForJobThreads(); }

}  // namespace dlui
