#include "ui/util/background_task.h"

#include <QMetaObject>

namespace dlui {

void BackgroundTask::stopAndJoin() {
    if (!m_thread) return;
    m_stop.request_stop();
    m_thread->wait();
    delete m_thread;
    m_thread = nullptr;
}

void BackgroundTask::start(Job job) {
    stopAndJoin();
    m_stop = std::stop_source();
    const quint64 gen = ++m_generation;
    Post post = [this, gen](std::function<void()> fn) {
        QMetaObject::invokeMethod(this, [this, gen, fn = std::move(fn)] { if (gen == m_generation) fn(); },
                                  Qt::QueuedConnection);
    };
    m_thread = QThread::create([job = std::move(job), token = m_stop.get_token(), post] { job(token, post); });
    m_thread->start();
}

}  // namespace dlui
