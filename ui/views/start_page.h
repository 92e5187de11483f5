#pragma once
// Shown when no dump is open: open a folder, recent folders, the bundled demo, drop hint.
#include <QWidget>

class QListWidget;

namespace dlui {

class StartPage : public QWidget {
    Q_OBJECT
public:
    explicit StartPage(QWidget* parent = nullptr);
    void setRecent(const QStringList& folders);

signals:
    void openFolderRequested();
    void openDemoRequested();
    void openRecentRequested(const QString& folder);

private:
    QListWidget* m_recent;
};

}  // namespace dlui
