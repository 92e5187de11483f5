#include "ui/views/elided_label.h"

#include <QClipboard>
#include <QContextMenuEvent>
#include <QGuiApplication>
#include <QMenu>
#include <algorithm>

namespace dlui {

ElidedLabel::ElidedLabel(QWidget* parent, Qt::TextElideMode mode) : QLabel(parent), m_mode(mode) {
    setTextFormat(Qt::PlainText);
    setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
}

void ElidedLabel::setFullText(const QString& text) {
    m_full = text;
    setToolTip(text);
    elide();
}

QSize ElidedLabel::minimumSizeHint() const {
    return {fontMetrics().horizontalAdvance(QStringLiteral("M…M")), QLabel::minimumSizeHint().height()};
}

QSize ElidedLabel::sizeHint() const {
    // The text's width, capped: a layout may give it that much, never needs it.
    return {std::min(fontMetrics().horizontalAdvance(m_full) + 4, 400), QLabel::sizeHint().height()};
}

void ElidedLabel::resizeEvent(QResizeEvent* e) {
    QLabel::resizeEvent(e);
    elide();
}

void ElidedLabel::changeEvent(QEvent* e) {
    QLabel::changeEvent(e);
    if (e->type() == QEvent::FontChange) elide();
}

void ElidedLabel::contextMenuEvent(QContextMenuEvent* e) {
    if (m_full.isEmpty()) return;
    QMenu menu(this);
    menu.addAction(tr("Copy"), this, [this] { QGuiApplication::clipboard()->setText(m_full); });
    menu.exec(e->globalPos());
}

void ElidedLabel::elide() {
    QLabel::setText(fontMetrics().elidedText(m_full, m_mode, std::max(0, contentsRect().width())));
}

}  // namespace dlui
