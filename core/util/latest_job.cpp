#include "core/util/latest_job.h"

#include <condition_variable>
#include <list>
#include <mutex>
#include <thread>

namespace dl {

// What a job's thread may still reach after its runner is gone: the dispatch (dropped once the
// runner is destroyed, under the lock so a post never races the destructor) and the generation
// of the current job (read and written on the owner's thread only).
struct LatestJob::Shared {
    std::mutex mutex;
    Dispatch dispatch;
    std::uint64_t generation = 0;
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

void waitForJobThreads() { JobThreads::instance().stopAndWait(); }

LatestJob::LatestJob(Dispatch dispatch) : m_shared(std::make_shared<Shared>()) {
    m_shared->dispatch = std::move(dispatch);
    JobThreads::instance();  // constructed before any job, so destroyed after every runner
}

LatestJob::~LatestJob() {
    m_stop.request_stop();
    ++m_shared->generation;  // a task dispatched but not yet run is dropped too
    std::lock_guard lock(m_shared->mutex);
    m_shared->dispatch = nullptr;
}

bool LatestJob::isRunning() const { return m_running && m_running.use_count() > 1; }

void LatestJob::start(Job job) {
    m_stop.request_stop();  // the superseded job stops at its next check; its posts are dropped
    m_stop = std::stop_source();
    const std::uint64_t gen = ++m_shared->generation;
    Post post = [shared = m_shared, gen](Task task) {
        std::lock_guard lock(shared->mutex);
        if (!shared->dispatch) return;
        // Runs on the owner's thread, where `generation` lives: a newer start() drops it.
        shared->dispatch([shared, gen, task = std::move(task)] {
            if (gen == shared->generation) task();
        });
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

}  // namespace dl
