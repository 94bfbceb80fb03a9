// The one JSON file reader behind every input file (reports, caches, suite configs): a regular file (or a
// stream the user names, core/input_file.hpp) of at most kMaxJsonFileBytes, nested at most kMaxJsonDepth deep (checked before parsing, so that
// no recursion can run out of stack), exactly one document with nothing after it. Errors are one line.
#pragma once
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

namespace ab {

inline constexpr int kMaxJsonDepth = 64;
inline constexpr std::int64_t kMaxJsonFileBytes = std::int64_t(1) << 30;

// Throws UsageError "'PATH': why" (cannot open, a directory, too large, nested too deep, malformed at
// line L, column C, or trailing text after the document).
nlohmann::json read_json_file(const std::string& path);
// The file's bytes with the same file checks (core/input_file.hpp, at most kMaxJsonFileBytes).
std::string read_text_file(const std::string& path);
// The same checks on text already read; `origin` names it in errors.
nlohmann::json parse_json_text(const std::string& text, const std::string& origin);
// Deepest nesting of arrays and objects in `text` (strings skipped), stopping early once over `limit`.
int json_nesting_depth(const std::string& text, int limit);

}  // namespace ab
