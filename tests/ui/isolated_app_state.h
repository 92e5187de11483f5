#pragma once
// Points everything the app writes (the demo, the index cache, QSettings) into a test's temp dir,
// so GUI tests neither read nor touch the user's state.
#include <QCoreApplication>
#include <QString>

inline void isolateAppState(const QString& dir, const QString& appName) {
    qputenv("XDG_CACHE_HOME", (dir + QStringLiteral("/cache")).toUtf8());
    qputenv("XDG_CONFIG_HOME", (dir + QStringLiteral("/config")).toUtf8());
    qputenv("DUMPLENS_CACHE_DIR", (dir + QStringLiteral("/index-cache")).toUtf8());
    QCoreApplication::setOrganizationName(QStringLiteral("DumpLensTest"));
    QCoreApplication::setApplicationName(appName);
}
