#pragma once
// The timeline with its toolbar: iteration selector, clock alignment, lane-per-stream, fit, legend.
// Rebuilds the core TimelineData on a worker thread when an option changes (a million ops take
// most of a second) and follows the session's selection.
#include <QWidget>
#include <memory>

#include "core/timeline/timeline_data.h"
#include "ui/util/loaded_dump.h"

class QCheckBox;
class QComboBox;
class QLabel;

namespace dlui {

class BackgroundTask;
class DumpSession;
class TimelineWidget;

class TimelinePanel : public QWidget {
    Q_OBJECT
public:
    explicit TimelinePanel(DumpSession* session, QWidget* parent = nullptr);
    TimelineWidget* timelineWidget() const { return m_widget; }
    const dl::TimelineData* timeline() const { return m_data.get(); }
    bool isBuilding() const { return m_building; }

signals:
    void timelineBuilt();

private:
    void onDumpChanged();
    void rebuild();
    void onBuilt(LoadedDumpPtr dump, std::shared_ptr<const dl::TimelineData> data);
    void onSelection(quint32 op);

    DumpSession* m_session;
    TimelineWidget* m_widget;
    QComboBox* m_iteration;
    QCheckBox* m_align;
    QCheckBox* m_perStream;
    QLabel* m_info;
    std::shared_ptr<const dl::TimelineData> m_data;
    LoadedDumpPtr m_shown;   // the dump m_data was built from
    BackgroundTask* m_builder;
    bool m_building = false;
};

}  // namespace dlui
