#pragma once
// The timeline with its toolbar: iteration selector, clock alignment, lane-per-stream, fit, legend.
// Rebuilds the core TimelineData when an option changes and follows the session's selection.
#include <QWidget>
#include <memory>

#include "core/timeline/timeline_data.h"

class QCheckBox;
class QComboBox;
class QLabel;

namespace dlui {

class DumpSession;
class TimelineWidget;

class TimelinePanel : public QWidget {
    Q_OBJECT
public:
    explicit TimelinePanel(DumpSession* session, QWidget* parent = nullptr);
    TimelineWidget* timelineWidget() const { return m_widget; }
    const dl::TimelineData* timeline() const { return m_data.get(); }

private:
    void onDumpChanged();
    void rebuild();
    void onSelection(quint32 op);

    DumpSession* m_session;
    TimelineWidget* m_widget;
    QComboBox* m_iteration;
    QCheckBox* m_align;
    QCheckBox* m_perStream;
    QLabel* m_info;
    std::shared_ptr<const dl::TimelineData> m_data;
};

}  // namespace dlui
