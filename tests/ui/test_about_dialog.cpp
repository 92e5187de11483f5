// The embedded resources (resources/dumplens.qrc): the app icon at every hicolor size and the
// About text with this build's version.
#include <QImage>
#include <QtTest>

#include "ui/about_dialog.h"
#include "ui/style/theme.h"

class TestAboutDialog : public QObject {
    Q_OBJECT
private slots:
    void iconHasEveryHicolorSize() {
        const QIcon icon = dlui::appIcon();
        QVERIFY(!icon.isNull());
        const QList<QSize> sizes = icon.availableSizes();
        for (int s : {16, 24, 32, 48, 64, 128, 256})
            QVERIFY2(sizes.contains(QSize(s, s)), qPrintable(QString::number(s)));
        // Each size is its own rendering, not a scaled copy of another.
        QCOMPARE(icon.pixmap(QSize(16, 16)).size(), QSize(16, 16));
    }
    void iconBackgroundIsTheBrandColour() {
        // Left edge, halfway down: inside the rounded square, clear of the bars and the lens.
        const QImage img = dlui::appIcon().pixmap(QSize(256, 256)).toImage();
        QCOMPARE(img.pixelColor(20, 100).rgb(), dlui::theme::kNavy.rgb());
        QCOMPARE(img.pixelColor(0, 0).alpha(), 0);  // transparent outside the rounded corner
    }
    void aboutTextNamesTheVersions() {
        const QString text = dlui::aboutText();
        QVERIFY(text.contains(QStringLiteral("DumpLens " DUMPLENS_VERSION)));
        QVERIFY(text.contains(QString::fromLatin1(qVersion())));
        QVERIFY(!text.contains(QLatin1Char('%')));
        QVERIFY(!text.contains(QStringLiteral("<!--")));
    }
};

QTEST_MAIN(TestAboutDialog)
#include "test_about_dialog.moc"
