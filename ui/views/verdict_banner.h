#pragma once
// One line at the top: the first overflow (op, rank, stage, iteration, kind) or "clean", with a
// button that jumps to it, and the near-limit count.
#include <QFrame>

#include "ui/style/theme.h"

class QLabel;
class QPushButton;

namespace dlui {

class DumpSession;

class VerdictBanner : public QFrame {
    Q_OBJECT
public:
    explicit VerdictBanner(DumpSession* session, QWidget* parent = nullptr);
    QString text() const;
    void jumpToOrigin();

signals:
    // The origin was selected by jumpToOrigin: the timeline frames it.
    void jumpedToOrigin(quint32 op);

public:
protected:
    void resizeEvent(QResizeEvent* e) override;  // the scope is elided to the width

private:
    void refresh();
    void setTone(const theme::Tone& tone);

    DumpSession* m_session;
    QLabel* m_label;
    QPushButton* m_jump;
};

}  // namespace dlui
