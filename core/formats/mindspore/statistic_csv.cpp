#include "core/formats/mindspore/statistic_csv.h"
#include "core/formats/mindspore/statistic_csv_parser.h"
#include "core/io/csv_delimiter_scanner.h"
#include "core/util/read_file.h"
#include "core/util/text.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstring>
#include <fstream>
#include <utility>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace dl {
namespace {

// Splits the line starting at `pos` into cells at commas and returns the position of its end (its
// '\n' or the end of the text). Double-quoted cells keep their commas; at `shapeCol` an unquoted
// "(2,3)" (msprobe C++ writer) is kept whole up to the closing ')'. A quote or parenthesis is closed
// on its own line or `unclosed` is set. The text after a closing quote up to the next comma is dropped.
std::size_t splitLine(std::string_view text, std::size_t pos, DelimiterScanner& scan, std::size_t shapeCol,
                      std::vector<std::string_view>& out, bool& unclosed) {
    out.clear();
    unclosed = false;
    const char* t = text.data();
    for (;;) {
        std::size_t start = pos;
        while (start < text.size() && t[start] == ' ') ++start;
        const char open = start < text.size() ? t[start] : 0;
        const char close = open == '"' ? '"' : (open == '(' && out.size() == shapeCol) ? ')' : 0;
        std::size_t end;  // the ',' or '\n' after the cell
        if (close) {
            const std::size_t eol = scanLineEnd(text, start);
            const void* c = std::memchr(t + start + 1, close, eol - start - 1);
            if (!c) {
                unclosed = true;
                return eol;
            }
            const std::size_t at = std::size_t(static_cast<const char*>(c) - t);
            out.push_back(open == '"' ? text.substr(start + 1, at - start - 1) : text.substr(start, at - start + 1));
            end = scan.next(at + 1);
        } else {
            end = scan.next(pos);
            out.push_back(text.substr(start, end > start ? end - start : 0));
        }
        if (end >= text.size() || t[end] == '\n') return end;
        pos = end + 1;
    }
}

// The lines of `text` from the parser's state on (the header seen so far, the line count): false
// (error set) when the first non-empty line is not a usable header.
bool parseLines(std::string_view text, Parser& parser, std::vector<std::string>& columns, bool& haveHeader,
                std::uint32_t& lineNo, std::string& error) {
    std::vector<std::string_view> fields;
    DelimiterScanner scan(text);
    std::size_t pos = 0;
    while (pos < text.size()) {
        ++lineNo;
        const std::string_view rest = text.substr(pos);
        const bool isHeader =
            (rest[0] == 'O' || rest[0] == '"') && (rest.starts_with("Op Type,") || rest.starts_with("\"Op Type\","));
        if (haveHeader && !isHeader) {  // a data line: the hot path
            pos = parser.row(text, pos, scan, lineNo) + 1;
            continue;
        }
        bool unclosed = false;
        const std::size_t end = splitLine(text, pos, scan, isHeader ? SIZE_MAX : parser.shapeCol(), fields, unclosed);
        std::string_view line = text.substr(pos, end - pos);
        pos = end + 1;
        if (trimCell(line).empty()) continue;
        if (unclosed) {
            parser.warn(lineNo, "unclosed quote or parenthesis");
            continue;
        }
        // A CR before the newline ends the last cell (a quoted last cell has lost it already).
        if (!fields.empty() && !fields.back().empty() && line.back() == '\r' &&
            fields.back().data() + fields.back().size() == line.data() + line.size())
            fields.back().remove_suffix(1);
        if (isHeader) {  // first header, or a repeated one from a concatenated file: (re)map columns
            parser.setHeader(fields, columns);
            if (!parser.headerUsable()) {
                error =
                    "statistic.csv line " + std::to_string(lineNo) + ": header lacks one of Op Type, Op Name, IO, Slot";
                return false;
            }
            haveHeader = true;
            continue;
        }
        error = "statistic.csv: first non-empty line is not a header starting with 'Op Type,'";
        return false;
    }
    return true;
}

const std::function<void(StatisticRow&)> kNoRows = [](StatisticRow&) {};

}  // namespace

