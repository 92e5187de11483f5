#include "core/formats/mindspore/statistic_csv_writer.h"

#include <cmath>
#include <cstdio>
#include <limits>
#include <utility>

namespace dl {

namespace {

struct CategoryColumn {
    const char* category;
    const char* column;
};
constexpr CategoryColumn kCategories[] = {
    {"max", "Max Value"},
    {"min", "Min Value"},
    {"avg", "Avg Value"},
    {"count", "Count"},
    {"negative zero count", "Negative Zero Count"},
    {"positive zero count", "Positive Zero Count"},
    {"nan count", "NaN Count"},
    {"negative inf count", "Negative Inf Count"},
    {"positive inf count", "Positive Inf Count"},
    {"zero count", "Zero Count"},
    {"md5", "MD5"},
    {"l2norm", "L2Norm Value"},
};

const char* columnFor(const std::string& category) {
    for (const auto& c : kCategories)
        if (category == c.category) return c.column;
    return nullptr;
}

constexpr const char* kCommonHeader = "Op Type,Op Name,Task ID,Stream ID,Timestamp,IO,Slot,Data Size,Data Type,Shape";

// What TensorSummary computes; `finite*` exclude NaN/Inf (<=2.2), `all*` include them (2.3+).
struct Summary {
    double finiteMax = -std::numeric_limits<double>::infinity();
    double finiteMin = std::numeric_limits<double>::infinity();
    double finiteSum = 0;
    std::uint64_t finiteCount = 0;
    double allMax = -std::numeric_limits<double>::infinity();
    double allMin = std::numeric_limits<double>::infinity();
    double allSum = 0, sumSq = 0;
    bool anyNan = false;
    std::uint64_t neg = 0, pos = 0, negFinite = 0, posFinite = 0, zero = 0, nan = 0, negInf = 0, posInf = 0;
};

Summary summarize(const std::vector<float>& values) {
    Summary s;
    for (float f : values) {
        const double v = f;
        if (std::isnan(v)) {
            ++s.nan;
            s.anyNan = true;
            continue;
        }
        s.allMax = std::max(s.allMax, v);
        s.allMin = std::min(s.allMin, v);
        s.allSum += v;
        s.sumSq += v * v;
        if (v < 0) ++s.neg;
        if (v > 0) ++s.pos;
        if (v == 0) ++s.zero;
        if (std::isinf(v)) {
            ++(v > 0 ? s.posInf : s.negInf);
            continue;
        }
        if (v < 0) ++s.negFinite;
        if (v > 0) ++s.posFinite;
        s.finiteMax = std::max(s.finiteMax, v);
        s.finiteMin = std::min(s.finiteMin, v);
        s.finiteSum += v;
        ++s.finiteCount;
    }
    return s;
}

std::string shapeText(const std::vector<std::int64_t>& shape) {
    std::string s = "\"(";
    for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? "," : "") + std::to_string(shape[i]);
    return s + ")\"";
}

}  // namespace

StatisticCsvWriter::StatisticCsvWriter(StatCsvStyle style, std::vector<std::string> categories)
    : m_style(style), m_categories(std::move(categories)) {
    if (m_style == StatCsvStyle::Ms23Plus && m_categories.empty()) m_categories = {"max", "min", "l2norm"};
}

bool StatisticCsvWriter::valid(std::string& error) const {
    if (m_style != StatCsvStyle::Ms23Plus) return true;
    for (const auto& c : m_categories)
        if (!columnFor(c)) {
            error = "unknown statistic_category '" + c + "'";
            return false;
        }
    return true;
}

std::string StatisticCsvWriter::header() const {
    std::string h = kCommonHeader;
    if (m_style == StatCsvStyle::Ms16To22)
        return h +
            ",Max Value,Min Value,Avg Value,Count,Negative Zero Count,Positive Zero Count,"
            "NaN Count,Negative Inf Count,Positive Inf Count,Zero Count";
    for (const auto& c : m_categories) {
        const char* col = columnFor(c);
        h += ",";
        h += col ? col : c.c_str();
    }
    return h;
}

std::string StatisticCsvWriter::formatValue(double v) {
    if (std::isnan(v)) return "nan";
    char buf[64];
    std::snprintf(buf, sizeof buf, "%g", v);
    return buf;
}

std::string StatisticCsvWriter::row(const StatCsvRow& m, const std::vector<float>& values) const {
    std::string r = m.opType + "," + m.opName + "," + std::to_string(m.taskId) + "," + std::to_string(m.streamId) +
        "," + std::to_string(m.timestampUs) + "," + (m.isOutput ? "output" : "input") + "," + std::to_string(m.slot) +
        "," + std::to_string(m.dataSize) + "," + m.dataType + "," + shapeText(m.shape);
    const Summary s = summarize(values);
    const auto n = std::to_string(values.size());
    if (m_style == StatCsvStyle::Ms16To22) {
        const bool none = s.finiteCount == 0;  // every element NaN/Inf, or empty
        r += "," + (none ? std::string("null") : formatValue(s.finiteMax));
        r += "," + (none ? std::string("null") : formatValue(s.finiteMin));
        r += "," + (none ? std::string("null") : formatValue(s.finiteSum / double(s.finiteCount)));
        r += "," + n + "," + std::to_string(s.negFinite) + "," + std::to_string(s.posFinite) + "," +
            std::to_string(s.nan) + "," + std::to_string(s.negInf) + "," + std::to_string(s.posInf) + "," +
            std::to_string(s.zero);
        return r;
    }
    const bool empty = values.empty();
    const double nanV = std::numeric_limits<double>::quiet_NaN();
    for (const auto& c : m_categories) {
        std::string cell;
        if (c == "max")
            cell = empty ? "null" : formatValue(s.anyNan ? nanV : s.allMax);
        else if (c == "min")
            cell = empty ? "null" : formatValue(s.anyNan ? nanV : s.allMin);
        else if (c == "avg")
            cell = empty ? "null" : formatValue(s.anyNan ? nanV : s.allSum / double(values.size()));
        else if (c == "count")
            cell = n;
        else if (c == "negative zero count")
            cell = std::to_string(s.neg);
        else if (c == "positive zero count")
            cell = std::to_string(s.pos);
        else if (c == "nan count")
            cell = std::to_string(s.nan);
        else if (c == "negative inf count")
            cell = std::to_string(s.negInf);
        else if (c == "positive inf count")
            cell = std::to_string(s.posInf);
        else if (c == "zero count")
            cell = std::to_string(s.zero);
        else if (c == "l2norm")
            cell = formatValue(s.anyNan ? nanV : std::sqrt(s.sumSq));
        // md5: left empty (allowed by the writer when not computed).
        r += "," + cell;
    }
    return r + ",";  // 2.3+ closes every data row with an empty field
}

}  // namespace dl
