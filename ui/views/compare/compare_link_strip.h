#pragma once
// The strip between the two stacked timelines of a comparison: a line from each matched op in
// run A to its partner in run B. It draws the selected pair, the first divergence, diverged pairs
// in view, and the matched ops of the selected op's lane, thinned to a few pixels apart so the
// cost stays bounded by the width, not the op count.
#include <QWidget>

namespace dlui {

class CompareSession;
class TimelineWidget;

class CompareLinkStrip : public QWidget {
    Q_OBJECT
public:
    CompareLinkStrip(CompareSession* session, TimelineWidget* a, TimelineWidget* b, QWidget* parent = nullptr);
    QSize sizeHint() const override { return {600, 34}; }
    int lastDrawn() const { return m_lastDrawn; }

protected:
    void paintEvent(QPaintEvent*) override;

private:
    bool link(quint32 opA, quint32 opB, double& xa, double& xb) const;

    CompareSession* m_session;
    TimelineWidget* m_a;
    TimelineWidget* m_b;
    int m_lastDrawn = 0;
};

}  // namespace dlui
