#pragma once
// The controls above a timeline, shared by the main window's timeline and the compare window's
// pair: an iteration choice (the iteration to look at marked), clock alignment, extra controls,
// "Show all", then a second row with what is shown (elided when narrow), a status text (search
// matches, area summary) and the legend. Also the one timeline build job both run on a worker.
#include <QWidget>
#include <memory>
#include <optional>
#include <stop_token>
#include <vector>

#include "core/timeline/timeline_data.h"
#include "ui/jobs/loaded_dump.h"

class QCheckBox;
class QComboBox;
class QHBoxLayout;
class QLabel;
class QToolButton;

namespace dlui {

class TimelineToolbar : public QWidget {
    Q_OBJECT
public:
    explicit TimelineToolbar(QWidget* parent = nullptr);
    QComboBox* iterationChoice() const { return m_iteration; }
    QCheckBox* alignCheck() const { return m_align; }
    // Controls between the alignment and "Show all" (first row), and legends (second row, right).
    void addControl(QWidget* w);
    void addLegend(QWidget* w);
    void setInfo(const QString& text);  // what the timeline shows
    QString info() const;
    void setStatus(const QString& text);  // matches, area; hidden when empty
    QString status() const;

    // "All", then each iteration; `marked` gets "<n> (<markText>)". Keeps the current iteration
    // when asked and present, else picks marked, else row `fallback` (clamped). No optionsChanged.
    void setIterations(const std::vector<std::uint32_t>& iterations, std::optional<std::uint32_t> marked,
                       const QString& markText, bool keepCurrent, int fallback);
    void clearIterations();
    // Shows iteration `it` (emits optionsChanged when it changes); false when it is not offered.
    bool showIteration(std::uint32_t it);
    // Iteration and clock alignment as chosen (the caller adds its own options).
    dl::TimelineOptions options() const;

signals:
    void optionsChanged();
    void fitRequested();

private:
    QComboBox* m_iteration;
    QCheckBox* m_align;
    QToolButton* m_fit;
    QHBoxLayout* m_controls;
    QHBoxLayout* m_legends;
    QLabel* m_info;
    QLabel* m_status;
};

// The timeline of one run as the views draw it (on a worker thread); without the overflow chain's
// arrows when `chainArrows` is off (the comparison colours have their own story).
std::shared_ptr<const dl::TimelineData> buildRunTimeline(const LoadedDump& run, const dl::OpStates& states,
                                                         const dl::TimelineOptions& options, std::stop_token stop,
                                                         bool chainArrows = true);

}  // namespace dlui
