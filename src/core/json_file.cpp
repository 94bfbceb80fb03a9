// Bounded, strict JSON file reading.
#include "core/json_file.hpp"

#include <cstring>

#include <fmt/format.h>

#include "core/errors.hpp"
#include "core/input_file.hpp"

namespace ab {

int json_nesting_depth(const std::string& text, int limit) {
  int depth = 0, deepest = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (in_string) {
      if (c == '\\') ++i;
      else if (c == '"') in_string = false;
      continue;
    }
    if (c == '"') in_string = true;
    else if (c == '[' || c == '{') {
      if (++depth > deepest) deepest = depth;
      if (deepest > limit) return deepest;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return deepest;
}

nlohmann::json parse_json_text(const std::string& text, const std::string& origin) {
  if (json_nesting_depth(text, kMaxJsonDepth) > kMaxJsonDepth)
    throw UsageError(fmt::format("{}: JSON nested more than {} levels deep; refused", origin, kMaxJsonDepth));
  try {
    return nlohmann::json::parse(text);  // strict: anything but whitespace after the document is an error
  } catch (const nlohmann::json::parse_error& e) {
    std::size_t at = e.byte > 0 ? e.byte - 1 : 0;
    if (at > text.size()) at = text.size();
    std::size_t line = 1, col = 1;
    for (std::size_t i = 0; i < at; ++i) {
      if (text[i] == '\n') { ++line; col = 1; }
      else ++col;
    }
    // The library reports "syntax error ... expected end of input" for text after a complete document.
    bool trailing = std::strstr(e.what(), "expected end of input") != nullptr;
    throw UsageError(fmt::format("{}: malformed JSON at line {}, column {}{}", origin, line, col,
                                 trailing ? " (text after the document)" : ""));
  } catch (const nlohmann::json::exception&) {  // out_of_range: a number such as 1e500 that no double holds
    throw UsageError(fmt::format("{}: malformed JSON (a number out of range)", origin));
  }
}

nlohmann::json read_json_file(const std::string& path) { return parse_json_text(read_text_file(path), quoted_path(path)); }

std::string read_text_file(const std::string& path) { return read_input_file(path, kMaxJsonFileBytes); }

}  // namespace ab
