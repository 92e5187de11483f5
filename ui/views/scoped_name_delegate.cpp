#include "ui/views/scoped_name_delegate.h"

#include <QApplication>
#include <QPainter>

namespace dlui {

ScopedNameDelegate::ScopedNameDelegate(int scopeRole, QObject* parent)
    : QStyledItemDelegate(parent), m_scopeRole(scopeRole) {}

void ScopedNameDelegate::paint(QPainter* p, const QStyleOptionViewItem& option, const QModelIndex& index) const {
    const QString scope = index.data(m_scopeRole).toString();
    if (scope.isEmpty()) {
        QStyledItemDelegate::paint(p, option, index);
        return;
    }
    QStyleOptionViewItem opt = option;
    initStyleOption(&opt, index);
    const QString name = opt.text;
    opt.text.clear();  // background, selection and focus from the style; the text drawn here
    const QWidget* w = option.widget;
    QStyle* style = w ? w->style() : QApplication::style();
    style->drawControl(QStyle::CE_ItemViewItem, &opt, p, w);
    const QRect r = style->subElementRect(QStyle::SE_ItemViewItemText, &opt, w).adjusted(2, 0, -2, 0);
    const QFontMetrics fm(opt.font);
    const bool selected = opt.state & QStyle::State_Selected;
    const QPalette::ColorGroup cg = opt.state & QStyle::State_Enabled ? QPalette::Normal : QPalette::Disabled;
    const QColor text = opt.palette.color(cg, selected ? QPalette::HighlightedText : QPalette::Text);
    p->save();
    p->setFont(opt.font);
    // The short name first and whole where it fits (elided in the middle only when it cannot).
    const QString shown = fm.elidedText(name, Qt::ElideMiddle, r.width());
    p->setPen(text);
    p->drawText(r, Qt::AlignLeft | Qt::AlignVCenter, shown);
    const int used = fm.horizontalAdvance(shown) + fm.horizontalAdvance(QStringLiteral("  "));
    if (used < r.width()) {
        QColor dim = text;
        dim.setAlphaF(0.55);
        p->setPen(dim);
        const QRect sr(r.left() + used, r.top(), r.width() - used, r.height());
        p->drawText(sr, Qt::AlignLeft | Qt::AlignVCenter, fm.elidedText(scope, Qt::ElideLeft, sr.width()));
    }
    p->restore();
}

}  // namespace dlui
