// Escaping outside text for one-line messages (core/text_excerpt.hpp).
#include "core/text_excerpt.hpp"

#include <cstdint>

#include <fmt/format.h>

namespace ab {

namespace {

// The length of the well-formed UTF-8 sequence at s[i] and its code point, or 0 when the byte there starts
// none (a stray continuation byte, an overlong form, a surrogate, past U+10FFFF or cut short).
std::size_t utf8_sequence(std::string_view s, std::size_t i, std::uint32_t* cp) {
  const auto b = [&](std::size_t k) { return static_cast<unsigned char>(s[i + k]); };
  const unsigned char c = b(0);
  std::size_t n = 0;
  std::uint32_t v = 0, min = 0;
  if (c < 0x80) { *cp = c; return 1; }
  if (c >= 0xC2 && c <= 0xDF) { n = 2; v = c & 0x1Fu; min = 0x80; }
  else if (c >= 0xE0 && c <= 0xEF) { n = 3; v = c & 0x0Fu; min = 0x800; }
  else if (c >= 0xF0 && c <= 0xF4) { n = 4; v = c & 0x07u; min = 0x10000; }
  else return 0;
  if (i + n > s.size()) return 0;
  for (std::size_t k = 1; k < n; ++k) {
    if ((b(k) & 0xC0u) != 0x80u) return 0;
    v = (v << 6) | (b(k) & 0x3Fu);
  }
  if (v < min || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF)) return 0;
  *cp = v;
  return n;
}

bool is_control(std::uint32_t cp) { return cp < 0x20 || (cp >= 0x7F && cp <= 0x9F); }

}  // namespace

std::string escaped_text(std::string_view s, std::size_t max_bytes) {
  std::string out;
  for (std::size_t i = 0; i < s.size();) {
    std::uint32_t cp = 0;
    std::size_t n = utf8_sequence(s, i, &cp);
    std::string piece;
    if (n == 0) piece = fmt::format("\\x{:02x}", static_cast<unsigned char>(s[i]));
    else if (cp == '\n') piece = "\\n";
    else if (cp == '\t') piece = "\\t";
    else if (cp == '\r') piece = "\\r";
    else if (is_control(cp)) {
      for (std::size_t k = 0; k < n; ++k) piece += fmt::format("\\x{:02x}", static_cast<unsigned char>(s[i + k]));
    } else piece = std::string(s.substr(i, n));
    if (out.size() + piece.size() > max_bytes) return out + "...";
    out += piece;
    i += n == 0 ? 1 : n;
  }
  return out;
}

std::string quoted_excerpt(std::string_view s) { return "'" + escaped_text(s, 40) + "'"; }

bool is_one_line_text(std::string_view s) {
  for (std::size_t i = 0; i < s.size();) {
    std::uint32_t cp = 0;
    std::size_t n = utf8_sequence(s, i, &cp);
    if (n == 0 || is_control(cp)) return false;
    i += n;
  }
  return true;
}

}  // namespace ab
