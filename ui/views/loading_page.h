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
    // phase: dl::ProgressPhase. The bar is determinate from the first call (the file count is
    // known once the folder is walked): the listing pass by files, the reading pass by bytes.
    void setProgress(quint64 filesDone, quint64 filesTotal, quint64 bytesDone, quint64 bytesTotal, int phase);
    bool isDeterminate() const;
    int barValue() const;  // per mille, -1 while indeterminate

signals:
    void cancelRequested();

private:
    QLabel* m_title;
    QLabel* m_stage;
    QLabel* m_detail;
    QProgressBar* m_bar;
    QPushButton* m_cancel;
    QElapsedTimer m_timer;  // since the start of the current pass
    int m_phase = -1;
};

}  // namespace dlui