bool parseStatisticCsv(std::string_view text, const std::function<void(StatisticRow&)>& onRow,
                       std::vector<std::string>& columns, std::vector<StatisticCsvWarning>& warnings,
                       std::string& error, std::size_t maxWarnings, bool fixedLayouts) {
    if (text.starts_with("\xEF\xBB\xBF")) text.remove_prefix(3);  // UTF-8 BOM from hand-edited files
    Parser parser(onRow, warnings, maxWarnings);
    parser.setFixedLayouts(fixedLayouts);
    bool haveHeader = false;
    std::uint32_t lineNo = 0;
    if (!parseLines(text, parser, columns, haveHeader, lineNo, error)) return false;
    if (!haveHeader) {
        error = "statistic.csv: no header line";
        return false;
    }
    parser.finish();
    return true;
}

struct StatisticCsvStream::Impl {
    explicit Impl(std::size_t maxWarnings) : parser(kNoRows, warnings, maxWarnings) {}
    std::vector<StatisticCsvWarning> warnings;  // before `parser`, which keeps a reference to it
    Parser parser;
    std::vector<std::string> columns;
    std::string error;
    std::uint64_t fed = 0;
    std::uint32_t lineNo = 0;
    bool haveHeader = false, failed = false;
};

StatisticCsvStream::StatisticCsvStream(std::size_t maxWarnings) : m(std::make_unique<Impl>(maxWarnings)) {}
StatisticCsvStream::~StatisticCsvStream() = default;
StatisticCsvStream::StatisticCsvStream(StatisticCsvStream&&) noexcept = default;
StatisticCsvStream& StatisticCsvStream::operator=(StatisticCsvStream&&) noexcept = default;

bool StatisticCsvStream::feed(std::string_view lines, const std::function<void(StatisticRow&)>& onRow) {
    if (m->failed) return false;
    if (m->fed == 0 && lines.starts_with("\xEF\xBB\xBF")) lines.remove_prefix(3);
    m->fed += lines.size();
    m->parser.setOnRow(onRow);
    m->failed = !parseLines(lines, m->parser, m->columns, m->haveHeader, m->lineNo, m->error);
    m->parser.setOnRow(kNoRows);
    return !m->failed;
}

bool StatisticCsvStream::ok(std::string& error) const {
    if (m->failed) {
        error = m->error;
        return false;
    }
    if (!m->haveHeader) {
        error = "statistic.csv: no header line";
        return false;
    }
    return true;
}

const std::vector<std::string>& StatisticCsvStream::columns() const { return m->columns; }

std::vector<StatisticCsvWarning> StatisticCsvStream::warnings() const {
    std::vector<StatisticCsvWarning> out = m->warnings;
    if (m->parser.suppressed())
        out.push_back({0, std::to_string(m->parser.suppressed()) + " more malformed rows not listed",
                       WarningSeverity::Unreadable});
    return out;
}

std::uint32_t StatisticCsvStream::lines() const { return m->lineNo; }

namespace {
bool parseOwned(std::shared_ptr<const std::string> text, StatisticCsvResult& out, std::string& error) {
    out = StatisticCsvResult{};
    out.text = std::move(text);
    return parseStatisticCsv(
        *out.text, [&](StatisticRow& r) { out.rows.push_back(r); }, out.columns, out.warnings, error);
}
}  // namespace

bool parseStatisticCsv(std::string_view text, StatisticCsvResult& out, std::string& error) {
    return parseOwned(std::make_shared<const std::string>(text), out, error);
}

std::size_t countLines(std::string_view text) {
    std::size_t n = 0, i = 0;
#if defined(__SSE2__)
    // Byte counters (0 - matches) summed every 255 blocks; no popcount (not in baseline x86-64).
    const __m128i nl = _mm_set1_epi8('\n'), zero = _mm_setzero_si128();
    while (i + 16 <= text.size()) {
        __m128i acc = zero;
        for (int k = 0; k < 255 && i + 16 <= text.size(); ++k, i += 16)
            acc = _mm_sub_epi8(acc,
                               _mm_cmpeq_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(text.data() + i)), nl));
        const __m128i sums = _mm_sad_epu8(acc, zero);
        n += std::size_t(_mm_cvtsi128_si32(sums)) + std::size_t(_mm_cvtsi128_si32(_mm_srli_si128(sums, 8)));
    }
#endif
    for (; i < text.size(); ++i) n += text[i] == '\n';
    return n;
}

bool readStatisticCsv(const std::string& path, StatisticCsvResult& out, std::string& error) {
    std::string text;
    if (!readFileText(path, text, error)) return false;
    if (!parseOwned(std::make_shared<const std::string>(std::move(text)), out, error)) {
        error = path + ": " + error;
        return false;
    }
    return true;
}

}  // namespace dl
