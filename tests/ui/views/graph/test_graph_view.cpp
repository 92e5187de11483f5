// The Graph dock on the demo dump (which carries graph IR): the origin's neighbourhood as
// op_graph builds it, laid out left to right along every edge, a click on a node selecting that
// op; on a dump without IR a one-line message says why.
#include <QDir>
#include <QFile>
#include <QGraphicsView>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTemporaryDir>
#include <QTest>
#include <set>
#include <tuple>

#include "tests/core/shared_demo.h"

#include "core/analysis/overflow_analyzer.h"
#include "core/analysis/rank_dataflow.h"
#include "core/query/op_graph.h"
#include "core/query/op_state.h"
#include "tests/ui/indexed_dump.h"
#include "tests/ui/statistic_csv_fixture.h"
#include "ui/models/dump_session.h"
#include "ui/views/graph/graph_view.h"

using namespace dlui;

namespace {

// Indexed and analysed as the app's loader does (ui/jobs/dump_loader.cpp), outside the app.
LoadedDumpPtr openDump(const QString& dir) {
    const auto d = dltest::indexedDump(dir);
    if (!d->ok) return d;
    auto analysis = std::make_shared<dl::AnalysisResult>(dl::analyze(*d->index));
    d->states =
        std::make_shared<dl::OpStates>(dl::computeOpStates(*d->index, analysis.get(), analysis->nearLimitThreshold));
    d->analysis = analysis;
    return d;
}

// The shared demo dump (tests/core/shared_demo.h) through openDump; not ok, with the reason, when
// the demo cannot be written.
LoadedDumpPtr openDemo() {
    dl::demo::DemoVariantInfo info;
    try {
        return openDump(QString::fromStdString(dltest::sharedDemoVariant(dl::demo::DemoOptions{}, info)));
    } catch (const std::exception& e) {
        auto d = std::make_shared<LoadedDump>();
        d->error = QString::fromUtf8(e.what());
        return d;
    }
}

using NodeKey = std::tuple<std::string, std::uint32_t, int, int>;  // name, op, distance, state

std::set<NodeKey> keys(const dl::OpGraph& g) {
    std::set<NodeKey> s;
    for (const auto& n : g.nodes) s.insert({n.name, n.op, n.distance, int(n.state)});
    return s;
}

}  // namespace

class TstGraphView : public QObject {
    Q_OBJECT
private slots:
    void demoOriginNeighbourhoodLayeredAndClickable() {
        const LoadedDumpPtr d = openDemo();
        QVERIFY2(d->ok, qPrintable(d->error));
        QVERIFY(d->analysis->firstOverflow);
        const quint32 origin = d->analysis->firstOverflow->op;

        DumpSession session;
        GraphView view(&session);
        view.resize(1200, 500);
        view.show();
        session.setDump(d);
        QTRY_VERIFY_WITH_TIMEOUT(!view.isBuilding(), 60000);
        QVERIFY2(view.message().isEmpty(), qPrintable(view.message()));
        QCOMPARE(view.centreOp(), origin);

        // The nodes are op_graph's for the origin at 2 hops, computed here on a reader of our own.
        dl::RankDataflow flow(*d->index);
        dl::OpGraph expect;
        std::string error;
        QVERIFY2(dl::buildOpGraph(*d->index, d->analysis.get(), *d->states, flow, origin, GraphView::kDefaultHops,
                                  expect, error),
                 error.c_str());
        const dl::OpGraph& g = view.graph();
        QCOMPARE(g.nodes.size(), expect.nodes.size());
        QVERIFY(keys(g) == keys(expect));
        QCOMPARE(g.edges.size(), expect.edges.size());
        int producers = 0, consumers = 0;
        for (const auto& n : g.nodes) (n.distance < 0 ? producers : consumers) += n.distance != 0;
        QVERIFY2(producers > 0 && consumers > 0, "the demo origin has producers and consumers in its IR");
        // Every input the analysis joined to a producing dump op is a producer node one hop away.
        for (const dl::OriginInput& in : d->analysis->originInputs) {
            if (in.producerOp == dl::kNoIndex) continue;
            bool found = false;
            for (const auto& n : g.nodes) found |= n.op == in.producerOp && n.distance == -1;
            QVERIFY2(found, in.producer.c_str());
        }

        // Left to right: along every edge (none of the demo's is a cycle) the layer and x increase.
        const dl::OpGraphLayout& l = view.layout();
        QCOMPARE(l.layer.size(), g.nodes.size());
        for (std::size_t e = 0; e < g.edges.size(); ++e) {
            const auto& ed = g.edges[e];
            QVERIFY(!l.backEdge[e]);
            QVERIFY2(l.layer[ed.to] > l.layer[ed.from],
                     qPrintable(QStringLiteral("edge %1 -> %2").arg(ed.from).arg(ed.to)));
            QVERIFY(view.nodeViewportPos(int(ed.to)).x() > view.nodeViewportPos(int(ed.from)).x());
            // Its route steps one layer at a time (a dummy per layer crossed).
            QCOMPARE(int(l.route[e].size()), l.layer[ed.to] - l.layer[ed.from] + 1);
        }
        // Producers sit left of the centre, consumers right of it.
        for (std::size_t i = 0; i < g.nodes.size(); ++i) {
            if (g.nodes[i].distance < 0) QVERIFY(l.layer[i] < l.layer[0]);
            if (g.nodes[i].distance > 0) QVERIFY(l.layer[i] > l.layer[0]);
        }

        // A click on a dumped producer selects its op.
        int target = -1;
        for (std::size_t i = 1; i < g.nodes.size() && target < 0; ++i)
            if (g.nodes[i].op != dl::kNoIndex && g.nodes[i].op != origin) target = int(i);
        QVERIFY(target > 0);
        const quint32 targetOp = g.nodes[std::size_t(target)].op;
        view.canvas()->centerOn(view.canvas()->mapToScene(view.nodeViewportPos(target)));
        QSignalSpy spy(&session, &DumpSession::selectionChanged);
        QTest::mouseClick(view.canvas()->viewport(), Qt::LeftButton, {}, view.nodeViewportPos(target));
        QCOMPARE(spy.count(), 1);
        QCOMPARE(spy.at(0).at(0).value<quint32>(), targetOp);
        QCOMPARE(session.currentOp(), targetOp);

        // Following the selection: an op outside the view becomes the centre of a new graph.
        quint32 outside = dl::kNoIndex;
        for (quint32 op = 0; op < d->index->ops.size() && outside == dl::kNoIndex; ++op) {
            bool in = false;
            for (const auto& n : view.graph().nodes) in |= n.op == op;
            dl::OpGraph probe;
            if (!in && d->index->ops[op].rank == d->index->ops[origin].rank &&
                dl::buildOpGraph(*d->index, d->analysis.get(), *d->states, flow, op, 1, probe, error))
                outside = op;
        }
        QVERIFY(outside != dl::kNoIndex);
        session.select(outside);
        QTRY_VERIFY_WITH_TIMEOUT(!view.isBuilding() && view.centreOp() == outside, 60000);
        QCOMPARE(view.graph().nodes.front().op, outside);
    }

