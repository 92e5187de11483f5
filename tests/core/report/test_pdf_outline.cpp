// The PDF outline writer (libqpdf): hand-made PDFs in, checked by the qpdf tool for structure,
// titles and destination pages; input beyond repair and bad entries refused with a reason, a
// damaged xref table repaired.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <unistd.h>

#include "core/report/pdf_outline.h"

using namespace dl;

namespace {

// A classic-xref PDF with `pages` empty pages (catalog 1, page tree 2, pages 3..).
std::string makePdf(int pages, bool withInfo = true) {
    std::string s = "%PDF-1.4\n%\xe2\xe3\xcf\xd3\n";
    std::vector<std::size_t> off;
    const auto obj = [&](const std::string& body) {
        off.push_back(s.size());
        s += std::to_string(off.size()) + " 0 obj\n" + body + "\nendobj\n";
    };
    obj("<< /Type /Catalog /Pages 2 0 R >>");
    std::string kids;
    for (int i = 0; i < pages; ++i) kids += std::to_string(3 + i) + " 0 R ";
    obj("<< /Type /Pages /Kids [ " + kids + "] /Count " + std::to_string(pages) + " >>");
    for (int i = 0; i < pages; ++i) obj("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] >>");
    if (withInfo) obj("<< /Title (t\\)x) /Producer (test) >>");
    const std::size_t xref = s.size();
    s += "xref\n0 " + std::to_string(off.size() + 1) + "\n0000000000 65535 f\r\n";
    char line[32];
    for (std::size_t o : off) {
        std::snprintf(line, sizeof line, "%010zu 00000 n\r\n", o);
        s += line;
    }
    s += "trailer\n<< /Size " + std::to_string(off.size() + 1) + " /Root 1 0 R";
    if (withInfo) s += " /Info " + std::to_string(off.size()) + " 0 R";
    s += " >>\nstartxref\n" + std::to_string(xref) + "\n%%EOF\n";
    return s;
}

class PdfOutline : public ::testing::Test {
protected:
    void SetUp() override { m_path = ::testing::TempDir() + "/dl_outline_" + std::to_string(::getpid()) + ".pdf"; }
    void TearDown() override { std::filesystem::remove(m_path); }

