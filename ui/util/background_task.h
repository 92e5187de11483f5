#pragma once
// One current job at a time, each on its own thread. Starting a job asks the previous one to stop
// and lets its thread finish on its own (never joined on the GUI thread: a superseded index or
// timeline build can take a while to reach its next stop check). What a job posts runs on the
// owner's (GUI) thread, and only while that job is the current one and the task is alive, so a
// slow, superseded job can never overwrite a newer result nor reach a deleted owner.
//
// Lifetime: a job must keep alive (by value or shared_ptr) everything it reads; `this` of the
// owner may be captured only inside what it posts. Threads still running when the process exits
// are stopped and waited for by waitForBackgroundJobs(), which a static destructor calls after
// main returns (the windows and QApplication are gone by then, so nothing is posted).
#include <QObject>
#include <functional>
#include <memory>
#include <stop_token>

namespace dlui {

class BackgroundTask : public QObject {
    Q_OBJECT
public:
    using Post = std::function<void(std::function<void()>)>;
    using Job = std::function<void(std::stop_token, const Post&)>;

    explicit BackgroundTask(QObject* parent = nullptr);
    ~BackgroundTask() override;   // stops the current job; does not wait for it

    void start(Job job);
    void cancel() { m_stop.request_stop(); }
    // The current job's thread has not returned yet (a superseded one does not count).
    bool isRunning() const;

    struct Shared;

private:
    std::shared_ptr<Shared> m_shared;
    std::stop_source m_stop;
    std::shared_ptr<const void> m_running;   // held by the current job's thread while it runs
    quint64 m_generation = 0;                // GUI thread only
};

// Stops every job of every BackgroundTask and waits until their threads have returned.
void waitForBackgroundJobs();

}  // namespace dlui
