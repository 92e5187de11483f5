#pragma once
// A one-line label that elides its text to its width (in the middle by default: both the start and
// the "-op4411" end of a 200-character scoped name stay readable), with the full text in its
// tooltip and in "Copy" on its context menu. It never asks for the width of its text, so a name
// without break points cannot hold its window wider than the screen.
#include <QLabel>

namespace dlui {

class ElidedLabel : public QLabel {
    Q_OBJECT
public:
    explicit ElidedLabel(QWidget* parent = nullptr, Qt::TextElideMode mode = Qt::ElideMiddle);
    void setFullText(const QString& text);
    const QString& fullText() const { return m_full; }
    QSize minimumSizeHint() const override;
    QSize sizeHint() const override;

protected:
    void resizeEvent(QResizeEvent* e) override;
    void contextMenuEvent(QContextMenuEvent* e) override;
    void changeEvent(QEvent* e) override;

private:
    void elide();
    QString m_full;
    Qt::TextElideMode m_mode;
};

}  // namespace dlui
