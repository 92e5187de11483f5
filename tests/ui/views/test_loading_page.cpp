// The loading page's bar (issue 27): indeterminate while the folder is walked, determinate from the
// indexer's first progress call on, once the file count is known, even for a dump whose whole
// index is the listing pass (statistic.csv only, no tensor file to read).
#include <QDir>
#include <QFile>
#include <QProgressBar>
#include <QTemporaryDir>
#include <QTest>

#include "core/index/dump_indexer.h"
#include "tests/ui/statistic_csv_fixture.h"
#include "ui/views/loading_page.h"

using namespace dlui;

class TstLoadingPage : public QObject {
    Q_OBJECT
private slots:
    void determinateOnceTheFileCountIsKnown() {
        QTemporaryDir tmp;
        QVERIFY(tmp.isValid());
        constexpr int kRanks = 3;
        for (int r = 0; r < kRanks; ++r) {
            QVERIFY(dltest::writeStatisticCsv(
                tmp.path() + QStringLiteral("/rank_%1/Net/0/0").arg(r),
                "Add,Add-op1,7,2,1700000000000100,output,0,8,float16,\"(4)\",3,1,2,4,0,4,0,0,0,0\n"));
        }
        LoadingPage page;
        page.begin(tmp.path());
        QVERIFY(!page.isDeterminate());
        dl::IndexOptions opt;
        opt.useCache = false;
        opt.threads = 1;
        int calls = 0;
        quint64 total = 0;
        bool determinateAtFirst = false;
        opt.progress = [&](const dl::Progress& p) {  // on this thread: the indexer calls it serialised
            page.setProgress(p.filesDone, p.filesTotal, p.bytesDone, p.bytesTotal, int(p.phase));
            if (++calls == 1) determinateAtFirst = page.isDeterminate() && page.barValue() == 0;
            total = p.filesTotal;
        };
        dl::DumpIndex index;
        dl::IndexReport report;
        std::string error;
        QVERIFY2(dl::indexDump(tmp.path().toStdString(), opt, index, report, error), error.c_str());
        QCOMPARE(index.ops.size(), std::size_t(kRanks));
        QVERIFY(calls >= 2);
        QVERIFY(determinateAtFirst);
        QCOMPARE(total, quint64(kRanks));  // the three statistic.csv files
        QCOMPARE(page.barValue(), 1000);
        QVERIFY(page.findChild<QProgressBar*>()->maximum() > 0);
    }
};

QTEST_MAIN(TstLoadingPage)
#include "test_loading_page.moc"
