#pragma once
// Help > Keyboard shortcuts (also `?`).
#include <QDialog>

namespace dlui {

class ShortcutsDialog : public QDialog {
    Q_OBJECT
public:
    explicit ShortcutsDialog(QWidget* parent = nullptr);
    static QString shortcutsHtml();
};

}  // namespace dlui
