// Untrusted text in one-line messages: a short excerpt with every byte that is not printable ASCII escaped
// (\n, \t, \r, \xNN), and the last guard of the one-line rule for a whole message (control characters
// escaped, length capped), so that no input can make an error span lines or megabytes.
#pragma once
#include <cstddef>
#include <string>
#include <string_view>

namespace ab {

// At most `max_chars` characters of `text` (escapes count as what they print), "..." appended when cut.
std::string excerpt(std::string_view text, std::size_t max_chars = 48);
// `message` on one line: control characters escaped as in excerpt (other bytes kept, so UTF-8 names stay
// readable), cut to at most `max_bytes` bytes (not inside a UTF-8 character) with "..." when longer.
std::string one_line(std::string_view message, std::size_t max_bytes = 1024);

}  // namespace ab