    int run(const std::string& cmd, std::string& out) {
        out.clear();
        FILE* p = ::popen((cmd + " 2>&1").c_str(), "r");
        if (!p) return -1;
        char buf[4096];
        std::size_t n;
        while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
        return WEXITSTATUS(::pclose(p));
    }
    nlohmann::json qpdfJson(const std::string& pdf) {
        std::ofstream(m_path, std::ios::binary) << pdf;
        std::string out;
        EXPECT_EQ(run("qpdf --check '" + m_path + "'", out), 0) << out;
        EXPECT_EQ(run("qpdf --json --json-key=outlines --json-key=pages '" + m_path + "'", out), 0) << out;
        return nlohmann::json::parse(out, nullptr, false);
    }
    std::string m_path;
};

TEST_F(PdfOutline, NestedOutlineReadByQpdf) {
    std::string pdf = makePdf(4);
    std::string error;
    ASSERT_TRUE(addPdfOutline(pdf,
                              {{"Verdict", 0, 0, 800},
                               {"Chain", 1, 0, NAN},
                               {"Boxes", 1, 1, 400},
                               {"Table", 2, 1, 300},
                               {"Warnings \xc3\xbc \xf0\x9f\x94\xa5", 3, 0, 700}},
                              error))
        << error;
    const nlohmann::json j = qpdfJson(pdf);
    ASSERT_TRUE(j.contains("outlines")) << j.dump();
    const auto& o = j["outlines"];
    ASSERT_EQ(o.size(), 3u) << o.dump();
    EXPECT_EQ(o[0]["title"], "Verdict");
    EXPECT_EQ(o[0]["destpageposfrom1"], 1);
    EXPECT_EQ(o[0]["dest"][1], "/XYZ");
    EXPECT_EQ(o[0]["dest"][3], 800);
    EXPECT_EQ(o[1]["title"], "Chain");
    EXPECT_EQ(o[1]["destpageposfrom1"], 2);
    EXPECT_EQ(o[1]["dest"][1], "/Fit");
    ASSERT_EQ(o[1]["kids"].size(), 2u);
    EXPECT_EQ(o[1]["kids"][0]["title"], "Boxes");
    EXPECT_EQ(o[1]["kids"][1]["title"], "Table");
    EXPECT_EQ(o[1]["kids"][1]["destpageposfrom1"], 3);
    EXPECT_EQ(o[2]["title"], "Warnings \xc3\xbc \xf0\x9f\x94\xa5");
    EXPECT_EQ(o[2]["destpageposfrom1"], 4);
    EXPECT_EQ(j["pages"].size(), 4u);
}

TEST_F(PdfOutline, SecondOutlineReplacesTheFirst) {
    std::string pdf = makePdf(2, false);
    std::string error;
    ASSERT_TRUE(addPdfOutline(pdf, {{"Old", 0, 0, NAN}}, error)) << error;
    // The first pass wrote object streams and an xref stream: the second reads those.
    ASSERT_TRUE(addPdfOutline(pdf, {{"New A", 1, 0, NAN}, {"New B", 0, 0, NAN}}, error)) << error;
    const nlohmann::json j = qpdfJson(pdf);
    ASSERT_EQ(j["outlines"].size(), 2u) << j.dump();
    EXPECT_EQ(j["outlines"][0]["title"], "New A");
    EXPECT_EQ(j["outlines"][0]["destpageposfrom1"], 2);
}

TEST_F(PdfOutline, EmptyOutlineIsValid) {
    std::string pdf = makePdf(1);
    std::string error;
    ASSERT_TRUE(addPdfOutline(pdf, {}, error)) << error;
    EXPECT_TRUE(qpdfJson(pdf)["outlines"].empty());
}

TEST_F(PdfOutline, SameInputGivesTheSameBytes) {
    std::string a = makePdf(3), b = a, error;
    const std::vector<PdfOutlineEntry> e{{"x", 0, 0, NAN}, {"y", 2, 1, 100}};
    ASSERT_TRUE(addPdfOutline(a, e, error)) << error;
    ASSERT_TRUE(addPdfOutline(b, e, error)) << error;
    EXPECT_EQ(a, b);
}

TEST_F(PdfOutline, RefusesBadInputWithAReasonAndLeavesItUnchanged) {
    const auto refuse = [](std::string pdf, const std::vector<PdfOutlineEntry>& e, const std::string& why) {
        const std::string before = pdf;
        std::string error;
        EXPECT_FALSE(addPdfOutline(pdf, e, error)) << why;
        EXPECT_NE(error.find(why), std::string::npos) << error;
        EXPECT_EQ(pdf, before);
    };
    refuse("hello", {}, "not a PDF");
    refuse("%PDF-1.4\n1 0 obj\n<<>>\nendobj\n", {}, "trailer");  // nothing to rebuild an xref from
    const std::string good = makePdf(2);
    refuse(good.substr(0, good.size() / 2), {}, "trailer");
    refuse(good, {{"x", 2, 0, NAN}}, "page 3 of 2");
    refuse(good, {{"x", 0, 1, NAN}}, "without a parent");
    refuse(good, {{"a", 0, 0, NAN}, {"b", 0, 2, NAN}}, "without a parent");
    std::string noKids = good;  // the page tree lost: no page for an entry to point to
    noKids.replace(noKids.find("/Kids [ 3 0 R"), 13, "/Kidz [ 3 0 R");
    refuse(noKids, {{"x", 0, 0, NAN}}, "page 1 of 0");
}

TEST_F(PdfOutline, DamagedXrefTablesAreRepaired) {
    // What the hand-written writer refused: a wrong startxref, xref offsets that point nowhere.
    const std::string good = makePdf(2);
    std::string badStart = good;
    badStart.replace(badStart.rfind("startxref\n") + 10, std::string::npos, "999999999\n%%EOF\n");
    std::string badOffsets = good;
    const std::size_t xref = badOffsets.rfind("xref\n0 ");
    badOffsets.replace(badOffsets.find("\n", badOffsets.find("65535 f", xref)) + 1, 10, "0000000001");
    for (std::string pdf : {badStart, badOffsets}) {
        std::string error;
        ASSERT_TRUE(addPdfOutline(pdf, {{"a", 1, 0, NAN}}, error)) << error;
        const nlohmann::json j = qpdfJson(pdf);  // qpdf --check passes on the result
        ASSERT_EQ(j["outlines"].size(), 1u) << j.dump();
        EXPECT_EQ(j["outlines"][0]["destpageposfrom1"], 2);
        EXPECT_EQ(j["pages"].size(), 2u);
    }
}

}  // namespace
