// dumplens: the desktop app. Entry point only; everything else lives in ui/ and core/.
#include <QApplication>
#include <QCommandLineParser>
#include <QDir>
#include <QMenuBar>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "app/gui/screenshot_taker.h"
#include "ui/about_dialog.h"
#include "ui/main_window.h"
#include "ui/models/dump_session.h"
#include "ui/style/theme.h"

namespace {

constexpr const char* kNoDisplay =
    "dumplens: no display: set DISPLAY (X11) or WAYLAND_DISPLAY to open the window, or use dumplens-cli "
    "(index, analyze, compare, report) on a machine without a desktop\n";

bool envSet(const char* name) {
    const char* v = std::getenv(name);
    return v && *v;
}

bool asksForHelpOrVersion(int argc, char** argv) {
    for (int i = 1; i < argc; ++i)
        for (const char* o : {"-h", "--help", "--help-all", "-v", "--version"})
            if (std::strcmp(argv[i], o) == 0) return true;
    return false;
}

// A platform plugin that cannot connect (DISPLAY names no server, no Wayland compositor) ends in
// qFatal, which aborts (exit 134): said as the missing display instead, exit 1.
QtMessageHandler g_defaultHandler = nullptr;
void platformFatal(QtMsgType type, const QMessageLogContext& context, const QString& message) {
    if (type != QtFatalMsg) return g_defaultHandler(type, context, message);
    std::fputs(kNoDisplay, stderr);
    std::fprintf(stderr, "  (Qt: %s)\n", qPrintable(message.section(QLatin1Char('\n'), 0, 0)));
    std::fflush(stderr);
    std::_Exit(1);
}

}  // namespace

int main(int argc, char** argv) {
    if (!envSet("QT_QPA_PLATFORM") && !envSet("DISPLAY") && !envSet("WAYLAND_DISPLAY")) {
        if (!asksForHelpOrVersion(argc, argv)) {
            std::fputs(kNoDisplay, stderr);
            return 1;
        }
        qputenv("QT_QPA_PLATFORM", "offscreen");  // --help and --version need no window
    }
    g_defaultHandler = qInstallMessageHandler(platformFatal);
    QApplication app(argc, argv);
    qInstallMessageHandler(nullptr);  // past the platform's start: Qt's own handling again
    QApplication::setApplicationName(QStringLiteral("dumplens"));
    QApplication::setOrganizationName(QStringLiteral("DumpLens"));
    QApplication::setApplicationVersion(QStringLiteral(DUMPLENS_VERSION));
    QApplication::setWindowIcon(dlui::appIcon());
    QGuiApplication::setDesktopFileName(QStringLiteral("dumplens"));  // Wayland: icon from dumplens.desktop

    QCommandLineParser parser;
    parser.setApplicationDescription(
        QStringLiteral("Find the first fp16 overflow in MindSpore/CANN/msprobe tensor dumps."));
    parser.addHelpOption();
    parser.addVersionOption();
    parser.addPositionalArgument(QStringLiteral("DIR"), QStringLiteral("dump folder to open, or a .dlx index file"),
                                 QStringLiteral("[DIR]"));
    QCommandLineOption demo(QStringLiteral("demo"), QStringLiteral("open the bundled demo dump"));
    parser.addOption(demo);
    QCommandLineOption shots(QStringLiteral("screenshots"), QStringLiteral("save one PNG per view into DIR, then quit"),
                             QStringLiteral("DIR"));
    parser.addOption(shots);
    QCommandLineOption compare(QStringLiteral("compare"), QStringLiteral("once DIR is open, compare it with run B"),
                               QStringLiteral("B"));
    parser.addOption(compare);
    QCommandLineOption compareFix(QStringLiteral("compare-fix"),
                                  QStringLiteral("with --demo: compare the demo with its bundled bf16 fix"));
    parser.addOption(compareFix);
    QCommandLineOption watch(QStringLiteral("watch"),
                             QStringLiteral("follow DIR while training writes it (it may not exist yet): the verdict "
                                            "grows as files land, a desktop notification at the first overflow"),
                             QStringLiteral("DIR"));
    parser.addOption(watch);
    QCommandLineOption dark(QStringLiteral("dark"),
                            QStringLiteral("dark colours (Fusion style); also DUMPLENS_DARK=1"));
    parser.addOption(dark);
    parser.process(app);
    if (parser.isSet(dark) || qEnvironmentVariableIntValue("DUMPLENS_DARK") == 1) {
        QApplication::setStyle(QStringLiteral("Fusion"));
        QApplication::setPalette(dlui::theme::darkPalette());
    }

    dlui::MainWindow window;
    // Help > About, after the window's own Help entries.
    for (QAction* a : window.menuBar()->actions())
        if (a->menu() && a->text().remove(QLatin1Char('&')) == QLatin1String("Help")) {
            a->menu()->addSeparator();
            a->menu()->addAction(QObject::tr("&About DumpLens"), &window,
                                 [&window] { dlui::showAboutDialog(&window); });
        }
    window.show();
    const bool comparing = parser.isSet(compare) || parser.isSet(compareFix);
    if (parser.isSet(shots)) new dlui::ScreenshotTaker(&window, parser.value(shots), comparing);
    if (comparing) {
        // Start the comparison once run A is analysed (once only).
        auto* once = new QObject(&window);
        QObject::connect(window.session(), &dlui::DumpSession::dumpChanged, once, [&window, &parser, &compare, once] {
            if (!window.session()->analysis()) return;
            if (parser.isSet(compare))
                window.compareWith(QDir(parser.value(compare)).absolutePath());
            else
                window.compareWithDemoFix();
            once->deleteLater();
        });
    }
    const QStringList args = parser.positionalArguments();
    if (parser.isSet(watch))
        window.watchFolder(QDir(parser.value(watch)).absolutePath());
    else if (!args.isEmpty())
        window.openFolder(QDir(args.first()).absolutePath());
    else if (parser.isSet(demo))
        window.openDemo();
    return QApplication::exec();
}
