#include "ui/views/op_context_menu.h"

#include <QClipboard>
#include <QDesktopServices>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QGuiApplication>
#include <QMenu>
#include <QMessageBox>
#include <QUrl>

#include "core/index/tensor_location.h"
#include "core/stats/log2_histogram_csv.h"
#include "ui/style/op_names.h"
#include "ui/views/log2_histogram_plot.h"

namespace dlui {

namespace {

QAction* addNamed(QMenu& menu, const QString& text, const char* name) {
    QAction* a = menu.addAction(text);
    a->setObjectName(QString::fromLatin1(name));
    return a;
}

void copyText(const QString& s) { QGuiApplication::clipboard()->setText(s); }

}  // namespace

quint32 defaultTensorOf(const dl::DumpIndex& ix, quint32 op) {
    if (op >= ix.ops.size() || ix.ops[op].tensorCount == 0) return dl::kNoIndex;
    const dl::OpRecord& o = ix.ops[op];
    for (quint32 t = o.firstTensor; t < o.firstTensor + o.tensorCount && t < ix.tensors.size(); ++t)
        if (ix.tensors[t].io == dl::Io::Output) return t;
    return o.firstTensor < ix.tensors.size() ? o.firstTensor : dl::kNoIndex;
}

bool exportHistogramPng(const dl::DumpIndex& ix, quint32 tensor, const QString& path, QString& error) {
    dl::Log2Histogram h;
    if (tensor >= ix.tensors.size() || !ix.histogram(ix.tensors[tensor], h) || h.empty()) {
        error = QObject::tr("This tensor has no histogram (statistics only).");
        return false;
    }
    Log2HistogramPlot plot;
    plot.resize(720, 420);
    plot.addSeries(QString::fromStdString(ix.tensorLabel(ix.tensors[tensor])), h,
                   QPen(plot.palette().color(QPalette::Highlight), 2));
    plot.finish({double(h.nan), double(h.posInf), double(h.negInf)});
    plot.replot();
    if (!plot.savePng(path, 720, 420)) {
        error = QObject::tr("Could not write %1.").arg(path);
        return false;
    }
    return true;
}

bool exportHistogramCsv(const dl::DumpIndex& ix, quint32 tensor, const QString& path, QString& error) {
    dl::Log2Histogram h;
    if (tensor >= ix.tensors.size() || !ix.histogram(ix.tensors[tensor], h) || h.empty()) {
        error = QObject::tr("This tensor has no histogram (statistics only).");
        return false;
    }
    QFile f(path);
    const std::string csv = dl::log2HistogramCsv(h);
    if (!f.open(QIODevice::WriteOnly | QIODevice::Truncate) ||
        f.write(csv.data(), static_cast<qint64>(csv.size())) != static_cast<qint64>(csv.size())) {
        error = QObject::tr("Could not write %1: %2").arg(path, f.errorString());
        return false;
    }
    return true;
}

void fillOpMenu(QMenu& menu, QWidget* parent, const dl::DumpIndex& ix, quint32 op, quint32 tensor,
                const OpMenuHooks& hooks) {
    if (op >= ix.ops.size()) return;
    if (tensor >= ix.tensors.size()) tensor = defaultTensorOf(ix, op);
    const OpNames names = opNames(ix, ix.ops[op]);
    QObject::connect(addNamed(menu, QObject::tr("Copy name (%1)").arg(names.shortName), opmenu::kCopyName),
                     &QAction::triggered, &menu, [s = names.shortName] { copyText(s); });
    QObject::connect(addNamed(menu, QObject::tr("Copy full name"), opmenu::kCopyFullName), &QAction::triggered, &menu,
                     [s = names.full] { copyText(s); });
    const QString path =
        tensor < ix.tensors.size() ? QString::fromStdString(dl::tensorDataPath(ix, ix.tensors[tensor])) : QString();
    QAction* copyPath = addNamed(menu, QObject::tr("Copy file path"), opmenu::kCopyPath);
    QAction* open = addNamed(menu, QObject::tr("Open containing folder"), opmenu::kOpenFolder);
    copyPath->setEnabled(!path.isEmpty());
    open->setEnabled(!path.isEmpty() && QFileInfo(path).absoluteDir().exists());
    if (path.isEmpty()) copyPath->setToolTip(QObject::tr("Statistics only: the tensor has no file"));
    QObject::connect(copyPath, &QAction::triggered, &menu, [path] { copyText(path); });
    QObject::connect(open, &QAction::triggered, &menu,
                     [path] { QDesktopServices::openUrl(QUrl::fromLocalFile(QFileInfo(path).absolutePath())); });
    menu.addSeparator();
    QAction* cmp = addNamed(menu, QObject::tr("Compare this tensor"), opmenu::kCompare);
    cmp->setEnabled(hooks.compareTensor && tensor < ix.tensors.size());
    if (!hooks.compareTensor) cmp->setToolTip(QObject::tr("Open a comparison first (File > Compare with…)"));
    if (hooks.compareTensor)
        QObject::connect(cmp, &QAction::triggered, &menu, [f = hooks.compareTensor, tensor] { f(tensor); });
    dl::Log2Histogram h;
    const bool hasHist = tensor < ix.tensors.size() && ix.histogram(ix.tensors[tensor], h) && !h.empty();
    QAction* png = addNamed(menu, QObject::tr("Export histogram as PNG…"), opmenu::kExportPng);
    QAction* csv = addNamed(menu, QObject::tr("Export histogram as CSV…"), opmenu::kExportCsv);
    png->setEnabled(hasHist);
    csv->setEnabled(hasHist);
    const QString base = QString::fromStdString(ix.tensorLabel(ix.tensors[tensor < ix.tensors.size() ? tensor : 0]));
    const auto exporter = [&ix, tensor, parent, names, base](bool asPng) {
        const QString suggested =
            QStringLiteral("%1-%2-histogram.%3")
                .arg(names.shortName, base, asPng ? QStringLiteral("png") : QStringLiteral("csv"));
        const QString file =
            QFileDialog::getSaveFileName(parent, QObject::tr("Export histogram"), suggested,
                                         asPng ? QObject::tr("PNG image (*.png)") : QObject::tr("CSV (*.csv)"));
        if (file.isEmpty()) return;
        QString error;
        if (!(asPng ? exportHistogramPng(ix, tensor, file, error) : exportHistogramCsv(ix, tensor, file, error)))
            QMessageBox::warning(parent, QObject::tr("Export histogram"), error);
    };
    QObject::connect(png, &QAction::triggered, &menu, [exporter] { exporter(true); });
    QObject::connect(csv, &QAction::triggered, &menu, [exporter] { exporter(false); });
    if (hooks.goToOp && !hooks.goTo.empty()) {
        menu.addSeparator();
        for (const auto& [text, target] : hooks.goTo)
            QObject::connect(menu.addAction(text), &QAction::triggered, &menu,
                             [f = hooks.goToOp, target] { f(target); });
    }
}

}  // namespace dlui
