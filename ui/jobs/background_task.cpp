#include "ui/jobs/background_task.h"

#include <QMetaObject>

namespace dlui {

BackgroundTask::BackgroundTask(QObject* parent)
    : QObject(parent), m_jobs([this](dl::LatestJob::Task task) {
          QMetaObject::invokeMethod(this, std::move(task), Qt::QueuedConnection);
      }) {}

}  // namespace dlui
