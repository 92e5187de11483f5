#pragma once
// The first-overflow chain stage by stage (each step selects its op) and the replay table with the
// recommendation.
#include <QWidget>

class QLabel;
class QTableView;

namespace dlui {

class ChainModel;
class DumpSession;
class ReplayModel;

class ChainView : public QWidget {
    Q_OBJECT
public:
    explicit ChainView(DumpSession* session, QWidget* parent = nullptr);
    ChainModel* chainModel() const { return m_chain; }
    ReplayModel* replayModel() const { return m_replay; }
    QTableView* chainTable() const { return m_chainView; }
    QTableView* replayTable() const { return m_replayView; }
    QString replayTitleText() const;
    QString recommendationText() const;
    // Why the chain table is empty (hidden then), or empty when it has steps.
    QString chainPlaceholder() const;
    // The parts' own size hints (a scroll area's are smaller), so the dock gets the room it had;
    // below the minimum the parts scroll instead of overlapping.
    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;

private:
    void onDumpChanged();
    void onSelection(quint32 op);  // highlights the step of the selected op, none when cleared

    DumpSession* m_session;
    ChainModel* m_chain;
    ReplayModel* m_replay;
    QTableView* m_chainView;
    QTableView* m_replayView;
    QLabel* m_replayTitle;
    QLabel* m_recommendation;
    QLabel* m_chainEmpty;          // in place of an empty chain table: why there is no chain
    QWidget* m_content = nullptr;  // the parts, inside a scroll area for short docks
};

}  // namespace dlui
