// Every item model of the app under QAbstractItemModelTester, on a small synthetic index.
#include <QAbstractItemModelTester>
#include <QTest>
#include <limits>

#include "core/stats/stats_accumulator.h"

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
    // Max |x| counts infinities, all-NaN tensors show nan, and both lead a descending sort; the Op
    // column shows the short op with its scope beside it and the full name in the tooltip.
    void opTableFiguresAndNames() {
        dl::DumpIndex ix;
        const char* names[] = {"Default_network-Net_layer1_Add-op1", "Default_network-Net_head_SqrtGrad-op520",
                               "Mul-op3"};
        const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
        const std::vector<std::vector<double>> values = {{2430, -7, inf}, {nan, nan}, {3, -65000}};
        for (std::uint32_t k = 0; k < 3; ++k) {
            dl::OpRecord o;
            o.type = ix.strings.intern("Add");
            o.name = ix.strings.intern(names[k]);
            o.execPos = k;
            o.firstTensor = k;
            o.tensorCount = 1;
            dl::TensorRecord t;
            t.op = k;
            t.io = dl::Io::Output;
            t.dtype = dl::DType::Float32;
            dl::StatsAccumulator acc;
            acc.add(values[k].data(), values[k].size(), dl::DType::Float64);
            ix.setStats(t, acc.stats());
            ix.tensors.push_back(t);
            ix.ops.push_back(o);
        }
        const dl::OpStates st = dl::computeOpStates(ix, nullptr);
        OpTableModel m;
        QAbstractItemModelTester tester(&m, QAbstractItemModelTester::FailureReportingMode::QtTest);
        m.setSource(&ix, &st, nullptr);
        const int maxAbs = int(dl::OpColumn::MaxAbs), op = int(dl::OpColumn::Op);
        QCOMPARE(m.index(0, maxAbs).data().toString(), QStringLiteral("inf"));  // not 2430
        QCOMPARE(m.index(0, int(dl::OpColumn::Max)).data().toString(), QStringLiteral("inf"));
        QCOMPARE(m.index(0, int(dl::OpColumn::Min)).data().toString(), QStringLiteral("-7"));
        QCOMPARE(m.index(1, maxAbs).data().toString(), QStringLiteral("nan"));
        QCOMPARE(m.index(2, maxAbs).data().toString(), QStringLiteral("65000"));
        m.sort(maxAbs, Qt::DescendingOrder);
        QCOMPARE(m.tensorAt(0), 1u);  // all NaN
        QCOMPARE(m.tensorAt(1), 0u);  // holds +Inf
        QCOMPARE(m.tensorAt(2), 2u);
        const int sqrt = m.rowOfTensor(1);
        QCOMPARE(m.index(sqrt, op).data().toString(), QStringLiteral("SqrtGrad-op520"));
        QCOMPARE(m.index(sqrt, op).data(OpTableModel::ScopeRole).toString(),
                 QStringLiteral("Default_network-Net_head"));
        QCOMPARE(m.index(sqrt, op).data(Qt::ToolTipRole).toString(), QString::fromLatin1(names[1]));
        QCOMPARE(m.index(m.rowOfTensor(2), op).data(OpTableModel::ScopeRole).toString(), QString());
        const QStringList tsv = m.rowsAsTsv({sqrt}).split(QLatin1Char('\n'), Qt::SkipEmptyParts);
        QCOMPARE(tsv.size(), 2);
        QCOMPARE(tsv[1].split(QLatin1Char('\t')).at(op), QString::fromLatin1(names[1]));
        QCOMPARE(tsv[1].split(QLatin1Char('\t')).at(maxAbs), QStringLiteral("nan"));
    }

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
        // Unsorted rows are found by binary search: every row's tensor maps back to its row, every
        // other tensor to -1, and the matching ops are those of the kept rows.
        std::vector<quint32> keptOps;
        for (quint32 t = 0; t < ix.tensors.size(); ++t) {
            int row = -1;
            for (int r = 0; r < m.rowCount(); ++r)
                if (m.tensorAt(r) == t) row = r;
            QCOMPARE(m.rowOfTensor(t), row);
            if (row >= 0 && (keptOps.empty() || keptOps.back() != ix.tensors[t].op))
                keptOps.push_back(ix.tensors[t].op);
        }
        QCOMPARE(m.matchingOps(), keptOps);
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
        for (int r = 0; r < m.rowCount(); ++r) QCOMPARE(m.rowOfTensor(m.tensorAt(r)), r);
        // Column -1 (QTableView::sortByColumn(-1)) is execution order again, and stays so after a filter.
        m.sort(-1, Qt::AscendingOrder);
        for (int r = 1; r < m.rowCount(); ++r) QVERIFY(m.tensorAt(r - 1) < m.tensorAt(r));
        f = {};
        QVERIFY(m.setFilter(f, err));
        QCOMPARE(m.rowCount(), 20);
        for (int r = 0; r < m.rowCount(); ++r) QCOMPARE(m.tensorAt(r), quint32(r));
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
#include "test_models.moc"
