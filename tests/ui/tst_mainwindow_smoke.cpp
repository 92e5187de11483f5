// Smoke test: the main window opens the bundled demo (written into a temp dir on the worker
// thread), indexes and analyses it, and every view is filled and points at the NormHead SqrtGrad.
#include <QImage>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>

#include "tests/ui/isolated_app_state.h"

#include "ui/mainwindow.h"
#include "ui/models/chain_model.h"
#include "ui/models/dump_session.h"
#include "ui/models/op_table_model.h"
#include "ui/util/state_colors.h"
#include "ui/views/chain_view.h"
#include "ui/views/op_table_panel.h"
#include "ui/views/tensor_panel.h"
#include "ui/views/timeline_panel.h"
#include "ui/views/timeline_widget.h"
#include "ui/views/verdict_banner.h"

using namespace dlui;

class TstMainWindowSmoke : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() {
        QVERIFY(m_tmp.isValid());
        isolateAppState(m_tmp.path(), QStringLiteral("dumplens-smoke"));
    }

    void opensDemoAndFillsEveryView() {
        MainWindow w;
        w.resize(1500, 950);
        w.show();
        QVERIFY(MainWindow::demoRoot().startsWith(m_tmp.path()));
        w.openDemo();
        QTRY_VERIFY_WITH_TIMEOUT(w.session()->analysis() != nullptr, 600000);
        QTRY_VERIFY_WITH_TIMEOUT(!w.isBusy(), 60000);
        const dl::DumpIndex* ix = w.session()->index();
        QVERIFY(ix && !ix->ops.empty());

        // Verdict banner: the NormHead's SqrtGrad.
        const QString banner = w.banner()->text();
        QVERIFY2(banner.contains(QStringLiteral("SqrtGrad")), qPrintable(banner));
        QVERIFY2(banner.contains(QStringLiteral("NormHead"), Qt::CaseInsensitive), qPrintable(banner));

        // The window selected the origin after the analysis.
        const dl::AnalysisResult* a = w.session()->analysis();
        QVERIFY(a->firstOverflow);
        QCOMPARE(w.session()->currentOp(), a->firstOverflow->op);

        // Timeline: lanes and ops, and the origin's colour is on screen.
        QTRY_VERIFY_WITH_TIMEOUT(!w.timelinePanel()->isBuilding(), 60000);
        const dl::TimelineData* tl = w.timelinePanel()->timeline();
        QVERIFY(tl && tl->opsShown > 0 && tl->lanes.size() >= 2);
        TimelineWidget* tw = w.timelinePanel()->timelineWidget();
        QImage img(tw->size(), QImage::Format_ARGB32);
        tw->render(&img);
        const QRgb origin = stateColor(dl::OpState::Origin).rgb();
        int originPixels = 0;
        for (int y = 0; y < img.height(); ++y)
            for (int x = 0; x < img.width(); ++x) originPixels += (img.pixel(x, y) & 0xffffff) == (origin & 0xffffff);
        QVERIFY2(originPixels > 0, "the origin op is not drawn");

        // Table: rows, and the selected row is the session's tensor.
        OpTableModel* model = w.opTable()->model();
        QVERIFY(model->rowCount() > 0);
        const QModelIndex cur = w.opTable()->view()->currentIndex();
        QVERIFY(cur.isValid());
        QCOMPARE(model->tensorAt(cur.row()), w.session()->currentTensor());

        // Tensor panel: header of the SqrtGrad and histograms plotted.
        QVERIFY2(w.tensorPanel()->headerText().contains(QStringLiteral("SqrtGrad")), qPrintable(w.tensorPanel()->headerText()));
        QVERIFY(w.tensorPanel()->plottedTensors() > 0);

        // Chain view: steps, the first is the origin.
        ChainModel* chain = w.chainView()->chainModel();
        QVERIFY(chain->rowCount() > 0);
        QCOMPARE(chain->index(0, ChainModel::Role).data().toString(), QStringLiteral("origin"));

        // Keyboard: W zooms in, Backspace undoes a range zoom, F fits the selected op.
        tw->setFocus();
        const double full = tw->viewport().span();
        QTest::keyClick(tw, Qt::Key_W);
        QVERIFY(tw->viewport().span() < full);
        QTest::keyClick(tw, Qt::Key_F);
        QVERIFY(tw->viewport().canUndo());
        QTest::keyClick(tw, Qt::Key_Backspace);
        QVERIFY(!tw->viewport().canUndo());

        // Selecting a table row moves the timeline selection.
        const int other = cur.row() == 0 ? 1 : 0;
        w.opTable()->view()->setCurrentIndex(model->index(other, 0));
        QCOMPARE(w.session()->currentTensor(), model->tensorAt(other));
        // (The row may be in another iteration: the timeline switches to it in the background.)
        QTRY_COMPARE_WITH_TIMEOUT(tw->selectedOp(), ix->tensors[model->tensorAt(other)].op, 60000);
    }

    void badFolderIsReportedNotFatal() {
        MainWindow w;
        w.openFolder(m_tmp.path() + QStringLiteral("/does-not-exist"));
        QVERIFY(!w.isBusy());
        QVERIFY(w.session()->index() == nullptr);
    }

private:
    QTemporaryDir m_tmp;
};

QTEST_MAIN(TstMainWindowSmoke)
#include "tst_mainwindow_smoke.moc"
