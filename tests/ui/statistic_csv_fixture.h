#pragma once
// A MindSpore statistic.csv written by hand for the Qt tests that need a small statistics-only dump
// (no graph IR, no tensor files): the header of MindSpore 2.x's kernel-by-kernel statistic dump and
// the rows the test gives.
#include <QByteArray>
#include <QDir>
#include <QFile>
#include <QString>

namespace dltest {

inline constexpr const char* kStatisticCsvHeader =
    "Op Type,Op Name,Task ID,Stream ID,Timestamp,IO,Slot,Data Size,Data Type,Shape,Max Value,Min Value,Avg Value,"
    "Count,Negative Zero Count,Positive Zero Count,NaN Count,Negative Inf Count,Positive Inf Count,Zero Count\n";

// Writes `iterationDir`/statistic.csv (the folders made as needed): the header, then `rows`.
inline bool writeStatisticCsv(const QString& iterationDir, const QByteArray& rows) {
    if (!QDir().mkpath(iterationDir)) return false;
    QFile f(iterationDir + QStringLiteral("/statistic.csv"));
    if (!f.open(QIODevice::WriteOnly)) return false;
    return f.write(kStatisticCsvHeader) > 0 && f.write(rows) == rows.size();
}

}  // namespace dltest
