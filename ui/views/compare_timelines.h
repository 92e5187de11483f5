#pragma once
// The two runs' timelines stacked, coloured by comparison state, with zoom and pan locked
// together through a time map built from matched ops (so a slower run or an inserted Cast does
// not shift the view), a link strip between them, and one iteration selector for both.
#include <QWidget>
#include <memory>

#include "core/compare/time_map.h"
#include "core/timeline/timeline_data.h"

class QCheckBox;
class QComboBox;
class QLabel;

namespace dlui {

class CompareLinkStrip;
class CompareSession;
class TimelineWidget;

class CompareTimelines : public QWidget {
    Q_OBJECT
public:
    explicit CompareTimelines(CompareSession* session, QWidget* parent = nullptr);
    TimelineWidget* timelineA() const { return m_a; }
    TimelineWidget* timelineB() const { return m_b; }
    CompareLinkStrip* links() const { return m_links; }
    QCheckBox* lockCheck() const { return m_lock; }
    const dl::TimeMap& timeMap() const { return m_map; }

private:
    void onComparisonChanged();
    void rebuild();
    void onSelection();
    void follow(TimelineWidget* leader);
    QString tooltipExtra(bool runB, quint32 op) const;

    CompareSession* m_session;
    QComboBox* m_iteration;
    QCheckBox* m_lock;
    QCheckBox* m_align;
    QLabel* m_labelA;
    QLabel* m_labelB;
    TimelineWidget* m_a;
    TimelineWidget* m_b;
    CompareLinkStrip* m_links;
    std::shared_ptr<const dl::TimelineData> m_dataA, m_dataB;
    dl::TimeMap m_map;
    bool m_syncing = false;
};

}  // namespace dlui
