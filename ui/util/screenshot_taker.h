#pragma once
// `dumplens --screenshots DIR`: once the opened dump is analysed, saves one PNG per view (grabbed
// from the widgets themselves) into DIR and quits. Used by scripts/screenshots.sh for the docs.
#include <QObject>
#include <QString>

namespace dlui {

class MainWindow;

class ScreenshotTaker : public QObject {
    Q_OBJECT
public:
    ScreenshotTaker(MainWindow* window, const QString& dir);

private:
    void capture();
    MainWindow* m_window;
    QString m_dir;
    bool m_scheduled = false;
};

}  // namespace dlui
