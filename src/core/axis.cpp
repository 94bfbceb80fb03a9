// Axis grammar: item (',' item)*, item := int | int ':' int [':' ('*'|'+') int].
#include "core/axis.hpp"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

#include "core/errors.hpp"
#include "core/text_split.hpp"

namespace ab {

namespace {

std::int64_t parse_int(const std::string& axis, const std::string& whole, const std::string& text) {
  std::string t = trim_text(text);
  if (t.empty()) throw UsageError(fmt::format("--{}: malformed value '{}' (empty number)", axis, whole));
  std::size_t i = 0;
  bool neg = false;
  if (t[0] == '-' || t[0] == '+') { neg = t[0] == '-'; i = 1; }
  if (i >= t.size()) throw UsageError(fmt::format("--{}: '{}' is not a number", axis, whole));
  std::int64_t v = 0;
  for (; i < t.size(); ++i) {
    if (!std::isdigit(static_cast<unsigned char>(t[i])))
      throw UsageError(fmt::format("--{}: '{}' is not a number", axis, whole));
    v = v * 10 + (t[i] - '0');
    if (v > (std::int64_t(1) << 40)) throw UsageError(fmt::format("--{}: '{}' is too large", axis, whole));
  }
  return neg ? -v : v;
}

}  // namespace

std::vector<std::int64_t> parse_axis(const std::string& axis, const std::string& text) {
  if (trim_text(text).empty()) throw UsageError(fmt::format("--{}: empty value", axis));
  std::vector<std::int64_t> values;
  for (const std::string& item_raw : split_text(text, ',')) {
    std::string item = trim_text(item_raw);
    if (item.empty()) throw UsageError(fmt::format("--{}: empty item in list '{}'", axis, text));
    std::vector<std::string> parts = split_text(item, ':');
    if (parts.size() == 1) {
      values.push_back(parse_int(axis, text, parts[0]));
    } else if (parts.size() == 2 || parts.size() == 3) {
      std::int64_t lo = parse_int(axis, text, parts[0]);
      std::int64_t hi = parse_int(axis, text, parts[1]);
      char op = '+';
      std::int64_t step = 1;
      if (parts.size() == 3) {
        std::string s = trim_text(parts[2]);
        if (s.size() < 2 || (s[0] != '*' && s[0] != '+'))
          throw UsageError(fmt::format("--{}: range step in '{}' must be '*N' or '+N'", axis, item));
        op = s[0];
        step = parse_int(axis, text, s.substr(1));
      }
      if (lo <= 0 || hi <= 0) throw UsageError(fmt::format("--{}: range '{}' must be positive", axis, item));
      if (lo > hi) throw UsageError(fmt::format("--{}: range '{}' is empty (start > end)", axis, item));
      if (op == '*' && step < 2) throw UsageError(fmt::format("--{}: geometric step in '{}' must be >= 2", axis, item));
      if (op == '+' && step < 1) throw UsageError(fmt::format("--{}: arithmetic step in '{}' must be >= 1", axis, item));
      for (std::int64_t v = lo;;) {
        values.push_back(v);
        if (values.size() > 100000) throw UsageError(fmt::format("--{}: range '{}' has too many values", axis, item));
        // The next value, or stop when it would pass hi (checked before computing it: no overflow).
        if (op == '*' ? v > hi / step : v > hi - step) break;
        v = op == '*' ? v * step : v + step;
      }
    } else {
      throw UsageError(fmt::format("--{}: malformed range '{}'", axis, item));
    }
  }
  for (std::int64_t v : values)
    if (v <= 0) throw UsageError(fmt::format("--{}: values must be positive, got {}", axis, v));
  std::vector<std::int64_t> sorted = values;  // a value twice would run the same problems twice
  std::sort(sorted.begin(), sorted.end());
  auto dup = std::adjacent_find(sorted.begin(), sorted.end());
  if (dup != sorted.end()) throw UsageError(fmt::format("--{}: {} is listed more than once in '{}'", axis, *dup, text));
  return values;
}

std::vector<std::string> split_list(const std::string& axis, const std::string& text) {
  std::vector<std::string> out;
  for (const std::string& s : split_text(text, ',')) {
    std::string t = trim_text(s);
    if (t.empty()) throw UsageError(fmt::format("--{}: empty item in '{}'", axis, text));
    if (std::find(out.begin(), out.end(), t) != out.end())
      throw UsageError(fmt::format("--{}: '{}' is listed more than once in '{}'", axis, t, text));
    out.push_back(t);
  }
  return out;
}

}  // namespace ab