    // Issue 30: the Hops box (1-6, as `dumplens-cli graph --hops`) rebuilds the graph around the
    // same op on the worker: node for node op_graph's at those hops with the tab's cap.
    void hopsControlRebuildsAroundTheSameOp() {
        const LoadedDumpPtr d = openDemo();
        QVERIFY2(d->ok, qPrintable(d->error));
        const quint32 origin = d->analysis->firstOverflow->op;
        DumpSession session;
        GraphView view(&session);
        view.resize(1000, 420);
        view.show();
        session.setDump(d);
        QTRY_VERIFY_WITH_TIMEOUT(!view.isBuilding(), 60000);
        QCOMPARE(view.hops(), GraphView::kDefaultHops);
        QCOMPARE(view.hopsBox()->value(), GraphView::kDefaultHops);
        QCOMPARE(view.hopsBox()->minimum(), 1);
        QCOMPARE(view.hopsBox()->maximum(), 6);
        dl::RankDataflow flow(*d->index);
        std::size_t previous = 0;
        for (const int hops : {1, 3, 6}) {
            view.hopsBox()->setValue(hops);
            QCOMPARE(view.hops(), hops);
            QTRY_VERIFY_WITH_TIMEOUT(!view.isBuilding(), 60000);
            QCOMPARE(view.centreOp(), origin);
            dl::OpGraph expect;
            std::string error;
            QVERIFY2(dl::buildOpGraph(*d->index, d->analysis.get(), *d->states, flow, origin, hops, expect, error,
                                      dl::kMaxGraphNodes),
                     error.c_str());
            QVERIFY(keys(view.graph()) == keys(expect));
            QCOMPARE(view.graph().edges.size(), expect.edges.size());
            QCOMPARE(view.graph().requestedHops, hops);
            QVERIFY2(view.graph().nodes.size() >= previous, "more hops never hold fewer nodes");
            previous = view.graph().nodes.size();
            QVERIFY2(view.summary().startsWith(QStringLiteral("%1 nodes, %2 edges within %3 hop")
                                                   .arg(expect.nodes.size())
                                                   .arg(expect.edges.size())
                                                   .arg(expect.hops)),
                     qPrintable(view.summary()));
        }
        view.hopsBox()->setValue(9);  // the box clamps
        QCOMPARE(view.hops(), 6);
    }

    void dumpWithoutIrSaysSo() {
        QTemporaryDir tmp;
        QVERIFY(tmp.isValid());
        QVERIFY(dltest::writeStatisticCsv(
            tmp.path() + QStringLiteral("/rank_0/Net/0/0"),
            "Add,Add-op1,7,2,1700000000000100,output,0,8,float16,\"(4)\",70000,1,2,4,0,4,0,0,0,0\n"));
        const LoadedDumpPtr d = openDump(tmp.path());
        QVERIFY2(d->ok, qPrintable(d->error));
        DumpSession session;
        GraphView view(&session);
        view.resize(800, 300);
        view.show();
        session.setDump(d);
        session.select(0);
        QTRY_VERIFY_WITH_TIMEOUT(!view.isBuilding(), 60000);
        const QString msg = view.message();
        QVERIFY2(msg.contains(QStringLiteral("no graph IR for rank 0")), qPrintable(msg));
        QVERIFY2(msg.contains(QStringLiteral("graph IR")) && !msg.contains(QLatin1Char('\n')), qPrintable(msg));
        QVERIFY(view.graph().nodes.empty());
        QVERIFY(!view.canvas()->isVisible());
    }
};

QTEST_MAIN(TstGraphView)
#include "test_graph_view.moc"
