#include "ui/views/watch_folder_dialog.h"

#include <QDialogButtonBox>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QVBoxLayout>

namespace dlui {

WatchFolderDialog::WatchFolderDialog(QWidget* parent, const QString& initial)
    : QDialog(parent), m_path(new QLineEdit(initial, this)) {
    setWindowTitle(tr("Watch dump folder"));
    auto* note = new QLabel(tr("The folder the job writes its dump into. It may not exist yet: DumpLens waits for "
                               "it, then shows each file once it is complete."),
                            this);
    note->setWordWrap(true);
    m_path->setPlaceholderText(tr("/path/to/dump"));
    m_path->setMinimumWidth(420);
    auto* browse = new QPushButton(tr("Browse…"), this);
    auto* row = new QHBoxLayout;
    row->addWidget(m_path, 1);
    row->addWidget(browse);
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this);
    buttons->button(QDialogButtonBox::Ok)->setText(tr("Watch"));
    auto* lay = new QVBoxLayout(this);
    lay->addWidget(note);
    lay->addLayout(row);
    lay->addWidget(buttons);
    const auto update = [this, buttons] {
        // A file is no folder; anything else (an existing folder, or one to come) is accepted.
        const QFileInfo f(folder());
        buttons->button(QDialogButtonBox::Ok)->setEnabled(!folder().isEmpty() && (!f.exists() || f.isDir()));
    };
    connect(m_path, &QLineEdit::textChanged, this, update);
    update();
    m_path->selectAll();  // typing replaces the last folder; Browse starts from it
    m_path->setFocus();
    connect(browse, &QPushButton::clicked, this, [this] {
        // The nearest existing folder of what is typed.
        QString start = folder();
        while (!start.isEmpty() && !QFileInfo(start).isDir()) start = QFileInfo(start).path();
        const QString dir = QFileDialog::getExistingDirectory(this, tr("Watch dump folder"), start);
        if (!dir.isEmpty()) m_path->setText(QDir::toNativeSeparators(dir));
    });
    connect(buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
}

QString WatchFolderDialog::folder() const {
    const QString t = m_path->text().trimmed();
    return t.isEmpty() ? QString() : QDir::cleanPath(QDir::fromNativeSeparators(t));
}

QString WatchFolderDialog::ask(QWidget* parent, const QString& initial) {
    WatchFolderDialog dlg(parent, initial);
    return dlg.exec() == QDialog::Accepted ? QDir(dlg.folder()).absolutePath() : QString();
}

}  // namespace dlui
