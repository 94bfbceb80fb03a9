// Text that came from outside attnbench (a plugin's strings, a child process's message) made safe for a
// one-line message: control characters and bytes that are not UTF-8 escaped, the length bounded.
#pragma once
#include <cstddef>
#include <string>
#include <string_view>

namespace ab {

// `s` with every control character (C0, DEL, C1) written as \n, \t, \r or \xNN, every byte that is not part
// of a well-formed UTF-8 sequence as \xNN (a backslash stays as it is: escaped text escapes to itself),
// cut (at a character) once the result would pass `max_bytes`, which then ends in "...". Never contains a
// line break.
std::string escaped_text(std::string_view s, std::size_t max_bytes);
// A short quoted excerpt for a message: '<escaped_text(s, 40)>'.
std::string quoted_excerpt(std::string_view s);
// True when `s` is well-formed UTF-8 without control characters (C0, DEL, C1): text that fits in one line.
bool is_one_line_text(std::string_view s);

}  // namespace ab
