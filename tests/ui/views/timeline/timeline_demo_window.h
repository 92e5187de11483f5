#pragma once
// The base of the timeline suites (test_timeline_lanes, _navigation, _panels): the main window on
// the bundled demo with its timeline built, opened once per suite, and the state every test leaves
// put back before the next. QtTest runs these inherited slots around each suite's own; a suite's
// file includes moc_timeline_demo_window.cpp once for them.
#include <QDockWidget>
#include <QObject>
#include <QTemporaryDir>
#include <QTest>

#include "tests/ui/isolated_app_state.h"
#include "ui/main_window.h"
#include "ui/models/dump_session.h"
#include "ui/views/timeline/timeline_panel.h"
#include "ui/views/timeline/timeline_widget.h"

class TimelineDemoSuite : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() {
        using namespace dlui;
        QVERIFY(m_tmp.isValid());
        isolateAppState(m_tmp.path(), QStringLiteral("dumplens-timeline"));
        m_w = new MainWindow;
        m_w->resize(1400, 900);
        m_w->show();
        m_w->openDemo();
        QTRY_VERIFY_WITH_TIMEOUT(m_w->session()->analysis() != nullptr, 600000);
        QTRY_VERIFY_WITH_TIMEOUT(!m_w->isBusy(), 60000);
        QTRY_VERIFY_WITH_TIMEOUT(!m_w->timelinePanel()->isBuilding() && m_w->timelinePanel()->timeline(), 60000);
        QTest::qWait(300);  // the first layout's deferred dock sizes
        m_tw = m_w->timelinePanel()->timelineWidget();
        m_ix = m_w->session()->index();
    }
    void cleanupTestCase() { delete m_w; }

    void cleanup() {
        // The Details tab is raised by an area: the default layout has the table in front.
        if (auto* table = m_w->findChild<QDockWidget*>(QStringLiteral("dock.table"))) table->raise();
        // A selection in another iteration rebuilds the timeline: the next test starts on the new one.
        QTRY_VERIFY_WITH_TIMEOUT(!m_w->timelinePanel()->isBuilding(), 20000);
    }

protected:
    QTemporaryDir m_tmp;
    dlui::MainWindow* m_w = nullptr;
    dlui::TimelineWidget* m_tw = nullptr;
    const dl::DumpIndex* m_ix = nullptr;
};
