// Every item model of the app under QAbstractItemModelTester, on a small synthetic index.
#include <QAbstractItemModelTester>
#include <QTest>

#include "ui/models/chain_model.h"
#include "ui/models/issues_model.h"
#include "ui/models/op_table_model.h"
#include "ui/models/replay_model.h"

using namespace dlui;

namespace {

dl::DumpIndex makeIndex() {
    dl::DumpIndex ix;
    const char* types[] = {"MatMul", "Add", "SqrtGrad", "Send", "Receive"};
    for (std::uint32_t r = 0; r < 2; ++r)
        for (std::uint32_t k = 0; k < 5; ++k) {
            dl::OpRecord o;
            o.rank = r;
            o.iteration = k % 2;
            o.type = ix.strings.intern(types[k]);
            o.name = ix.strings.intern(std::string(types[k]) + "-op" + std::to_string(k));
            o.execPos = k;
            o.startUs = 1000 * (r + 1) + 10 * k;
            o.endUs = o.startUs + 4;
            o.firstTensor = static_cast<std::uint32_t>(ix.tensors.size());
            o.tensorCount = 2;
            for (int io = 0; io < 2; ++io) {
                dl::TensorRecord t;
                t.op = static_cast<std::uint32_t>(ix.ops.size());
                t.io = io ? dl::Io::Output : dl::Io::Input;
                t.dtype = dl::DType::Float16;
                t.ndim = 2;
                t.shapeOffset = static_cast<std::uint32_t>(ix.dims.size());
                ix.dims.push_back(4);
                ix.dims.push_back(8);
                dl::TensorStats s;
                s.maxAbs = (k == 2 && io) ? 65504 : 10.0 * (k + 1);
                s.min = -s.maxAbs;
                s.max = s.maxAbs;
                s.satCount = (k == 2 && io) ? 12 : 0;
                s.count = 32;
                s.known = dl::stat::AllFromData & ~dl::stat::Histogram;
                ix.setStats(t, s);
                ix.tensors.push_back(t);
            }
            ix.ops.push_back(o);
        }
    ix.warnings.push_back({"rank_1/x.npy", "truncated payload"});
    return ix;
}

dl::AnalysisResult makeAnalysis() {
    dl::AnalysisResult a;
    a.overflow = true;
    dl::OverflowPoint p;
    p.op = 2;
    p.tensor = 5;
    p.kind = dl::AnomalyKind::Saturated;
    a.firstOverflow = p;
    a.stages.stageOfRank = {{0, 0}, {1, 1}};
    a.stages.stageCount = 2;
    a.chain.push_back({dl::ChainRole::Origin, p, "first saturated output"});
    dl::OverflowPoint q = p;
    q.op = 3;
    a.chain.push_back({dl::ChainRole::Send, q, "sent on"});
    q.op = 9;
    q.rank = 1;
    a.chain.push_back({dl::ChainRole::Receive, q, "received"});
    dl::ReplayResult r;
    r.available = true;
    r.opType = "SqrtGrad";
    for (dl::DType t : {dl::DType::Float16, dl::DType::BFloat16, dl::DType::Float32}) {
        dl::ReplayPrecisionResult pr;
        pr.dtype = t;
        pr.maxAbs = t == dl::DType::Float16 ? NAN : 95160;
        pr.overflow = t == dl::DType::Float16;
        r.results.push_back(pr);
    }
    a.replay = r;
    a.warnings.push_back("stage map guessed");
    return a;
}

}  // namespace

