// The PDF report, offscreen: the demo dump's report read back with poppler (pdftotext, pdfinfo,
// pdfimages) and qpdf (outline, structure); the clean twin's short report; the headless CLI; the
// app's File > Export report… path (MainWindow::writeReport).
#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>

#include "core/analysis/overflow_analyzer.h"
#include "core/demo/demo_dumps.h"
#include "core/index/dump_indexer.h"
#include "tests/core/shared_demo.h"
#include "tests/ui/statistic_csv_fixture.h"
#include "ui/main_window.h"
#include "ui/models/dump_session.h"
#include "ui/report/report_renderer.h"

using namespace dlui;

namespace {

struct Run {
    dl::demo::DemoVariantInfo info;
    dl::DumpIndex index;
    dl::AnalysisResult analysis;
    QString root;
};

QString tool(const QString& program, const QStringList& args, int* exitCode = nullptr,
             const QProcessEnvironment* env = nullptr) {
    QProcess p;
    if (env) p.setProcessEnvironment(*env);
    p.setProcessChannelMode(QProcess::MergedChannels);
    p.start(program, args);
    if (!p.waitForFinished(300000)) return QStringLiteral("<%1 did not finish: %2>").arg(program, p.errorString());
    if (exitCode) *exitCode = p.exitCode();
    return QString::fromUtf8(p.readAll());
}

int pdfPages(const QString& pdf) {
    const QRegularExpressionMatch m =
        QRegularExpression(QStringLiteral("Pages:\\s+(\\d+)")).match(tool(QStringLiteral("pdfinfo"), {pdf}));
    return m.hasMatch() ? m.captured(1).toInt() : -1;
}

QStringList outlineTitles(const QString& pdf) {
    const QString json =
        tool(QStringLiteral("qpdf"), {QStringLiteral("--json"), QStringLiteral("--json-key=outlines"), pdf});
    QStringList titles;
    for (const QJsonValue& v :
         QJsonDocument::fromJson(json.toUtf8()).object().value(QStringLiteral("outlines")).toArray())
        titles << v.toObject().value(QStringLiteral("title")).toString();
    return titles;
}

}  // namespace

