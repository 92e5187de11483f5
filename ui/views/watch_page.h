#pragma once
// What the window shows while a watched folder has given nothing to show yet: the folder, whether
// it exists yet ("waiting for it to appear"), how many files are being written, and Stop watching.
// Once the first complete files are indexed the workspace replaces it.
#include <QWidget>

class QLabel;
class QPushButton;

namespace dlui {

struct WatchProgress;

class WatchPage : public QWidget {
    Q_OBJECT
public:
    explicit WatchPage(QWidget* parent = nullptr);
    void begin(const QString& dir, bool exists);
    void setWatching(const QString& dirAbs, const QString& mode);
    void setProgress(const WatchProgress& p);
    void setStopped(const QString& summary, const QString& error);
    QString stateText() const;

signals:
    void stopRequested();

private:
    QLabel* m_title;
    QLabel* m_state;
    QLabel* m_detail;
    QPushButton* m_stop;
};

}  // namespace dlui
