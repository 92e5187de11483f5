#pragma once
// Writing MindSpore statistic.csv text (docs/formats.md 1.6) in the two header eras:
//  * Ms16To22: the fixed 20-column header of 1.6.0-2.2.13; Max/Min/Avg over finite values only,
//    `null` when there is none; rows without a trailing comma.
//  * Ms23Plus: `...,Shape` + one column per statistic_category in the user's order; NaN/Inf take
//    part in Max/Min/Avg; every data row ends with a trailing ','.
// Numbers use std::ostream's default (%g, 6 significant digits) like MindSpore.
#include <cstdint>
#include <string>
#include <vector>

namespace dl {

enum class StatCsvStyle { Ms16To22, Ms23Plus };

struct StatCsvRow {
    std::string opType;
    std::string opName;
    std::uint64_t taskId = 0;
    std::uint64_t streamId = 0;
    std::int64_t timestampUs = 0;
    bool isOutput = true;
    std::uint32_t slot = 0;
    std::uint64_t dataSize = 0;       // bytes of the dumped payload
    std::string dataType;             // "float16", "bfloat16", "int32", ...
    std::vector<std::int64_t> shape;  // written as "(4,32)", scalar "()"
};

class StatisticCsvWriter {
public:
    // `categories` (Ms23Plus only) use MindSpore's config spellings: "max", "min", "avg", "count",
    // "negative zero count", "positive zero count", "nan count", "negative inf count",
    // "positive inf count", "zero count", "md5", "l2norm".
    explicit StatisticCsvWriter(StatCsvStyle style, std::vector<std::string> categories = {});

    bool valid(std::string& error) const;  // false when a category is unknown
    std::string header() const;            // without the '\n'
    // One data line without the '\n'. `values` are the tensor's elements as floats.
    std::string row(const StatCsvRow& meta, const std::vector<float>& values) const;

    static std::string formatValue(double v);  // %g, "inf", "-inf", "nan"

private:
    StatCsvStyle m_style;
    std::vector<std::string> m_categories;
};

}  // namespace dl
