#pragma once
// One job at a time on its own thread. Starting a job stops and joins the previous one; what the
// job posts runs on the owner's (GUI) thread, and is dropped once a newer job has started, so a
// slow, superseded load can never overwrite a newer result. Never blocks the GUI thread except to
// join a thread that has already been asked to stop.
#include <QObject>
#include <QThread>
#include <atomic>
#include <functional>
#include <stop_token>

namespace dlui {

class BackgroundTask : public QObject {
    Q_OBJECT
public:
    using Post = std::function<void(std::function<void()>)>;
    using Job = std::function<void(std::stop_token, const Post&)>;

    explicit BackgroundTask(QObject* parent = nullptr) : QObject(parent) {}
    ~BackgroundTask() override { stopAndJoin(); }

    void start(Job job);
    void cancel() { m_stop.request_stop(); }
    bool isRunning() const { return m_thread && m_thread->isRunning(); }

private:
    void stopAndJoin();

    QThread* m_thread = nullptr;
    std::stop_source m_stop;
    std::atomic<quint64> m_generation{0};
};

}  // namespace dlui
