#include "ui/about_dialog.h"

#include <QFile>
#include <QMessageBox>
#include <QRegularExpression>

// The resource object sits in a static library: referencing it keeps the linker from dropping it.
static void initDumplensResources() { Q_INIT_RESOURCE(dumplens); }

namespace dlui {
namespace {

void ensureResources() {
    static const bool once = (initDumplensResources(), true);
    (void)once;
}

}  // namespace

QIcon appIcon() {
    ensureResources();
    QIcon icon;
    for (int size : {16, 24, 32, 48, 64, 128, 256}) {
        const QString path = QStringLiteral(":/dumplens/icons/%1.png").arg(size);
        if (QFile::exists(path)) icon.addFile(path, QSize(size, size));
    }
    return icon;
}

QString aboutText() {
    ensureResources();
    QFile f(QStringLiteral(":/dumplens/about.html"));
    QString text =
        f.open(QIODevice::ReadOnly) ? QString::fromUtf8(f.readAll()) : QStringLiteral("<h3>DumpLens %VERSION%</h3>");
    text.remove(QRegularExpression(QStringLiteral("<!--.*?-->\\s*"), QRegularExpression::DotMatchesEverythingOption));
    return text.replace(QStringLiteral("%VERSION%"), QStringLiteral(DUMPLENS_VERSION))
        .replace(QStringLiteral("%QT%"), QString::fromLatin1(qVersion()));
}

void showAboutDialog(QWidget* parent) {
    QMessageBox box(parent);
    box.setWindowTitle(QObject::tr("About DumpLens"));
    box.setTextFormat(Qt::RichText);
    box.setText(aboutText());
    box.setIconPixmap(appIcon().pixmap(64, 64));
    box.exec();
}

}  // namespace dlui