class TstReport : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() {
        QVERIFY(m_tmp.isValid());
        load(m_overflow, dl::demo::DemoOptions{});
        dl::demo::DemoOptions clean;
        clean.sqrtGradPrecision = dl::DType::BFloat16;
        load(m_clean, clean);
        QVERIFY(m_overflow.analysis.overflow);
        QVERIFY(!m_clean.analysis.overflow);
    }

    void demoReportHasTheFindingsAsText() {
        const QString pdf = m_tmp.filePath(QStringLiteral("demo.pdf"));
        ReportRenderInfo info;
        QString error;
        QVERIFY2(writeReportPdf(m_overflow.index, m_overflow.analysis, {}, pdf, info, error), qPrintable(error));
        const QString text = tool(QStringLiteral("pdftotext"), {QStringLiteral("-layout"), pdf, QStringLiteral("-")});
        QVERIFY2(text.contains(QStringLiteral("SqrtGrad")), qPrintable(text.left(2000)));
        QVERIFY(text.contains(QString::fromStdString(m_overflow.info.culpritShortName)));
        QVERIFY2(text.contains(QStringLiteral("on rank %1").arg(m_overflow.info.culpritRank)),
                 qPrintable(text.left(2000)));
        QVERIFY(text.contains(QStringLiteral("iteration %1").arg(m_overflow.info.firstOverflowIteration)));
        QVERIFY(text.contains(QStringLiteral("Recommendation")));
        QVERIFY(text.contains(QStringLiteral("bfloat16")));
        QVERIFY(text.contains(QStringLiteral("DumpLens " DUMPLENS_VERSION)));
        QVERIFY(text.contains(QDate::currentDate().toString(QStringLiteral("yyyy-MM-dd"))));
        QVERIFY(text.contains(QStringLiteral("Page 1 of %1").arg(info.pages)));
        for (const char* section : {"First overflow", "Run", "Chain across stages", "Timeline around the origin",
                                    "Replay and recommendation", "Near the fp16 limit", "Evidence and warnings"})
            QVERIFY2(info.sections.end() != std::find(info.sections.begin(), info.sections.end(), std::string(section)),
                     section);

        // Page count and outline as independent readers see them.
        QCOMPARE(pdfPages(pdf), info.pages);
        QVERIFY(info.pages >= 3);
        QStringList expected;
        for (const auto& s : info.sections) expected << QString::fromStdString(s);
        QCOMPARE(outlineTitles(pdf), expected);
        int rc = -1;
        const QString check = tool(QStringLiteral("qpdf"), {QStringLiteral("--check"), pdf}, &rc);
        QVERIFY2(rc == 0, qPrintable(check));
        // Plots and diagrams are vector graphics: no raster image anywhere in the file.
        const QString images = tool(QStringLiteral("pdfimages"), {QStringLiteral("-list"), pdf});
        QCOMPARE(images.trimmed().split(QLatin1Char('\n')).size(), 2);  // the two header lines only
        QVERIFY(tool(QStringLiteral("pdfinfo"), {pdf}).contains(QStringLiteral("595 x 842 pts (A4)")));
    }

    // Issue 30: the origin's IR neighbourhood as a figure, on its own page with its heading; the
    // names on it are the origin's and those of the producers the analysis joined from the IR.
    void demoReportHasTheOriginGraph() {
        const QString pdf = m_tmp.filePath(QStringLiteral("graph.pdf"));
        ReportRenderInfo info;
        QString error;
        QVERIFY2(writeReportPdf(m_overflow.index, m_overflow.analysis, {}, pdf, info, error), qPrintable(error));
        QVERIFY(std::find(info.sections.begin(), info.sections.end(), std::string("Graph around the origin")) !=
                info.sections.end());
        QString page;
        for (int i = 1; i <= info.pages && page.isEmpty(); ++i) {
            const QString text = tool(QStringLiteral("pdftotext"),
                                      {QStringLiteral("-f"), QString::number(i), QStringLiteral("-l"),
                                       QString::number(i), pdf, QStringLiteral("-")});
            if (text.contains(QStringLiteral("Graph around the origin"))) page = text;
        }
        QVERIFY2(!page.isEmpty(), "no page holds the graph section");
        QVERIFY2(page.contains(QStringLiteral("Producers (left) and consumers (right)")), qPrintable(page));
        QVERIFY(!page.contains(QStringLiteral("no graph IR")));
        // The origin's box: its type and its short name.
        QVERIFY2(page.count(QString::fromStdString(m_overflow.info.culpritType)) >= 2, qPrintable(page));
        QVERIFY2(page.contains(QString::fromStdString(m_overflow.info.culpritShortName)), qPrintable(page));
        // Every kernel producing one of the origin's inputs has its box, by the short name of its scope.
        int producers = 0;
        for (const dl::OriginInput& in : m_overflow.analysis.originInputs) {
            if (in.source != "kernel") continue;
            const QString scoped = QString::fromStdString(in.producer);
            const QString shortName = scoped.mid(scoped.lastIndexOf(QLatin1Char('/')) + 1);
            QVERIFY2(page.contains(shortName), qPrintable(shortName + QStringLiteral(" not in:\n") + page));
            ++producers;
        }
        QVERIFY2(producers > 0, "the demo origin has kernel producers in its IR");
        // The worst figure of the origin's box: the 65504 it saturates at.
        QVERIFY2(page.contains(QStringLiteral("origin · ")), qPrintable(page));
    }

    // Without graph IR the section says so in a sentence instead of drawing an empty figure.
    void dumpWithoutIrSaysSoInTheReport() {
        QTemporaryDir tmp;
        QVERIFY(tmp.isValid());
        QVERIFY(dltest::writeStatisticCsv(
            tmp.path() + QStringLiteral("/rank_0/Net/0/0"),
            "Mul,Mul-op1,7,2,1700000000000000,output,0,8,float16,\"(4)\",100,1,2,4,0,4,0,0,0,0\n"
            "Add,Add-op2,7,2,1700000000000100,output,0,8,float16,\"(4)\",65504,1,2,4,0,4,0,0,0,0\n"));
        Run r;
        dl::IndexOptions io;
        io.useCache = false;
        dl::IndexReport report;
        std::string err;
        QVERIFY2(dl::indexDump(tmp.path().toStdString(), io, r.index, report, err), err.c_str());
        r.analysis = dl::analyze(r.index);
        QVERIFY(r.analysis.firstOverflow);
        const QString pdf = m_tmp.filePath(QStringLiteral("noir.pdf"));
        ReportRenderInfo info;
        QString error;
        QVERIFY2(writeReportPdf(r.index, r.analysis, {}, pdf, info, error), qPrintable(error));
        const QString text = tool(QStringLiteral("pdftotext"), {pdf, QStringLiteral("-")}).simplified();
        QVERIFY2(text.contains(QStringLiteral("Graph around the origin")), qPrintable(text));
        QVERIFY2(text.contains(QStringLiteral("The dump has no graph IR for rank 0")), qPrintable(text));
        QVERIFY(!text.contains(QStringLiteral("Producers (left) and consumers (right)")));
    }

    void letterPages() {
        const QString pdf = m_tmp.filePath(QStringLiteral("letter.pdf"));
        ReportRenderOptions opt;
        QVERIFY(parsePageSize(QStringLiteral("letter"), opt.pageSize));
        QPageSize::PageSizeId bogus;
        QVERIFY(!parsePageSize(QStringLiteral("A3"), bogus));
        ReportRenderInfo info;
        QString error;
        QVERIFY2(writeReportPdf(m_overflow.index, m_overflow.analysis, opt, pdf, info, error), qPrintable(error));
        QVERIFY(tool(QStringLiteral("pdfinfo"), {pdf}).contains(QStringLiteral("612 x 792 pts (letter)")));
        QCOMPARE(pdfPages(pdf), info.pages);
    }

    void cleanRunIsShortAndSaysSo() {
        const QString pdf = m_tmp.filePath(QStringLiteral("clean.pdf"));
        ReportRenderInfo info;
        QString error;
        QVERIFY2(writeReportPdf(m_clean.index, m_clean.analysis, {}, pdf, info, error), qPrintable(error));
        const QString text = tool(QStringLiteral("pdftotext"), {pdf, QStringLiteral("-")});
        QVERIFY2(text.contains(QStringLiteral("Clean run: no fp16 overflow found.")), qPrintable(text.left(2000)));
        QVERIFY(text.contains(QStringLiteral("Headroom")));
        QVERIFY(text.contains(QStringLiteral("of the fp16 max 65504")));
        QVERIFY(!text.contains(QStringLiteral("First overflow")));
        QVERIFY(info.pages <= 2);
        QCOMPARE(pdfPages(pdf), info.pages);
        QCOMPARE(outlineTitles(pdf).value(1), QStringLiteral("Headroom"));
    }

    void cliWritesTheReportWithoutADisplay() {
        const QString cli = QStringLiteral(DUMPLENS_CLI_PATH);  // a build dependency of this test
        QVERIFY2(QFileInfo::exists(cli), qPrintable(QStringLiteral("dumplens-cli not found: ") + cli));
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.remove(QStringLiteral("DISPLAY"));
        env.remove(QStringLiteral("WAYLAND_DISPLAY"));
        env.remove(QStringLiteral("QT_QPA_PLATFORM"));
        env.insert(QStringLiteral("XDG_CACHE_HOME"), m_tmp.filePath(QStringLiteral("cache")));
        const QString pdf = m_tmp.filePath(QStringLiteral("cli.pdf"));
        int rc = -1;
        const QString out =
            tool(cli,
                 {QStringLiteral("report"), m_overflow.root, QStringLiteral("-o"), pdf, QStringLiteral("--no-cache"),
                  QStringLiteral("--page-size"), QStringLiteral("Letter")},
                 &rc, &env);
        QVERIFY2(rc == 0, qPrintable(out));
        QVERIFY2(out.contains(QStringLiteral("Report written to")), qPrintable(out));
        QVERIFY(tool(QStringLiteral("pdftotext"), {pdf, QStringLiteral("-")}).contains(QStringLiteral("SqrtGrad")));
        QVERIFY(tool(QStringLiteral("pdfinfo"), {pdf}).contains(QStringLiteral("(letter)")));
        QVERIFY(!outlineTitles(pdf).isEmpty());
        const QString bad = tool(cli,
                                 {QStringLiteral("report"), m_overflow.root, QStringLiteral("-o"), pdf,
                                  QStringLiteral("--page-size"), QStringLiteral("A3")},
                                 &rc, &env);
        QCOMPARE(rc, 2);
        QVERIFY2(bad.contains(QStringLiteral("A4 or Letter")), qPrintable(bad));
        tool(cli, {QStringLiteral("report"), m_tmp.filePath(QStringLiteral("nope")), QStringLiteral("-o"), pdf}, &rc,
             &env);
        QVERIFY(rc != 0);
    }

    void appExportsTheSameReport() {
        qputenv("XDG_CACHE_HOME", m_tmp.filePath(QStringLiteral("app-cache")).toUtf8());
        qputenv("XDG_CONFIG_HOME", m_tmp.filePath(QStringLiteral("app-config")).toUtf8());
        QCoreApplication::setOrganizationName(QStringLiteral("DumpLensTest"));
        QCoreApplication::setApplicationName(QStringLiteral("dumplens-report-test"));
        MainWindow w;
        QString error;
        QVERIFY(!w.writeReport(m_tmp.filePath(QStringLiteral("none.pdf")), error));
        QVERIFY(!error.isEmpty());
        w.openFolder(m_overflow.root);
        QTRY_VERIFY_WITH_TIMEOUT(w.session()->analysis() != nullptr, 600000);
        QTRY_VERIFY_WITH_TIMEOUT(!w.isBusy(), 60000);
        const QString pdf = m_tmp.filePath(QStringLiteral("app.pdf"));
        QVERIFY2(w.writeReport(pdf, error), qPrintable(error));
        const QString text = tool(QStringLiteral("pdftotext"), {pdf, QStringLiteral("-")});
        QVERIFY(text.contains(QStringLiteral("SqrtGrad")));
        QVERIFY(text.contains(QStringLiteral("Recommendation")));
    }

private:
    // The variant as written once per ctest run (tests/core/shared_demo.h); only read here.
    void load(Run& r, const dl::demo::DemoOptions& o) {
        std::string error;
        try {
            r.root = QString::fromStdString(dltest::sharedDemoVariant(o, r.info));
        } catch (const std::exception& e) {
            QFAIL(e.what());
        }
        dl::IndexOptions io;
        io.useCache = false;
        dl::IndexReport report;
        QVERIFY2(dl::indexDump(r.root.toStdString(), io, r.index, report, error), error.c_str());
        r.analysis = dl::analyze(r.index);
    }

    QTemporaryDir m_tmp;
    Run m_overflow, m_clean;
};

QTEST_MAIN(TstReport)
#include "test_report.moc"
