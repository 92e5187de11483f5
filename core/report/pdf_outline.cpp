#include "core/report/pdf_outline.h"

// qpdf 11 warns unless told which PointerHolder API a user wants; this file uses none of it.
#define POINTERHOLDER_TRANSITION 4
#include <qpdf/Buffer.hh>
#include <qpdf/QPDF.hh>
#include <qpdf/QPDFObjectHandle.hh>
#include <qpdf/QPDFPageDocumentHelper.hh>
#include <qpdf/QPDFWriter.hh>

#include <exception>

namespace dl {

namespace {

QPDFObjectHandle destination(const QPDFObjectHandle& page, double top) {
    QPDFObjectHandle dest = QPDFObjectHandle::newArray();
    dest.appendItem(page);
    if (std::isfinite(top)) {
        dest.appendItem(QPDFObjectHandle::newName("/XYZ"));
        dest.appendItem(QPDFObjectHandle::newNull());
        dest.appendItem(QPDFObjectHandle::newReal(top, 2));
        dest.appendItem(QPDFObjectHandle::newNull());
    } else {
        dest.appendItem(QPDFObjectHandle::newName("/Fit"));
    }
    return dest;
}

// Checks every entry before anything is built, so a refusal names the first bad entry.
bool checkEntries(const std::vector<PdfOutlineEntry>& entries, std::size_t pages, std::string& error) {
    int depth = 0;  // levels open after the previous entry
    for (const PdfOutlineEntry& e : entries) {
        if (e.page < 0 || std::size_t(e.page) >= pages) {
            error = "outline entry '" + e.title + "' points to page " + std::to_string(e.page + 1) + " of " +
                std::to_string(pages);
            return false;
        }
        if (e.level < 0 || e.level > depth) {
            error = "outline entry '" + e.title + "' has level " + std::to_string(e.level) + " without a parent";
            return false;
        }
        depth = e.level + 1;
    }
    return true;
}

}  // namespace

bool addPdfOutline(std::string& pdf, const std::vector<PdfOutlineEntry>& entries, std::string& error) {
    if (pdf.compare(0, 5, "%PDF-") != 0) {
        error = "not a PDF (no %PDF- header)";
        return false;
    }
    try {
        QPDF doc;
        doc.setSuppressWarnings(true);  // a repaired xref is not the caller's problem: the output is sound
        doc.processMemoryFile("the PDF", pdf.data(), pdf.size());
        const std::vector<QPDFPageObjectHelper> pages = QPDFPageDocumentHelper(doc).getAllPages();
        if (!checkEntries(entries, pages.size(), error)) return false;

        // Items are linked as they come: open[k] is the item (or the root) new level-k items go under.
        QPDFObjectHandle root = doc.makeIndirectObject(QPDFObjectHandle::parse("<< /Type /Outlines /Count 0 >>"));
        std::vector<QPDFObjectHandle> open{root};
        for (const PdfOutlineEntry& e : entries) {
            open.resize(std::size_t(e.level) + 1);
            QPDFObjectHandle parent = open.back();
            QPDFObjectHandle item = doc.makeIndirectObject(QPDFObjectHandle::newDictionary());
            item.replaceKey("/Title", QPDFObjectHandle::newUnicodeString(e.title));
            item.replaceKey("/Parent", parent);
            item.replaceKey("/Dest", destination(pages[std::size_t(e.page)].getObjectHandle(), e.top));
            if (parent.hasKey("/Last")) {
                QPDFObjectHandle prev = parent.getKey("/Last");
                prev.replaceKey("/Next", item);
                item.replaceKey("/Prev", prev);
            } else {
                parent.replaceKey("/First", item);
            }
            parent.replaceKey("/Last", item);
            // Every item is shown open: an ancestor's /Count is all its descendants.
            for (QPDFObjectHandle& a : open) {
                const long long n = a.hasKey("/Count") ? a.getKey("/Count").getIntValue() : 0;
                a.replaceKey("/Count", QPDFObjectHandle::newInteger(n + 1));
            }
            open.push_back(item);
        }
        QPDFObjectHandle catalog = doc.getRoot();
        catalog.replaceKey("/Outlines", root);  // an earlier outline becomes unreachable and is not written
        catalog.replaceKey("/PageMode", QPDFObjectHandle::newName("/UseOutlines"));

        QPDFWriter writer(doc);
        writer.setOutputMemory();
        writer.setDeterministicID(true);              // the same report gives the same bytes
        writer.setObjectStreamMode(qpdf_o_generate);  // smaller than Qt's own output (see the header)
        writer.write();
        const std::shared_ptr<Buffer> out = writer.getBufferSharedPointer();
        pdf.assign(reinterpret_cast<const char*>(out->getBuffer()), out->getSize());
        return true;
    } catch (const std::exception& ex) {
        error = ex.what();
        return false;
    }
}

}  // namespace dl
