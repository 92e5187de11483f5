#pragma once
// `dumplens --screenshots DIR`: once the opened dump is analysed, saves one PNG per view (grabbed
// from the widgets themselves) into DIR and quits; with a comparison requested, it also waits for
// the compare window and saves its views (compare_*.png). Used by scripts/screenshots.sh.
#include <QObject>
#include <QString>

class QWidget;

namespace dlui {

class MainWindow;

class ScreenshotTaker : public QObject {
    Q_OBJECT
public:
    ScreenshotTaker(MainWindow* window, const QString& dir, bool compare = false);

private:
    void save(QWidget* w, const char* name) const;
    void capture();
    void captureGraph();  // the Graph tab, raised over the table
    void captureCompare();
    void finish();
    MainWindow* m_window;
    QString m_dir;
    bool m_scheduled = false;
    bool m_compare = false;
};

}  // namespace dlui
