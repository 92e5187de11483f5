#pragma once
// Progress of the worker: stage, files and bytes done, time left, and Cancel.
#include <QElapsedTimer>
#include <QWidget>

class QLabel;
class QProgressBar;
class QPushButton;

namespace dlui {

class LoadingPage : public QWidget {
    Q_OBJECT
public:
    explicit LoadingPage(QWidget* parent = nullptr);
    void begin(const QString& path);
    void setStage(const QString& text);
    void setProgress(quint64 filesDone, quint64 filesTotal, quint64 bytesDone, quint64 bytesTotal);

signals:
    void cancelRequested();

private:
    QLabel* m_title;
    QLabel* m_stage;
    QLabel* m_detail;
    QProgressBar* m_bar;
    QPushButton* m_cancel;
    QElapsedTimer m_timer;
};

}  // namespace dlui
