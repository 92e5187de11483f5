#pragma once
// The two runs' timelines stacked, coloured by comparison state, with zoom and pan locked
// together through a time map built from matched ops (so a slower run or an inserted Cast does
// not shift the view), a link strip between them, and one iteration selector for both. Both
// timelines and the map are built on a worker thread.
#include <QWidget>
#include <memory>

#include "core/compare/time_map.h"
#include "core/timeline/timeline_data.h"
#include "ui/jobs/compare_worker.h"

class QCheckBox;
class QComboBox;
class QLabel;

namespace dlui {

class BackgroundTask;
class CompareLinkStrip;
class CompareSession;
class TimelineToolbar;
class TimelineWidget;

class CompareTimelines : public QWidget {
    Q_OBJECT
public:
    explicit CompareTimelines(CompareSession* session, QWidget* parent = nullptr);
    TimelineWidget* timelineA() const { return m_a; }
    TimelineWidget* timelineB() const { return m_b; }
    CompareLinkStrip* links() const { return m_links; }
    QCheckBox* lockCheck() const { return m_lock; }
    TimelineToolbar* toolbar() const { return m_bar; }
    QComboBox* colourChoice() const { return m_colour; }
    const dl::TimeMap& timeMap() const { return m_map; }
    bool isBuilding() const { return m_building; }

signals:
    void timelinesBuilt();

private:
    void onComparisonChanged();
    void rebuild();
    void onSelection();
    void follow(TimelineWidget* leader);
    QString tooltipExtra(bool runB, quint32 op) const;

    CompareSession* m_session;
    TimelineToolbar* m_bar;
    QCheckBox* m_lock;
    QComboBox* m_colour;
    QWidget* m_compareLegend;
    QWidget* m_overflowLegend;
    QLabel* m_labelA;
    QLabel* m_labelB;
    TimelineWidget* m_a;
    TimelineWidget* m_b;
    CompareLinkStrip* m_links;
    struct Built {
        ComparedRunsPtr runs;  // keeps both indexes alive while the widgets point into them
        std::shared_ptr<const dl::CompareOverlay> overlay;
        bool overflowColours = false;           // each run's overflow states instead of comparison states
        const dl::OpStates* statesA = nullptr;  // owned by runs or overlay
        const dl::OpStates* statesB = nullptr;
        std::shared_ptr<const dl::TimelineData> a, b;
        dl::TimeMap map;
    };
    void onBuilt(const std::shared_ptr<const Built>& built);

    std::shared_ptr<const Built> m_shown;
    std::shared_ptr<const dl::TimelineData> m_dataA, m_dataB;
    dl::TimeMap m_map;
    BackgroundTask* m_builder;
    bool m_building = false;
    bool m_syncing = false;
};

}  // namespace dlui
