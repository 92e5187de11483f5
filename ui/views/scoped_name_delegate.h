#pragma once
// Paints an op-name cell as its short op (the DisplayRole text) followed by its scope, dimmed and
// elided from the left, so that the part that tells ops apart stays visible however narrow the
// column: "SqrtGrad-op520  …NormHead_gradSqrt". The scope comes from a model role.
#include <QStyledItemDelegate>

namespace dlui {

class ScopedNameDelegate : public QStyledItemDelegate {
    Q_OBJECT
public:
    ScopedNameDelegate(int scopeRole, QObject* parent = nullptr);
    void paint(QPainter* p, const QStyleOptionViewItem& option, const QModelIndex& index) const override;

private:
    int m_scopeRole;
};

}  // namespace dlui
