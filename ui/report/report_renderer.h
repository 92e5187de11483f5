#pragma once
// The overflow report as a PDF: lays out the ReportContent (core) with vector figures, page numbers,
// date and version, and adds the section outline. Shared by `dumplens-cli report` and the app's
// File > Export report… . Needs a QApplication (the histogram is a QCustomPlot widget); headless
// callers run it on the offscreen platform.
#include <QByteArray>
#include <QDateTime>
#include <QPageSize>
#include <QString>
#include <string>
#include <vector>

#include "core/analysis/analysis_result.h"
#include "core/model/dump_index.h"
#include "core/report/report_content.h"

namespace dlui {

struct ReportRenderOptions {
    QPageSize::PageSizeId pageSize = QPageSize::A4;
    QDateTime generated = QDateTime::currentDateTime();
    dl::ReportOptions content;
    std::vector<std::string> comparison;  // comparison summary lines (--compare); empty: no section
};

struct ReportRenderInfo {
    int pages = 0;
    std::vector<std::string> sections;  // outline titles, in order
};

// "A4" / "Letter" (case-insensitive); false for anything else.
bool parsePageSize(const QString& name, QPageSize::PageSizeId& out);

bool renderReportPdf(const dl::DumpIndex& index, const dl::AnalysisResult& analysis, const ReportRenderOptions& options,
                     QByteArray& pdf, ReportRenderInfo& info, QString& error);
// Renders and writes atomically (a temporary file renamed into place).
bool writeReportPdf(const dl::DumpIndex& index, const dl::AnalysisResult& analysis, const ReportRenderOptions& options,
                    const QString& path, ReportRenderInfo& info, QString& error);

}  // namespace dlui