class TstModels : public QObject {
    Q_OBJECT
private slots:
    void opTableModel() {
        const dl::DumpIndex ix = makeIndex();
        const dl::AnalysisResult a = makeAnalysis();
        const dl::OpStates st = dl::computeOpStates(ix, &a);
        OpTableModel m;
        QAbstractItemModelTester tester(&m, QAbstractItemModelTester::FailureReportingMode::QtTest);
        QCOMPARE(m.rowCount(), 0);
        m.setSource(&ix, &st, &a.stages);
        QCOMPARE(m.rowCount(), 20);
        QCOMPARE(m.columnCount(), static_cast<int>(dl::OpColumn::Count));
        QCOMPARE(m.index(5, static_cast<int>(dl::OpColumn::State)).data().toString(), QStringLiteral("origin"));
        QCOMPARE(m.index(5, static_cast<int>(dl::OpColumn::Shape)).data().toString(), QStringLiteral("[4,8]"));
        dl::OpFilter f;
        f.text = "sqrt";
        QString err;
        QVERIFY(m.setFilter(f, err));
        QCOMPARE(m.rowCount(), 4);
        f.text = "([";
        f.regex = true;
        QVERIFY(!m.setFilter(f, err));
        QVERIFY(err.contains(QStringLiteral("invalid regular expression")));
        QCOMPARE(m.rowCount(), 4);  // unchanged
        f = {};
        f.stage = 1;
        QVERIFY(m.setFilter(f, err));
        QCOMPARE(m.rowCount(), 10);
        m.sort(static_cast<int>(dl::OpColumn::MaxAbs), Qt::DescendingOrder);
        QCOMPARE(m.index(0, static_cast<int>(dl::OpColumn::MaxAbs)).data().toString(), QStringLiteral("65504"));
        QCOMPARE(m.rowOfTensor(m.tensorAt(3)), 3);
        m.setSource(nullptr, nullptr, nullptr);
        QCOMPARE(m.rowCount(), 0);
    }
    void chainAndReplayModels() {
        const dl::DumpIndex ix = makeIndex();
        const dl::AnalysisResult a = makeAnalysis();
        ChainModel chain;
        ReplayModel replay;
        QAbstractItemModelTester t1(&chain, QAbstractItemModelTester::FailureReportingMode::QtTest);
        QAbstractItemModelTester t2(&replay, QAbstractItemModelTester::FailureReportingMode::QtTest);
        chain.setSource(&ix, &a);
        replay.setSource(&a);
        QCOMPARE(chain.rowCount(), 3);
        QCOMPARE(chain.index(0, ChainModel::Op).data().toString(), QStringLiteral("SqrtGrad-op2 (SqrtGrad)"));
        QCOMPARE(chain.index(2, ChainModel::Role).data().toString(), QStringLiteral("receive"));
        QCOMPARE(chain.index(2, 0).data(ChainModel::OpRole).toUInt(), 9u);
        QCOMPARE(replay.rowCount(), 3);
        QCOMPARE(replay.index(0, ReplayModel::Overflow).data().toString(), QStringLiteral("yes"));
        QCOMPARE(replay.index(1, ReplayModel::Precision).data().toString(), QStringLiteral("bfloat16"));
        chain.setSource(&ix, nullptr);
        replay.setSource(nullptr);
        QCOMPARE(chain.rowCount(), 0);
        QCOMPARE(replay.rowCount(), 0);
    }
    void issuesModel() {
        auto d = std::make_shared<LoadedDump>();
        d->ok = true;
        d->index = std::make_shared<dl::DumpIndex>(makeIndex());
        d->analysis = std::make_shared<dl::AnalysisResult>(makeAnalysis());
        d->report.cacheNotes.push_back("cache rebuilt: version changed");
        IssuesModel m;
        QAbstractItemModelTester tester(&m, QAbstractItemModelTester::FailureReportingMode::QtTest);
        m.setDump(d.get());
        QCOMPARE(m.rowCount(), 3);
        QCOMPARE(m.index(0, IssuesModel::Reason).data().toString(), QStringLiteral("truncated payload"));
        m.addError(QStringLiteral("open"), QStringLiteral("/nope"), QStringLiteral("not a folder"));
        QCOMPARE(m.rowCount(), 4);
        m.clear();
        QCOMPARE(m.rowCount(), 0);
    }
};

QTEST_GUILESS_MAIN(TstModels)
#include "tst_models.moc"
