#include "ui/report/report_export.h"

#include <QApplication>
#include <QFileDialog>
#include <QLocale>
#include <QMainWindow>
#include <QMessageBox>
#include <QStatusBar>

namespace dlui {

QPageSize::PageSizeId localePageSize() {
    return QLocale().measurementSystem() == QLocale::ImperialUSSystem ? QPageSize::Letter : QPageSize::A4;
}

void exportReportInteractively(QMainWindow* window, const QString& suggestedName,
                               const std::function<bool(const QString&, QString&)>& write) {
    const QString title = QObject::tr("Export report");
    const QString path = QFileDialog::getSaveFileName(window, title, suggestedName, QObject::tr("PDF (*.pdf)"));
    if (path.isEmpty()) return;
    QString error;
    QApplication::setOverrideCursor(Qt::WaitCursor);
    const bool ok = write(path, error);
    QApplication::restoreOverrideCursor();
    // A timed message: the window's standing summary (a status-bar widget) comes back after it.
    if (ok)
        window->statusBar()->showMessage(QObject::tr("Report written to %1").arg(path), 8000);
    else
        QMessageBox::warning(window, title, error);
}

}  // namespace dlui
