#pragma once
// The timeline with its toolbar (iteration, clock alignment, lane-per-stream, fit, legend, search
// matches and area summary). Rebuilds the core TimelineData on a worker thread when an option
// changes (a million ops take most of a second) and follows the session's selection.
#include <QWidget>
#include <memory>
#include <optional>
#include <vector>

#include "core/timeline/timeline_data.h"
#include "ui/jobs/loaded_dump.h"

class QCheckBox;

namespace dlui {

class BackgroundTask;
class DumpSession;
class TimelineToolbar;
class TimelineWidget;

class TimelinePanel : public QWidget {
    Q_OBJECT
public:
    explicit TimelinePanel(DumpSession* session, QWidget* parent = nullptr);
    TimelineWidget* timelineWidget() const { return m_widget; }
    TimelineToolbar* toolbar() const { return m_bar; }
    const dl::TimelineData* timeline() const { return m_data.get(); }
    bool isBuilding() const { return m_building; }
    // The ops the table's filter matches (highlighted; none when the filter is empty).
    void setMatches(std::vector<quint32> ops);
    // Next/previous match (Enter/Shift+Enter in the filter, F3/Shift+F3).
    bool gotoMatch(bool backward);
    // Zooms to the op and its neighbours, centred (at once, or when the timeline showing it is built).
    void frameOp(quint32 op);

signals:
    void timelineBuilt();
    void matchesChanged();  // the search's ops on this timeline (timelineWidget()->matchOrder())

private:
    void onDumpChanged();
    void rebuild();
    void onBuilt(LoadedDumpPtr dump, std::shared_ptr<const dl::TimelineData> data);
    void onSelection(quint32 op);
    void updateStatus();

    DumpSession* m_session;
    TimelineToolbar* m_bar;
    TimelineWidget* m_widget;
    QCheckBox* m_perStream;
    std::shared_ptr<const dl::TimelineData> m_data;
    LoadedDumpPtr m_shown;  // the dump m_data was built from
    BackgroundTask* m_builder;
    bool m_building = false;
    std::vector<quint32> m_matches;
    quint32 m_pendingFrame = 0xffffffffu;  // frameOp before its timeline was built
    // A watched folder's next update (LoadedDump::live) is the same run grown: the iteration and
    // the time window shown stay, unless the first overflow moved to another iteration.
    QString m_runPath;
    std::optional<std::uint32_t> m_runFirstBad;
    bool m_keepWindow = false;
};

}  // namespace dlui
