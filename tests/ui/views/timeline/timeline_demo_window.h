#pragma once
// The main window on the bundled demo with its timeline built, which each timeline suite
// (test_timeline_*.cpp) opens once in its initTestCase; the suites share only this.
#include <QTemporaryDir>
#include <QTest>

#include "tests/ui/isolated_app_state.h"
#include "ui/main_window.h"
#include "ui/models/dump_session.h"
#include "ui/views/timeline/timeline_panel.h"
#include "ui/views/timeline/timeline_widget.h"

// Opens the demo in a new window, waits for its analysis and timeline. A failure fails the
// caller's initTestCase (the QTRY macros return from here; QtTest then skips the suite).
inline void openTimelineDemo(QTemporaryDir& tmp, dlui::MainWindow*& w, dlui::TimelineWidget*& tw,
                             const dl::DumpIndex*& ix) {
    QVERIFY(tmp.isValid());
    isolateAppState(tmp.path(), QStringLiteral("dumplens-timeline"));
    w = new dlui::MainWindow;
    w->resize(1400, 900);
    w->show();
    w->openDemo();
    QTRY_VERIFY_WITH_TIMEOUT(w->session()->analysis() != nullptr, 600000);
    QTRY_VERIFY_WITH_TIMEOUT(!w->isBusy(), 60000);
    QTRY_VERIFY_WITH_TIMEOUT(!w->timelinePanel()->isBuilding() && w->timelinePanel()->timeline(), 60000);
    QTest::qWait(300);  // the first layout's deferred dock sizes
    tw = w->timelinePanel()->timelineWidget();
    ix = w->session()->index();
}
