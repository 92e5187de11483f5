#pragma once
// Adds a document outline (bookmarks) to a finished PDF. Qt 6.4's QPdfWriter cannot write one, so
// the report is post-processed: an incremental update is appended (outline objects, a copy of the
// catalog with /Outlines, a new xref section whose trailer points back with /Prev). The original
// bytes stay untouched, so offsets in the file remain valid. Classic xref tables only (what Qt
// writes); xref streams and encrypted files are refused with a reason.
#include <cmath>
#include <cstddef>
#include <string>
#include <vector>

namespace dl {

struct PdfOutlineEntry {
    std::string title;   // UTF-8
    int page = 0;        // 0-based page index
    int level = 0;       // 0: top level; an entry nests under the closest previous entry one level up
    double top = NAN;    // PDF user-space y (points from the page bottom) to scroll to; NaN: page top
};

// Appends the outline to `pdf` in place. Returns false (pdf unchanged) with `error` naming the
// problem: not a PDF, unreadable xref/trailer/catalog/page tree, a page index out of range, a
// level that skips a parent.
bool addPdfOutline(std::string& pdf, const std::vector<PdfOutlineEntry>& entries, std::string& error);

// Object numbers of the pages in document order (exposed for tests and callers that need them).
bool pdfPageObjects(const std::string& pdf, std::vector<int>& pages, std::string& error);

}  // namespace dl
