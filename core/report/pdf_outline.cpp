#include "core/report/pdf_outline.h"

#include <cctype>
#include <charconv>
#include <cstdio>
#include <map>
#include <optional>
#include <set>
#include <string_view>
#include <utility>

namespace dl {

namespace {

using Dict = std::vector<std::pair<std::string, std::string>>;  // key (without '/') -> raw value text

bool isWs(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t' || c == '\f' || c == '\0'; }
bool isDelim(char c) { return c == '(' || c == ')' || c == '<' || c == '>' || c == '[' || c == ']' || c == '{' || c == '}' || c == '/' || c == '%'; }

// A cursor over the PDF bytes; every read is bounds-checked so a truncated file fails, not crashes.
class Lexer {
public:
    Lexer(std::string_view s, std::size_t pos) : m_s(s), m_pos(pos) {}
    std::size_t pos() const { return m_pos; }
    bool atEnd() const { return m_pos >= m_s.size(); }

    void skipWs() {
        while (m_pos < m_s.size()) {
            if (isWs(m_s[m_pos])) { ++m_pos; continue; }
            if (m_s[m_pos] == '%') {
                while (m_pos < m_s.size() && m_s[m_pos] != '\n' && m_s[m_pos] != '\r') ++m_pos;
                continue;
            }
            break;
        }
    }
    bool peek(std::string_view lit) { skipWs(); return m_s.substr(m_pos, lit.size()) == lit; }
    bool expect(std::string_view lit) {
        if (!peek(lit)) return false;
        m_pos += lit.size();
        return true;
    }
    // A regular token (number, keyword, name body): runs up to whitespace or a delimiter.
    std::string_view token() {
        skipWs();
        const std::size_t a = m_pos;
        if (m_pos < m_s.size() && m_s[m_pos] == '/') ++m_pos;
        while (m_pos < m_s.size() && !isWs(m_s[m_pos]) && !isDelim(m_s[m_pos])) ++m_pos;
        return m_s.substr(a, m_pos - a);
    }
    std::optional<long long> integer() {
        const std::string_view t = token();
        long long v = 0;
        auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
        if (t.empty() || ec != std::errc() || p != t.data() + t.size()) return std::nullopt;
        return v;
    }

    // Skips one value of any type and returns its raw text; nullopt on malformed input.
    std::optional<std::string> value(int depth = 0) {
        if (depth > 64) return std::nullopt;
        skipWs();
        if (atEnd()) return std::nullopt;
        const std::size_t a = m_pos;
        const char c = m_s[m_pos];
        if (c == '<' && m_pos + 1 < m_s.size() && m_s[m_pos + 1] == '<') {
            if (!dict(depth + 1)) return std::nullopt;
        } else if (c == '<') {
            const std::size_t e = m_s.find('>', m_pos);
            if (e == std::string_view::npos) return std::nullopt;
            m_pos = e + 1;
        } else if (c == '(') {
            if (!literalString()) return std::nullopt;
        } else if (c == '[') {
            ++m_pos;
            while (!peek("]")) if (!value(depth + 1)) return std::nullopt;
            ++m_pos;
        } else if (c == ']' || c == '>' || c == ')' || c == '{' || c == '}') {
            return std::nullopt;
        } else {
            const std::string_view t = token();
            if (t.empty()) return std::nullopt;
            // "n g R": look ahead for the generation and the R without consuming on a mismatch.
            if (std::isdigit(static_cast<unsigned char>(t[0]))) {
                const std::size_t save = m_pos;
                const auto g = integer();
                if (g && token() == "R") return std::string(m_s.substr(a, m_pos - a));
                m_pos = save;
            }
        }
        return std::string(m_s.substr(a, m_pos - a));
    }

    // Parses "<< /Key value ... >>"; fills `out` when given.
    bool dict(int depth, Dict* out = nullptr) {
        if (!expect("<<")) return false;
        while (!peek(">>")) {
            const std::string_view k = token();
            if (k.size() < 2 || k[0] != '/') return false;
            auto v = value(depth);
            if (!v) return false;
            if (out) out->emplace_back(std::string(k.substr(1)), *v);
        }
        m_pos += 2;
        return true;
    }

private:
    bool literalString() {
        int nest = 0;
        while (m_pos < m_s.size()) {
            const char c = m_s[m_pos++];
            if (c == '\\') { ++m_pos; continue; }
            if (c == '(') ++nest;
            if (c == ')' && --nest == 0) return true;
        }
        return false;
    }

    std::string_view m_s;
    std::size_t m_pos;
};

const std::string* find(const Dict& d, std::string_view key) {
    for (const auto& [k, v] : d)
        if (k == key) return &v;
    return nullptr;
}

// "12 0 R" -> 12; -1 when the text is not a reference.
int refNumber(const std::string* text) {
    if (!text) return -1;
    Lexer lx(*text, 0);
    const auto n = lx.integer();
    const auto g = lx.integer();
    if (!n || !g || lx.token() != "R" || *n <= 0 || *n > 10'000'000) return -1;
    return static_cast<int>(*n);
}

struct PdfFile {
    std::string_view bytes;
    std::map<int, std::size_t> offsets;  // object number -> byte offset (newest section wins)
    Dict trailer;                        // of the newest section
    std::size_t startxref = 0;
};

bool readXrefSection(PdfFile& f, std::size_t at, Dict& trailer, std::string& error) {
    Lexer lx(f.bytes, at);
    if (!lx.expect("xref")) {
        error = "no classic xref table at offset " + std::to_string(at) + " (xref streams are not supported)";
        return false;
    }
    while (!lx.peek("trailer")) {
        const auto first = lx.integer();
        const auto count = lx.integer();
        if (!first || !count || *first < 0 || *count < 0 || *count > 10'000'000) {
            error = "malformed xref subsection header";
            return false;
        }
        for (long long i = 0; i < *count; ++i) {
            const auto off = lx.integer();
            const auto gen = lx.integer();
            const std::string_view type = lx.token();
            if (!off || !gen || (type != "n" && type != "f")) {
                error = "malformed xref entry";
                return false;
            }
            if (type == "n") f.offsets.emplace(static_cast<int>(*first + i), static_cast<std::size_t>(*off));
        }
    }
    lx.expect("trailer");
    if (!lx.dict(0, &trailer)) {
        error = "malformed trailer";
        return false;
    }
    return true;
}

bool readXref(PdfFile& f, std::string& error) {
    const std::size_t sx = f.bytes.rfind("startxref");
    if (sx == std::string_view::npos) {
        error = "no startxref: not a complete PDF";
        return false;
    }
    Lexer lx(f.bytes, sx + 9);
    const auto off = lx.integer();
    if (!off || *off < 0 || static_cast<std::size_t>(*off) >= f.bytes.size()) {
        error = "startxref offset out of range";
        return false;
    }
    f.startxref = static_cast<std::size_t>(*off);
    std::set<std::size_t> seen;  // a /Prev loop must not hang
    std::size_t at = f.startxref;
    for (bool newest = true;; newest = false) {
        if (!seen.insert(at).second) break;
        Dict trailer;
        if (!readXrefSection(f, at, trailer, error)) return false;
        if (newest) f.trailer = trailer;
        const std::string* prev = find(trailer, "Prev");
        if (!prev) break;
        Lexer pl(*prev, 0);
        const auto p = pl.integer();
        if (!p || *p < 0 || static_cast<std::size_t>(*p) >= f.bytes.size()) {
            error = "trailer /Prev out of range";
            return false;
        }
        at = static_cast<std::size_t>(*p);
    }
    if (find(f.trailer, "Encrypt")) {
        error = "encrypted PDFs are not supported";
        return false;
    }
    return true;
}

bool readObjectDict(const PdfFile& f, int num, Dict& out, std::string& error) {
    auto it = f.offsets.find(num);
    if (it == f.offsets.end() || it->second >= f.bytes.size()) {
        error = "object " + std::to_string(num) + " is not in the xref table";
        return false;
    }
    Lexer lx(f.bytes, it->second);
    const auto n = lx.integer();
    const auto g = lx.integer();
    if (!n || !g || *n != num || lx.token() != "obj" || !lx.dict(0, &out)) {
        error = "object " + std::to_string(num) + " is not a dictionary object at its xref offset";
        return false;
    }
    return true;
}

bool collectPages(const PdfFile& f, int num, std::vector<int>& pages, std::set<int>& seen, int depth, std::string& error) {
    if (depth > 32 || !seen.insert(num).second) {
        error = "page tree has a cycle or is too deep";
        return false;
    }
    Dict d;
    if (!readObjectDict(f, num, d, error)) return false;
    const std::string* type = find(d, "Type");
    if (type && *type == "/Page") {
        pages.push_back(num);
        return true;
    }
    const std::string* kids = find(d, "Kids");
    if (!kids || kids->empty() || (*kids)[0] != '[') {
        error = "page tree node " + std::to_string(num) + " has no /Kids array";
        return false;
    }
    Lexer lx(*kids, 1);
    while (!lx.peek("]")) {
        auto v = lx.value();
        const int kid = v ? refNumber(&*v) : -1;
        if (kid < 0) {
            error = "page tree node " + std::to_string(num) + " has a malformed kid";
            return false;
        }
        if (!collectPages(f, kid, pages, seen, depth + 1, error)) return false;
    }
    return true;
}

bool rootCatalog(const PdfFile& f, int& rootNum, Dict& catalog, std::string& error) {
    rootNum = refNumber(find(f.trailer, "Root"));
    if (rootNum < 0) {
        error = "trailer has no /Root";
        return false;
    }
    return readObjectDict(f, rootNum, catalog, error);
}

// UTF-8 -> "<FEFF...>" (UTF-16BE with a byte-order mark): titles may hold any character.
std::string pdfTextString(const std::string& utf8) {
    std::u32string cps;
    for (std::size_t i = 0; i < utf8.size();) {
        const unsigned char c = static_cast<unsigned char>(utf8[i]);
        int len = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
        char32_t cp = len == 1 ? c : len == 2 ? (c & 0x1f) : len == 3 ? (c & 0x0f) : (c & 0x07);
        bool ok = len > 0 && i + len <= utf8.size();
        for (int k = 1; ok && k < len; ++k) {
            const unsigned char cc = static_cast<unsigned char>(utf8[i + k]);
            ok = (cc >> 6) == 2;
            cp = (cp << 6) | (cc & 0x3f);
        }
        if (!ok || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) { cps.push_back(0xfffd); i += 1; continue; }
        cps.push_back(cp);
        i += len;
    }
    std::string out = "<FEFF";
    char buf[16];
    for (char32_t cp : cps) {
        if (cp >= 0x10000) {
            cp -= 0x10000;
            std::snprintf(buf, sizeof buf, "%04X%04X", unsigned(0xd800 + (cp >> 10)), unsigned(0xdc00 + (cp & 0x3ff)));
        } else {
            std::snprintf(buf, sizeof buf, "%04X", unsigned(cp));
        }
        out += buf;
    }
    return out + ">";
}

std::string ref(int n) { return std::to_string(n) + " 0 R"; }

struct Node {
    int parent = -1, first = -1, last = -1, prev = -1, next = -1, descendants = 0;
};

// Links entries into a tree by level; false when a level skips a parent.
bool buildTree(const std::vector<PdfOutlineEntry>& e, std::vector<Node>& nodes, std::string& error) {
    nodes.assign(e.size(), Node{});
    std::vector<int> stack;  // open ancestors, by level
    int lastTop = -1;
    for (int i = 0; i < static_cast<int>(e.size()); ++i) {
        const int level = e[i].level;
        if (level < 0 || level > static_cast<int>(stack.size())) {
            error = "outline entry '" + e[i].title + "' has level " + std::to_string(level) + " without a parent";
            return false;
        }
        stack.resize(level);
        const int parent = stack.empty() ? -1 : stack.back();
        nodes[i].parent = parent;
        const int sibling = parent < 0 ? lastTop : nodes[parent].last;
        if (sibling >= 0) { nodes[sibling].next = i; nodes[i].prev = sibling; }
        if (parent < 0) lastTop = i;
        else {
            if (nodes[parent].first < 0) nodes[parent].first = i;
            nodes[parent].last = i;
        }
        for (int a = parent; a >= 0; a = nodes[a].parent) ++nodes[a].descendants;
        stack.push_back(i);
    }
    return true;
}

}  // namespace

bool pdfPageObjects(const std::string& pdf, std::vector<int>& pages, std::string& error) {
    pages.clear();
    if (pdf.compare(0, 5, "%PDF-") != 0) {
        error = "not a PDF (no %PDF- header)";
        return false;
    }
    PdfFile f{pdf, {}, {}, 0};
    int rootNum = -1;
    Dict catalog;
    if (!readXref(f, error) || !rootCatalog(f, rootNum, catalog, error)) return false;
    const int pagesNum = refNumber(find(catalog, "Pages"));
    if (pagesNum < 0) {
        error = "catalog has no /Pages";
        return false;
    }
    std::set<int> seen;
    return collectPages(f, pagesNum, pages, seen, 0, error);
}

bool addPdfOutline(std::string& pdf, const std::vector<PdfOutlineEntry>& entries, std::string& error) {
    std::vector<int> pages;
    if (!pdfPageObjects(pdf, pages, error)) return false;
    PdfFile f{pdf, {}, {}, 0};
    int rootNum = -1;
    Dict catalog;
    if (!readXref(f, error) || !rootCatalog(f, rootNum, catalog, error)) return false;
    const std::string* sizeText = find(f.trailer, "Size");
    std::optional<long long> size;
    if (sizeText) size = Lexer(*sizeText, 0).integer();
    if (!size || *size <= rootNum || *size > 10'000'000) {
        error = "trailer /Size missing or invalid";
        return false;
    }
    for (const auto& e : entries)
        if (e.page < 0 || e.page >= static_cast<int>(pages.size())) {
            error = "outline entry '" + e.title + "' points to page " + std::to_string(e.page + 1) + " of " +
                    std::to_string(pages.size());
            return false;
        }
    std::vector<Node> nodes;
    if (!buildTree(entries, nodes, error)) return false;

    const int outlinesNum = static_cast<int>(*size);
    const auto itemNum = [&](int i) { return outlinesNum + 1 + i; };
    std::string out = pdf;
    if (out.back() != '\n') out += '\n';
    std::vector<std::pair<int, std::size_t>> written;  // object number -> offset
    const auto emit = [&](int num, const std::string& body) {
        written.emplace_back(num, out.size());
        out += std::to_string(num) + " 0 obj\n" + body + "\nendobj\n";
    };

    // The catalog again, same number, with our /Outlines (an incremental update replaces it).
    std::string cat = "<<";
    for (const auto& [k, v] : catalog)
        if (k != "Outlines" && k != "PageMode") cat += " /" + k + " " + v;
    cat += " /Outlines " + ref(outlinesNum) + " /PageMode /UseOutlines >>";
    emit(rootNum, cat);

    int firstTop = -1, lastTop = -1;
    for (int i = 0; i < static_cast<int>(nodes.size()); ++i)
        if (nodes[i].parent < 0) { if (firstTop < 0) firstTop = i; lastTop = i; }
    std::string root = "<< /Type /Outlines";
    if (firstTop >= 0) root += " /First " + ref(itemNum(firstTop)) + " /Last " + ref(itemNum(lastTop));
    root += " /Count " + std::to_string(entries.size()) + " >>";
    emit(outlinesNum, root);

    char num[64];
    for (int i = 0; i < static_cast<int>(nodes.size()); ++i) {
        const Node& n = nodes[i];
        const PdfOutlineEntry& e = entries[i];
        std::string s = "<< /Title " + pdfTextString(e.title) + " /Parent " + ref(n.parent < 0 ? outlinesNum : itemNum(n.parent));
        if (n.prev >= 0) s += " /Prev " + ref(itemNum(n.prev));
        if (n.next >= 0) s += " /Next " + ref(itemNum(n.next));
        if (n.first >= 0) s += " /First " + ref(itemNum(n.first)) + " /Last " + ref(itemNum(n.last)) +
                               " /Count " + std::to_string(n.descendants);
        if (std::isfinite(e.top)) {
            std::snprintf(num, sizeof num, "%.2f", e.top);
            s += " /Dest [" + ref(pages[e.page]) + " /XYZ null " + num + " null]";
        } else {
            s += " /Dest [" + ref(pages[e.page]) + " /Fit]";
        }
        emit(itemNum(i), s + " >>");
    }

    // New xref section: the catalog on its own, then the contiguous run of new objects.
    const std::size_t xrefAt = out.size();
    out += "xref\n";
    char line[32];
    for (std::size_t i = 0; i < written.size(); ++i) {
        if (i == 0) out += std::to_string(rootNum) + " 1\n";
        if (i == 1) out += std::to_string(outlinesNum) + " " + std::to_string(written.size() - 1) + "\n";
        std::snprintf(line, sizeof line, "%010zu 00000 n\r\n", written[i].second);
        out += line;
    }
    out += "trailer\n<< /Size " + std::to_string(itemNum(static_cast<int>(entries.size()))) + " /Root " + ref(rootNum) +
           " /Prev " + std::to_string(f.startxref);
    for (const char* key : {"Info", "ID"})
        if (const std::string* v = find(f.trailer, key)) out += std::string(" /") + key + " " + *v;
    out += " >>\nstartxref\n" + std::to_string(xrefAt) + "\n%%EOF\n";
    pdf = std::move(out);
    return true;
}

}  // namespace dl
