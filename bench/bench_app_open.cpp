// The desktop app on a big dump, measured in the app itself (issue 13: the 10M-row statistics
// dump): MainWindow opens a .dlx or cached dump folder; times to the index on screen, to the
// verdict and to the timeline; timeline frames (synchronous repaints at several zooms); table
// filters typed into the op table; resident and peak memory. One run, printed as a table.
//   QT_QPA_PLATFORM=offscreen build/ci/bench/bench_app_open /tmp/d10m.dlx
//   xvfb-run -a -s "-screen 0 1600x1000x24" build/ci/bench/bench_app_open /tmp/d10m.dlx
#include <sys/resource.h>
#include <unistd.h>

#include <QApplication>
#include <QDir>
#include <QElapsedTimer>
#include <QEventLoop>
#include <QHeaderView>
#include <QLineEdit>
#include <QTableView>
#include <QTimer>
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <vector>

#include "ui/main_window.h"
#include "ui/models/dump_session.h"
#include "ui/views/op_table_panel.h"
#include "ui/views/timeline/timeline_panel.h"
#include "ui/views/timeline/timeline_widget.h"

namespace {

double cpuSeconds() {
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return double(u.ru_utime.tv_sec + u.ru_stime.tv_sec) + double(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

double peakRssMb() {
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return double(u.ru_maxrss) / 1024.0;
}

double rssMb() {
    std::ifstream f("/proc/self/statm");
    long pages = 0, resident = 0;
    f >> pages >> resident;
    return double(resident) * double(sysconf(_SC_PAGESIZE)) / 1048576.0;
}

// Runs the event loop until done() holds or timeoutMs passes; false on timeout.
template <class Done>
bool waitFor(Done done, int timeoutMs) {
    QElapsedTimer t;
    t.start();
    while (!done()) {
        if (t.elapsed() > timeoutMs) return false;
        QEventLoop loop;
        QTimer::singleShot(5, &loop, &QEventLoop::quit);
        loop.exec();
    }
    return true;
}

void row(const char* what, double wallMs, double cpuMs, const char* extra = "") {
    std::printf("| %-44s | %9.0f | %9.0f | %s\n", what, wallMs, cpuMs, extra);
}

}  // namespace

int main(int argc, char** argv) {
    QApplication app(argc, argv);
    if (argc < 2) {
        std::fprintf(stderr, "usage: bench_app_open DUMP_OR_DLX\n");
        return 2;
    }
    const QString path = QDir(QString::fromLocal8Bit(argv[1])).absolutePath();
    dlui::MainWindow window;
    window.resize(1600, 1000);
    window.show();
    waitFor([] { return false; }, 200);  // let the window map

    bool indexed = false, analysed = false, built = false;
    QElapsedTimer clock;
    double cpu0 = cpuSeconds(), tIndexed = 0, tAnalysed = 0, tBuilt = 0, cIndexed = 0, cAnalysed = 0, cBuilt = 0;
    QObject::connect(window.session(), &dlui::DumpSession::dumpChanged, [&] {
        if (!window.session()->dump()) return;
        if (!indexed) {
            indexed = true;
            tIndexed = double(clock.elapsed());
            cIndexed = cpuSeconds() - cpu0;
        }
        if (window.session()->analysis() && !analysed) {
            analysed = true;
            tAnalysed = double(clock.elapsed());
            cAnalysed = cpuSeconds() - cpu0;
        }
    });
    QObject::connect(window.timelinePanel(), &dlui::TimelinePanel::timelineBuilt, [&] {
        if (analysed && !built) {
            built = true;
            tBuilt = double(clock.elapsed());
            cBuilt = cpuSeconds() - cpu0;
        }
    });
    clock.start();
    window.openFolder(path);
    if (!waitFor([&] { return built; }, 600000)) {
        std::fprintf(stderr, "timed out opening %s (indexed %d, analysed %d)\n", argv[1], indexed, analysed);
        return 1;
    }
    const double rssOpen = rssMb();
    std::printf("%s: %zu tensors, %zu ops\n", argv[1], window.session()->dump()->index->tensors.size(),
                window.session()->dump()->index->ops.size());
    std::printf("| step | wall ms | CPU ms (all threads) | |\n|---|---|---|---|\n");
    row("open: index on screen (from the start)", tIndexed, cIndexed * 1000);
    row("open: verdict on screen (from the start)", tAnalysed, cAnalysed * 1000);
    row("open: timeline built (from the start)", tBuilt, cBuilt * 1000);

    // Frames: a synchronous repaint of the timeline at zooms from the whole run to 10 ppm of it.
    dlui::TimelineWidget* tw = window.timelinePanel()->timelineWidget();
    std::printf("timeline widget %dx%d px, %s\n", tw->width(), tw->height(), tw->isVisible() ? "visible" : "HIDDEN");
    const double from = tw->viewport().fullFrom(), to = tw->viewport().fullTo();
    for (const double frac : {1.0, 0.1, 0.01, 0.001, 1e-4, 1e-5}) {
        const double mid = (from + to) / 2, half = (to - from) * frac / 2;
        tw->setWindow(mid - half, mid + half);
        tw->repaint();  // the first frame after a zoom, then the steady ones
        std::vector<double> ms;
        const double c = cpuSeconds();
        for (int k = 0; k < 10; ++k) {
            QElapsedTimer f;
            f.start();
            tw->repaint();
            ms.push_back(double(f.nsecsElapsed()) / 1e6);
        }
        std::sort(ms.begin(), ms.end());
        char what[96], extra[64];
        std::snprintf(what, sizeof what, "timeline frame, %g %% of the run visible", frac * 100);
        std::snprintf(extra, sizeof extra, "median of 10, max %.1f ms", ms.back());
        row(what, ms[ms.size() / 2], (cpuSeconds() - c) * 100, extra);
    }

    // Filters typed into the table (applied at once; the model resets, the count and the
    // timeline's match marks update).
    dlui::OpTablePanel* table = window.opTable();
    std::printf("table sorted by column %d\n", table->view()->horizontalHeader()->sortIndicatorSection());
    struct F {
        const char* label;
        const char* text;
        bool regex;
    };
    for (const F& f :
         {F{"table filter \"sqrtgrad\"", "sqrtgrad", false},
          F{"table filter regex \"Gradients_.*MatMul\"", "Gradients_.*MatMul", true},
          F{"table filter \"layers_3\" (many rows)", "layers_3", false}, F{"table filter cleared", "", false}}) {
        const double c = cpuSeconds();
        QElapsedTimer t;
        t.start();
        table->setFilterText(QString::fromLatin1(f.text), f.regex);
        table->view()->repaint();
        row(f.label, double(t.nsecsElapsed()) / 1e6, (cpuSeconds() - c) * 1000,
            table->countText().toUtf8().constData());
    }
    char mem[96];
    std::snprintf(mem, sizeof mem, "resident %.0f MB after opening, %.0f MB now, peak %.0f MB", rssOpen, rssMb(),
                  peakRssMb());
    std::printf("%s\n", mem);
    return 0;
}
