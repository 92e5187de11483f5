#pragma once
// File > Export report… as both windows do it: ask for a path, write with a wait cursor, then say
// where it went in the status bar or why it failed in a message box. The page size follows the
// locale (Letter where it measures in inches, A4 elsewhere).
#include <QPageSize>
#include <QString>
#include <functional>

class QMainWindow;

namespace dlui {

QPageSize::PageSizeId localePageSize();

// write(path, error) -> ok
void exportReportInteractively(QMainWindow* window, const QString& suggestedName,
                               const std::function<bool(const QString&, QString&)>& write);

}  // namespace dlui
