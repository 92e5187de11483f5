// The compare window's summary bar on two small runs built here: runs whose ops match nothing are
// a warning saying why (as the CLI fails on them), never the green "No divergence" that a run
// compared with itself shows.
#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QTest>

#include "core/compare/run_comparison.h"
#include "tests/ui/indexed_dump.h"
#include "ui/models/compare_session.h"
#include "ui/views/compare/compare_summary_bar.h"

using namespace dlui;

namespace {

const char* kHeader =
    "Op Type,Op Name,Task ID,Stream ID,Timestamp,IO,Slot,Data Size,Data Type,Shape,Max Value,Min Value,Avg Value,"
    "Count,Negative Zero Count,Positive Zero Count,NaN Count,Negative Inf Count,Positive Inf Count,Zero Count\n";

// A one-rank statistic.csv dump with one op `type`/`name` (one output of 4 fp16 values).
LoadedDumpPtr openRun(const QString& dir, const QString& type, const QString& name) {
    const QString it = dir + QStringLiteral("/rank_0/Net/0/0");
    QDir().mkpath(it);
    QFile f(it + QStringLiteral("/statistic.csv"));
    if (!f.open(QIODevice::WriteOnly)) return nullptr;
    f.write(kHeader);
    f.write(QStringLiteral("%1,%2,7,2,1700000000000100,output,0,8,float16,\"(4)\",3,1,2,4,0,4,0,0,0,0\n")
                .arg(type, name)
                .toUtf8());
    f.close();
    return dltest::indexedDump(dir);
}

}  // namespace

class TstCompareSummary : public QObject {
    Q_OBJECT
private slots:
    void nothingMatchedIsAWarningWithTheReason() {
        QTemporaryDir tmp;
        const LoadedDumpPtr a =
            openRun(tmp.filePath(QStringLiteral("a")), QStringLiteral("Add"), QStringLiteral("Add-op1"));
        const LoadedDumpPtr b =
            openRun(tmp.filePath(QStringLiteral("b")), QStringLiteral("MatMul"), QStringLiteral("MatMul-op9"));
        QVERIFY(a && a->ok && b && b->ok);
        auto runs = std::make_shared<ComparedRuns>();
        runs->a = a;
        runs->b = b;
        runs->comparison = std::make_shared<dl::RunComparison>(dl::compareRuns(*a->index, *b->index, {}));
        runs->ok = true;
        QVERIFY(runs->comparison->alignment.ops.empty());  // what the CLI exits 1 on
        QVERIFY(runs->comparison->rows.empty());
        CompareSession session;
        CompareSummaryBar bar(&session);
        session.setRuns(runs);
        const QString text = bar.text();
        QVERIFY2(!text.contains(QStringLiteral("No divergence")), qPrintable(text));
        QVERIFY2(text.contains(QStringLiteral("Nothing was compared")), qPrintable(text));
        QVERIFY2(text.contains(QStringLiteral("no op of run A could be matched with run B (A has %1 ops, B has %2)")
                                   .arg(a->index->ops.size())
                                   .arg(b->index->ops.size())),
                 qPrintable(text));
        QVERIFY2(!bar.styleSheet().contains(QStringLiteral("#e6f6ea")), qPrintable(bar.styleSheet()));  // not green

        // The same run on both sides: every tensor matched and agrees, the green state.
        auto same = std::make_shared<ComparedRuns>(*runs);
        same->b = a;
        same->comparison = std::make_shared<dl::RunComparison>(dl::compareRuns(*a->index, *a->index, {}));
        QCOMPARE(same->comparison->rows.size(), a->index->tensors.size());
        session.setRuns(same);
        QVERIFY2(bar.text().contains(QStringLiteral("No divergence")), qPrintable(bar.text()));
        QVERIFY(bar.styleSheet().contains(QStringLiteral("#e6f6ea")));
    }
};

QTEST_MAIN(TstCompareSummary)
#include "test_compare_summary.moc"
