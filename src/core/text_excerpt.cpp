// Escaping and cutting untrusted text for messages.
#include "core/text_excerpt.hpp"

#include <fmt/format.h>

namespace ab {

namespace {

// How byte `c` prints: itself, or an escape. `ascii_only`: bytes >= 0x80 are escaped too.
std::string printed(unsigned char c, bool ascii_only) {
  switch (c) {
    case '\n': return "\\n";
    case '\t': return "\\t";
    case '\r': return "\\r";
    default: break;
  }
  if (c < 0x20 || c == 0x7f || (ascii_only && c >= 0x80)) return fmt::format("\\x{:02x}", c);
  return std::string(1, static_cast<char>(c));
}

}  // namespace

std::string excerpt(std::string_view text, std::size_t max_chars) {
  std::string out;
  std::size_t shown = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    std::string p = printed(static_cast<unsigned char>(text[i]), true);
    if (shown + p.size() > max_chars) return out + "...";
    out += p;
    shown += p.size();
  }
  return out;
}

std::string one_line(std::string_view message, std::size_t max_bytes) {
  std::string out;
  for (unsigned char c : message) {
    std::string p = printed(c, false);
    if (out.size() + p.size() > max_bytes) {
      // Never end inside a UTF-8 character: drop continuation bytes and the lead byte they follow.
      while (!out.empty() && (static_cast<unsigned char>(out.back()) & 0xc0) == 0x80) out.pop_back();
      if (!out.empty() && static_cast<unsigned char>(out.back()) >= 0xc0) out.pop_back();
      return out + "...";
    }
    out += p;
  }
  return out;
}

}  // namespace ab
