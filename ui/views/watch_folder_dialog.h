#pragma once
// File > Watch folder…: the folder to watch, typed or browsed. It may not exist yet (the job has
// not started): the watch waits for it, which a file dialog (existing folders only) cannot offer.
#include <QDialog>

class QLineEdit;

namespace dlui {

class WatchFolderDialog : public QDialog {
    Q_OBJECT
public:
    explicit WatchFolderDialog(QWidget* parent = nullptr, const QString& initial = {});
    QString folder() const;
    // The folder chosen, or empty when cancelled.
    static QString ask(QWidget* parent, const QString& initial = {});

private:
    QLineEdit* m_path;
};

}  // namespace dlui
