#include "ui/util/background_task.h"

#include <QMetaObject>
#include <QPointer>
#include <condition_variable>
#include <list>
#include <mutex>
#include <thread>

namespace dlui {

// What a job's thread may still reach after its task is gone: the owner (null once deleted),
// under a lock so a post never races the destructor.
struct BackgroundTask::Shared {
    std::mutex mutex;
    BackgroundTask* owner = nullptr;
};

namespace {

// Every job thread alive in the process, so none outlives the process's teardown.
class JobThreads {
public:
    static JobThreads& instance() {
        static JobThreads threads;
        return threads;
    }
    void add(std::stop_source stop) {
        std::lock_guard lock(m_mutex);
        m_live.push_back(std::move(stop));
    }
    void remove(const std::stop_source& stop) {
        std::lock_guard lock(m_mutex);
        m_live.remove_if([&](const std::stop_source& s) { return s == stop; });
        if (m_live.empty()) m_idle.notify_all();
    }
    void stopAndWait() {
        std::unique_lock lock(m_mutex);
        for (auto& s : m_live) s.request_stop();
        m_idle.wait(lock, [&] { return m_live.empty(); });
    }
    ~JobThreads() { stopAndWait(); }

private:
    std::mutex m_mutex;
    std::condition_variable m_idle;
    std::list<std::stop_source> m_live;
};

}  // namespace

void waitForBackgroundJobs() { JobThreads::instance().stopAndWait(); }

BackgroundTask::BackgroundTask(QObject* parent) : QObject(parent), m_shared(std::make_shared<Shared>()) {
    m_shared->owner = this;
    JobThreads::instance();   // constructed before any job, so destroyed after every task
}

BackgroundTask::~BackgroundTask() {
    m_stop.request_stop();
    std::lock_guard lock(m_shared->mutex);
    m_shared->owner = nullptr;
}

bool BackgroundTask::isRunning() const { return m_running && m_running.use_count() > 1; }

void BackgroundTask::start(Job job) {
    m_stop.request_stop();   // the superseded job stops at its next check; its posts are dropped
    m_stop = std::stop_source();
    const quint64 gen = ++m_generation;
    Post post = [shared = m_shared, gen](std::function<void()> fn) {
        std::lock_guard lock(shared->mutex);
        BackgroundTask* owner = shared->owner;
        if (!owner) return;
        // Queued on the owner: Qt drops the call if the owner is deleted before it runs.
        QMetaObject::invokeMethod(owner, [owner, gen, fn = std::move(fn)] { if (gen == owner->m_generation) fn(); },
                                  Qt::QueuedConnection);
    };
    auto running = std::make_shared<int>(0);
    m_running = running;
    JobThreads::instance().add(m_stop);
    std::thread([job = std::move(job), stop = m_stop, post = std::move(post), running = std::move(running)]() mutable {
        job(stop.get_token(), post);
        // Drop what the job held (its captures may own large indexes) before saying it is done.
        job = nullptr;
        post = nullptr;
        running.reset();
        JobThreads::instance().remove(stop);
    }).detach();
}

}  // namespace dlui
