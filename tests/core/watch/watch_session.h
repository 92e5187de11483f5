#pragma once
// Runs dl::watchDump on a thread of its own and keeps its events for a test: waitFor(pred)
// blocks until an event satisfies the predicate (or the watch ends); stop() asks it to stop and
// joins. The wait has a generous ceiling so a broken watcher fails instead of hanging; nothing
// is asserted about how long anything took.
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <stop_token>
#include <thread>
#include <vector>

#include "core/watch/dump_watch.h"

namespace dltest {

class WatchSession {
public:
    // `onEvent` runs on the watch thread as each event arrives (before it is kept).
    explicit WatchSession(dl::WatchOptions options, std::function<void(const dl::WatchEvent&)> onEvent = {})
        : m_onEvent(std::move(onEvent)) {
        options.stop = m_stop.get_token();
        m_thread = std::thread([this, options] {
            const dl::WatchSummary s = dl::watchDump(options, [this](const dl::WatchEvent& e) {
                if (m_onEvent) m_onEvent(e);
                std::lock_guard lock(m_mutex);
                m_events.push_back(e);
                m_changed.notify_all();
            });
            std::lock_guard lock(m_mutex);
            m_summary = s;
            m_finished = true;
            m_changed.notify_all();
        });
    }
    ~WatchSession() { stop(); }

    // True when an event satisfying `pred` arrived (false: the watch ended or the ceiling passed).
    bool waitFor(const std::function<bool(const dl::WatchEvent&)>& pred,
                 std::chrono::seconds ceiling = std::chrono::seconds(60)) {
        std::unique_lock lock(m_mutex);
        std::size_t seen = 0;
        const auto until = std::chrono::steady_clock::now() + ceiling;
        while (true) {
            for (; seen < m_events.size(); ++seen)
                if (pred(m_events[seen])) return true;
            if (m_finished) return false;
            if (m_changed.wait_until(lock, until) == std::cv_status::timeout) return false;
        }
    }
    bool waitForKind(dl::WatchEventKind k) {
        return waitFor([k](const dl::WatchEvent& e) { return e.kind == k; });
    }
    dl::WatchSummary stop() {
        m_stop.request_stop();
        if (m_thread.joinable()) m_thread.join();
        return m_summary;
    }
    std::vector<dl::WatchEvent> events() const {
        std::lock_guard lock(m_mutex);
        return m_events;
    }
    std::vector<dl::WatchEvent> events(dl::WatchEventKind k) const {
        std::vector<dl::WatchEvent> out;
        for (const auto& e : events())
            if (e.kind == k) out.push_back(e);
        return out;
    }
    bool finished() const {
        std::lock_guard lock(m_mutex);
        return m_finished;
    }

private:
    std::function<void(const dl::WatchEvent&)> m_onEvent;
    std::stop_source m_stop;
    mutable std::mutex m_mutex;
    std::condition_variable m_changed;
    std::vector<dl::WatchEvent> m_events;
    dl::WatchSummary m_summary;
    bool m_finished = false;
    std::thread m_thread;
};

}  // namespace dltest
