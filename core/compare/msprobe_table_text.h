#pragma once
// The Python text rules of msprobe's compare table cells (msprobe_table.h): str() and repr() of
// the values pandas holds, msprobe's format_value rounding, and RFC 4180 CSV quoting.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace dl::msprobe_text {

// Quotes a CSV cell when it holds a comma, quote or line break.
std::string csvCell(const std::string& s);
// Python's float() of a cell ("nan", "inf", numbers); nullopt when it is not a number.
std::optional<double> pyFloat(const std::string& s);
// msprobe's format_value: float('{:.12f}'.format(v)), as Python prints it.
std::string formatValue(double v);
// Cosine as msprobe shows it: format_value, then 6 decimals above 0.9999.
std::string cosineText(double cos);
// Python's repr() of a str: single quotes unless it holds ' and no ", \n \t \\ escaped.
std::string pyRepr(std::string_view s);
// Python's str() of a list of str: "['a', 'b']".
std::string pyList(const std::vector<std::string>& items);
// json.dumps of a list of str: "[\"a\", \"b\"]" (msprobe 26.x Err_message).
std::string jsonList(const std::vector<std::string>& items);

}  // namespace dl::msprobe_text
