#pragma once
// Adds a document outline (bookmarks) to a finished PDF. Qt 6.4's QPdfWriter cannot write one, so
// the report is post-processed with libqpdf: parsed, given the outline items and a catalog
// /Outlines (replacing any earlier one), and written again with object streams.
// This replaced a hand-written incremental update (~440 lines) on measurement: about 3 ms more
// per report (~2% of writing one), files 9-13% smaller, the same outline, pages and text, and
// xref streams, encryption and damaged xref tables handled (docs/PERFORMANCE.md, "PDF outline").
#include <cmath>
#include <string>
#include <vector>

namespace dl {

struct PdfOutlineEntry {
    std::string title;  // UTF-8
    int page = 0;       // 0-based page index
    int level = 0;      // 0: top level; an entry nests under the closest previous entry one level up
    double top = NAN;   // PDF user-space y (points from the page bottom) to scroll to; NaN: page top
};

// Rewrites `pdf` with the outline. Returns false (pdf unchanged) with `error` naming the problem:
// not a PDF or one libqpdf cannot read (its message), a page index out of range, a level that
// skips a parent.
bool addPdfOutline(std::string& pdf, const std::vector<PdfOutlineEntry>& entries, std::string& error);

}  // namespace dl
